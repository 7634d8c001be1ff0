package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/permission"
)

// slashCommand is a command typed at the prompt.
type slashCommand struct {
	name, help string
	run        func(m *Model, arg string) tea.Cmd
}

// slashCommands lists the commands (a function: /help lists them too).
func slashCommands() []slashCommand {
	return []slashCommand{
		{"/agents", "list the agent definitions, their sources and what shadows what", (*Model).cmdAgents},
		{"/model", "show the models of the session and its agents; /model NAME switches the main agent's", (*Model).cmdModel},
		{"/clear", "start a new conversation (the old one stays in its transcript)", (*Model).cmdClear},
		{"/resume", "pick a saved session of this project", (*Model).cmdResume},
		{"/permissions", "show the permission mode and the rules in force, with their sources", (*Model).cmdPermissions},
		{"/help", "show the keys and commands", (*Model).cmdHelp},
		{"/exit", "leave cadre", (*Model).cmdExit},
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
	// What a command prints goes to the main conversation: show it.
	m.pane.show("")
	for _, c := range slashCommands() {
		if c.name == name {
			return c.run(m, strings.TrimSpace(arg))
		}
	}
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
	m.pane.main().addError(msg + " Type /help for the list.")
	return nil
}

func (m *Model) cmdAgents(string) tea.Cmd {
	if m.act.agents == nil {
		m.pane.main().addError("The agent definitions cannot be listed here.")
		return nil
	}
	return m.act.agents()
}

func (m *Model) cmdModel(arg string) tea.Cmd {
	if arg != "" {
		if m.act.setModel == nil {
			m.pane.main().addError("The model cannot be switched here: start cadre with --model " + arg + ".")
			return nil
		}
		return m.act.setModel(arg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Main agent: %s\n", orText(m.cfg.model, "(unknown until the first turn)"))
	models := map[string][]string{}
	for _, r := range m.tree.Rows() {
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
	m.pane.main().addInfo(b.String())
	return nil
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

func (m *Model) cmdClear(string) tea.Cmd {
	if m.turn.running {
		m.bar.set("A turn is running: press Esc to interrupt it first.")
		return nil
	}
	if m.act.fresh == nil {
		m.resetConversation()
		return nil
	}
	return m.act.fresh()
}

func (m *Model) cmdResume(string) tea.Cmd {
	if m.turn.running {
		m.bar.set("A turn is running: press Esc to interrupt it first.")
		return nil
	}
	if m.act.sessions == nil {
		m.pane.main().addError("Saved sessions cannot be listed: transcripts are off.")
		return nil
	}
	return m.act.sessions()
}

func (m *Model) cmdPermissions(string) tea.Cmd {
	var b strings.Builder
	fmt.Fprintf(&b, "Mode: %s (shift+tab cycles %s)\n", m.bar.mode, joinModes(m.bar.modeCycle()))
	if len(m.cfg.rules) == 0 && len(m.perm.granted) == 0 {
		b.WriteString("No allow, ask or deny rules.")
	}
	for _, beh := range []permission.Behavior{permission.Deny, permission.Ask, permission.Allow} {
		for _, r := range m.cfg.rules {
			if r.Behavior == beh {
				fmt.Fprintf(&b, "%-5s\t%s\t%s\n", beh, r.String(), orText(r.Source, "(no source)"))
			}
		}
	}
	for _, g := range m.perm.granted {
		fmt.Fprintf(&b, "allow\t%s\tthis session, %s\n", g.rule, g.agent)
	}
	m.pane.main().addInfo(strings.TrimRight(b.String(), "\n"))
	return nil
}

func joinModes(ms []permission.Mode) string {
	s := make([]string, len(ms))
	for i, x := range ms {
		s[i] = string(x)
	}
	return strings.Join(s, " → ")
}

func (m *Model) cmdHelp(string) tea.Cmd {
	var b strings.Builder
	b.WriteString("Keys\n")
	for _, k := range keyHelp() {
		fmt.Fprintf(&b, "  %-16s %s\n", k[0], k[1])
	}
	b.WriteString("Commands\n")
	for _, c := range slashCommands() {
		fmt.Fprintf(&b, "  %-16s %s\n", c.name, c.help)
	}
	m.pane.main().addInfo(strings.TrimRight(b.String(), "\n"))
	return nil
}

func (m *Model) cmdExit(string) tea.Cmd {
	m.quitting = true
	return m.interrupt()
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
