package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/permission"
)

// slashCommand is a command typed at the prompt; Model.slash runs it.
type slashCommand struct {
	name, help string
}

// slashCommands lists the commands (a function: /help lists them too).
func slashCommands() []slashCommand {
	return []slashCommand{
		{"/agents", "list the agent definitions, their sources and what shadows what"},
		{"/model", "show the models of the session and its agents; /model NAME switches the main agent's"},
		{"/clear", "start a new conversation (the old one stays in its transcript)"},
		{"/compact", "summarise the conversation to free its context; /compact TEXT says what the summary must keep"},
		{"/resume", "pick a saved session of this project"},
		{"/permissions", "show the permission mode and the rules in force, with their sources"},
		{"/help", "show the keys and commands"},
		{"/exit", "leave cadre"},
	}
}

// slashMatches lists the commands whose name starts with the typed word.
func slashMatches(typed string) []slashCommand {
	word := strings.Fields(typed + " ")[0]
	var out []slashCommand
	for _, c := range slashCommands() {
		if strings.HasPrefix(c.name, word) {
			out = append(out, c)
		}
	}
	return out
}

// slash runs a typed slash command.
func (m *Model) slash(text string) tea.Cmd {
	name, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	// What a command prints goes to the main conversation: show it.
	m.pane.show("")
	switch name {
	case "/agents":
		if m.act.agents == nil {
			m.pane.main().addError("The agent definitions cannot be listed here.")
			return nil
		}
		return m.act.agents()
	case "/model":
		if arg == "" {
			m.pane.main().addInfo(modelsText(m.cfg.model, m.tree))
			return nil
		}
		if m.act.setModel == nil {
			m.pane.main().addError("The model cannot be switched here: start cadre with --model " + arg + ".")
			return nil
		}
		return m.act.setModel(arg)
	case "/clear", "/resume":
		if m.turn.running {
			m.bar.set("A turn is running: press Esc to interrupt it first.")
			return nil
		}
		if name == "/resume" && m.act.sessions == nil {
			m.pane.main().addError("Saved sessions cannot be listed: transcripts are off.")
			return nil
		}
		if name == "/resume" {
			return m.act.sessions()
		}
		if m.act.fresh == nil {
			m.resetConversation()
			return nil
		}
		return m.act.fresh()
	case "/compact":
		// The runtime takes it as a prompt (after a running turn).
		return m.send(text)
	case "/permissions":
		m.pane.main().addInfo(m.perm.rulesText(m.bar.mode, m.bar.modeCycle(), m.cfg.rules))
	case "/help":
		m.pane.main().addInfo(helpText())
	case "/exit":
		m.quitting = true
		return m.turn.interrupt(m.act.interrupt)
	default:
		m.pane.main().addError(unknownCommand(name))
	}
	return nil
}

// unknownCommand says that name is no command, and which one it may be.
func unknownCommand(name string) string {
	var names []string
	for _, c := range slashCommands() {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("Unknown command %s.", name)
	best, bestD := "", 3
	for _, n := range names {
		if d := textdist.Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		msg += " Did you mean " + best + "?"
	}
	return msg + " Type /help for the list."
}

// modelsText is /model's answer: the main agent's model, the
// sub-agents' by model, and how to switch.
func modelsText(model string, tree *Tree) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Main agent: %s\n", orText(model, "(unknown until the first turn)"))
	models := map[string][]string{}
	for _, r := range tree.Rows() {
		if n := r.Node; n.ID != "" && n.Model != "" {
			models[n.Model] = append(models[n.Model], n.Type+" "+shortID(n.ID))
		}
	}
	keys := make([]string, 0, len(models))
	for k := range models {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(models[k], ", "))
	}
	b.WriteString("/model NAME switches the main agent's model (an alias such as sonnet, opus, haiku, or a model id; default goes back).\n")
	b.WriteString("Sub-agents take the model of their Agent call, their definition, CADRE_SUBAGENT_MODEL or their parent.")
	return b.String()
}

// modelChanged shows the outcome of /model NAME.
func (m *Model) modelChanged(msg modelMsg) {
	if msg.err != nil {
		m.pane.main().addError(fmt.Sprintf("/model %s: %v", msg.asked, msg.err))
		return
	}
	m.cfg.model = msg.model
	if !m.turn.running {
		m.tree.Main().Model = msg.model
	}
	text := fmt.Sprintf("Main agent: %s from the next turn.", msg.model)
	if m.turn.running {
		text += " The running turn keeps its model."
	}
	m.pane.main().addInfo(text)
}

// rulesText is /permissions' answer: the mode and its cycle, the rules
// in force with their sources, and what the user allowed this session.
func (d *permissionDialog) rulesText(mode permission.Mode, cycle []permission.Mode, rules []permission.Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Mode: %s (shift+tab cycles %s)\n", mode, joinModes(cycle))
	if len(rules) == 0 && len(d.granted) == 0 {
		b.WriteString("No allow, ask or deny rules.")
	}
	for _, beh := range []permission.Behavior{permission.Deny, permission.Ask, permission.Allow} {
		for _, r := range rules {
			if r.Behavior == beh {
				fmt.Fprintf(&b, "%-5s\t%s\t%s\n", beh, r.String(), orText(r.Source, "(no source)"))
			}
		}
	}
	for _, g := range d.granted {
		fmt.Fprintf(&b, "allow\t%s\tthis session, %s\n", g.rule, g.agent)
	}
	return strings.TrimRight(b.String(), "\n")
}

func joinModes(ms []permission.Mode) string {
	s := make([]string, len(ms))
	for i, x := range ms {
		s[i] = string(x)
	}
	return strings.Join(s, " → ")
}

// helpText is /help's answer: the keys and the commands.
func helpText() string {
	var b strings.Builder
	b.WriteString("Keys\n")
	for _, k := range keyHelp() {
		fmt.Fprintf(&b, "  %-16s %s\n", k[0], k[1])
	}
	b.WriteString("Commands\n")
	for _, c := range slashCommands() {
		fmt.Fprintf(&b, "  %-16s %s\n", c.name, c.help)
	}
	return strings.TrimRight(b.String(), "\n")
}

// keyHelp lists the key bindings, for /help and the README.
func keyHelp() [][2]string {
	return [][2]string{
		{"enter", "send the prompt (queued while a turn runs)"},
		{"alt+enter ctrl+j", "new line (also shift+enter, or \\ then enter)"},
		{"↑ ↓", "earlier prompts"},
		{"esc", "interrupt the running turn (first it leaves an agent's view or the tree)"},
		{"shift+tab", "cycle the permission mode: default, acceptEdits, plan"},
		{"tab", "move between the prompt and the agent tree"},
		{"↑ ↓ enter", "in the tree: select an agent, open its conversation"},
		{"x", "in the tree: stop the selected agent (asks first)"},
		{"c", "in the tree: clear finished agents"},
		{"ctrl+b", "move the selected (or only) foreground agent to the background"},
		{"ctrl+o", "expand or collapse tool results"},
		{"pgup pgdn", "scroll the conversation (the wheel too, with --mouse)"},
		{"ctrl+c ctrl+c", "quit (once interrupts or clears the prompt)"},
		{"ctrl+d", "quit, on an empty prompt"},
	}
}

// resetConversation forgets the conversation and the tree (after /clear
// or when another session opens).
func (m *Model) resetConversation() {
	m.pane.reset()
	m.tree.Reset()
	m.tree.Main().Model = m.cfg.model
	m.panel.sel, m.turn.tokens = 0, 0
}
