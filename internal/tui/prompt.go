package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
)

// promptMsg brings a permission prompt to the UI; the answer goes back on
// reply, which has room for it, so the model never blocks.
type promptMsg struct {
	id     int
	prompt permission.Prompt
	reply  chan<- permission.Reply
}

// promptGoneMsg withdraws a prompt whose call was cancelled.
type promptGoneMsg struct{ id int }

// prompter is the permission.Prompter the UI gives the runtime: each
// prompt becomes a message to the model, and the agent's goroutine waits
// for the answer, for its context, or for the UI to close.
type prompter struct {
	send func(tea.Msg)
	done <-chan struct{}

	mu   sync.Mutex
	next int
}

var _ permission.Prompter = (*prompter)(nil)

// errUIClosed is returned for prompts the UI can no longer show.
var errUIClosed = errors.New("the terminal UI has closed")

// Prompt shows p in the UI and waits for the user's answer.
func (b *prompter) Prompt(ctx context.Context, p permission.Prompt) (permission.Reply, error) {
	b.mu.Lock()
	b.next++
	id, send := b.next, b.send
	b.mu.Unlock()
	reply := make(chan permission.Reply, 1)
	select {
	case <-b.done:
		return permission.Reply{Choice: permission.ChoiceDeny, Message: prompts.PromptUnanswered()}, errUIClosed
	default:
	}
	send(promptMsg{id: id, prompt: p, reply: reply})
	select {
	case r := <-reply:
		return r, nil
	case <-ctx.Done():
		send(promptGoneMsg{id: id})
		return permission.Reply{}, ctx.Err()
	case <-b.done:
		return permission.Reply{Choice: permission.ChoiceDeny, Message: prompts.PromptUnanswered()}, errUIClosed
	}
}

// pendingPrompt is a prompt waiting in the UI's queue.
type pendingPrompt struct {
	id     int
	prompt permission.Prompt
	reply  chan<- permission.Reply
	// teammate is the asking agent's name in its team, from the tree
	// ("" for other agents).
	teammate string
}

func (p *pendingPrompt) agentID() string { return p.prompt.Request.AgentID }

// label names the agent asking: "main", "TYPE ID", or "@NAME (TYPE ID)"
// for a teammate.
func (p *pendingPrompt) label() string {
	r := p.prompt.Request
	if r.AgentID == "" {
		return "main"
	}
	id := strings.TrimSpace(r.AgentType + " " + r.AgentID)
	if p.teammate != "" {
		return "@" + p.teammate + " (" + id + ")"
	}
	return id
}

// promptModal is the state of the prompt on screen: the highlighted
// choice, and the reason being typed for a denial.
type promptModal struct {
	sel       int
	reasoning bool
	reason    string
}

// grant is an allow rule added with "always for this session".
type grant struct {
	rule  string
	agent string
}

// permissionDialog is the permission prompt over the editor: the prompts
// waiting for the user (the first on screen, the others queued behind
// it), the choice highlighted, the reason typed for a denial, and the
// rules the user allowed for the rest of the session.
type permissionDialog struct {
	st      *styles
	prompts []*pendingPrompt
	modal   promptModal
	granted []grant
}

// nameTeammates gives the waiting prompts of teammates their names from
// the tree, which may learn of a teammate after its first prompt came.
func (d *permissionDialog) nameTeammates(tree *Tree) {
	for _, p := range d.prompts {
		if p.teammate != "" || p.agentID() == "" {
			continue
		}
		if n := tree.Get(p.agentID()); n != nil {
			p.teammate = n.Teammate
		}
	}
}

// open reports whether a prompt is on screen.
func (d *permissionDialog) open() bool { return len(d.prompts) > 0 }

// add queues a prompt; its agent waits in the tree.
func (d *permissionDialog) add(msg promptMsg, tree *Tree) {
	p := &pendingPrompt{id: msg.id, prompt: msg.prompt, reply: msg.reply}
	d.prompts = append(d.prompts, p)
	d.nameTeammates(tree)
	tree.Waiting(p.agentID(), 1)
	if len(d.prompts) == 1 {
		d.modal = promptModal{}
	}
}

// drop removes a prompt from the queue and returns it (nil when it is
// not there).
func (d *permissionDialog) drop(id int, tree *Tree) *pendingPrompt {
	for i, p := range d.prompts {
		if p.id != id {
			continue
		}
		tree.Waiting(p.agentID(), -1)
		d.prompts = append(d.prompts[:i], d.prompts[i+1:]...)
		if i == 0 {
			d.modal = promptModal{}
		}
		return p
	}
	return nil
}

// answer replies to the prompt on screen; it returns what the main
// conversation should say of it ("" for nothing).
func (d *permissionDialog) answer(choice permission.Choice, reason string, tree *Tree) (info string) {
	if len(d.prompts) == 0 {
		return ""
	}
	p := d.prompts[0]
	r := permission.Reply{Choice: choice}
	switch choice {
	case permission.ChoiceDeny:
		r.Message = prompts.UserDenied(reason)
	case permission.ChoiceAllowSession:
		if p.prompt.HasSuggestion {
			rule := p.prompt.Suggested.String()
			d.granted = append(d.granted, grant{rule: rule, agent: p.label()})
			info = fmt.Sprintf("Added allow rule %s for the rest of this session (%s).", rule, p.label())
		} else {
			info = fmt.Sprintf("Allowed this %s call; no rule can cover calls like it.", p.prompt.Request.Tool)
		}
	}
	p.reply <- r
	d.drop(p.id, tree)
	return info
}

// paste adds pasted text to the reason being typed; it reports whether
// one was.
func (d *permissionDialog) paste(text string) bool {
	if len(d.prompts) == 0 || !d.modal.reasoning {
		return false
	}
	d.modal.reason += oneLine(text)
	return true
}

// key handles a key while a prompt is on screen; it returns what the
// main conversation should say of an answer, and expand for Ctrl+O
// (show the whole input, and every tool result).
func (d *permissionDialog) key(k tea.KeyPressMsg, tree *Tree) (info string, expand bool) {
	md := &d.modal
	if md.reasoning {
		switch k.String() {
		case "enter":
			return d.answer(permission.ChoiceDeny, md.reason, tree), false
		case "esc":
			md.reasoning, md.reason = false, ""
		case "backspace":
			if r := []rune(md.reason); len(r) > 0 {
				md.reason = string(r[:len(r)-1])
			}
		case "space":
			md.reason += " "
		default:
			if k.Text != "" {
				md.reason += k.Text
			}
		}
		return "", false
	}
	switch k.String() {
	case "up", "k", "shift+tab":
		md.sel = (md.sel + 2) % 3
	case "down", "j", "tab":
		md.sel = (md.sel + 1) % 3
	case "1", "y":
		return d.answer(permission.ChoiceAllowOnce, "", tree), false
	case "2", "a":
		return d.answer(permission.ChoiceAllowSession, "", tree), false
	case "3", "n":
		md.sel, md.reasoning = 2, true
	case "esc":
		return d.answer(permission.ChoiceDeny, "", tree), false
	case "enter":
		switch md.sel {
		case 0:
			return d.answer(permission.ChoiceAllowOnce, "", tree), false
		case 1:
			return d.answer(permission.ChoiceAllowSession, "", tree), false
		default:
			md.reasoning = true
		}
	case "ctrl+o":
		return "", true
	}
	return "", false
}

// waiting reports whether a permission prompt for the call is open.
func (d *permissionDialog) waiting(callID string) bool {
	if callID == "" {
		return false
	}
	for _, p := range d.prompts {
		if p.prompt.Request.ToolUseID == callID {
			return true
		}
	}
	return false
}

// view renders the prompt on screen as a box of the given width;
// bodyRows bounds the lines of the call's input, unless expanded.
func (d *permissionDialog) view(width, bodyRows int, cwd string, expanded bool) string {
	st := d.st
	p := d.prompts[0]
	inner := max(width-4, 20)
	req := p.prompt.Request
	var lines []string
	head := "Permission needed · " + p.label()
	count := ""
	if n := len(d.prompts); n > 1 {
		count = fmt.Sprintf("1 of %d", n)
	}
	lines = append(lines, padBetween(st.title.Render(clip(head, inner-len(count)-1)), st.dim.Render(count), inner), "")
	body := callBody(*st, req.Tool, req.Input, cwd, inner)
	if len(body) > bodyRows && !expanded {
		more := len(body) - bodyRows + 1
		body = append(body[:bodyRows-1], st.dim.Render(fmt.Sprintf("… %d more lines (ctrl+o shows all)", more)))
	}
	lines = append(lines, body...)
	if why := strings.TrimSpace(p.prompt.Decision.Reason); why != "" {
		lines = append(lines, "")
		for _, l := range wrapLines("Why: "+why, inner) {
			lines = append(lines, st.dim.Render(l))
		}
	}
	lines = append(lines, "")
	always := "Yes, and allow calls like this for the rest of this session"
	if p.prompt.HasSuggestion {
		always = "Yes, and always allow " + p.prompt.Suggested.String() + " this session"
		if p.label() != "main" {
			always += " (this agent)"
		}
	}
	options := []string{"Yes, allow once", always, "No, and tell the agent what to do instead"}
	for i, o := range options {
		mark := "  "
		text := fmt.Sprintf("%d. %s", i+1, o)
		if i == d.modal.sel {
			mark = st.accent.Render("›") + " "
			text = st.bold.Render(text)
		}
		lines = append(lines, clip(mark+text, inner))
	}
	if d.modal.reasoning {
		lines = append(lines, "", clip("Reason for the agent: "+d.modal.reason+"█", inner), st.dim.Render("enter sends the denial · esc goes back"))
	} else {
		lines = append(lines, "", st.dim.Render(clip("enter chooses · 1 2 3 · esc denies · ctrl+o shows the whole input", inner)))
	}
	if len(d.prompts) > 1 {
		var rest []string
		for _, q := range d.prompts[1:] {
			rest = append(rest, q.prompt.Request.Tool+" from "+q.label())
		}
		lines = append(lines, st.warn.Render(clip("Also waiting: "+strings.Join(rest, " · "), inner)))
	}
	return box(st.modalEdge, lines, width)
}

// padBetween puts left and right at the two ends of width cells.
func padBetween(left, right string, width int) string {
	gap := width - cellWidth(left) - cellWidth(right)
	if gap < 1 {
		gap = 1
	}
	return left + strings.Repeat(" ", gap) + right
}
