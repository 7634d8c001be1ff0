package permission

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/tool"
)

// Choice is a person's answer to a permission prompt.
type Choice int

// The answers a prompt can get.
const (
	// ChoiceDeny refuses the call.
	ChoiceDeny Choice = iota
	// ChoiceAllowOnce runs this call only.
	ChoiceAllowOnce
	// ChoiceAllowSession runs it and adds the suggested allow rule for
	// the rest of the session.
	ChoiceAllowSession
)

// Prompt is what a Prompter shows.
type Prompt struct {
	Request  Request
	Decision Decision
	// Suggested is the allow rule "always for this session" would add.
	Suggested     Rule
	HasSuggestion bool
	// Label names the agent asking when it is not the main one.
	Label string
}

// Reply is a Prompter's answer.
type Reply struct {
	Choice Choice
	// Message tells the model why a call was denied.
	Message string
	// AsGiven marks a Message in the answerer's own words (a program's
	// canUseTool, a permission-prompt tool, a hook): the model reads it
	// exactly, not inside cadre's denial sentence.
	AsGiven bool
	// UpdatedInput, when set on an allow, is the input the call runs with
	// instead of the model's (a program's permission callback may rewrite
	// it).
	UpdatedInput json.RawMessage
	// Rules, when set with ChoiceAllowSession, are the allow rules granted
	// for the session instead of the suggested one.
	Rules []Rule
}

// Prompter asks someone whether a call may run.
type Prompter interface {
	Prompt(ctx context.Context, p Prompt) (Reply, error)
}

// Answerer answers a prompt without asking anyone, or reports that it has
// no answer (ok false). Claude Code's PermissionRequest hooks are one: a
// Session consults its Answerer for a call of a background agent that
// cannot show a prompt, before denying it (S-7.5).
type Answerer interface {
	Answer(ctx context.Context, p Prompt) (reply Reply, ok bool, err error)
}

// NoPrompter is the prompter of a headless run: nobody can answer, so every
// prompt is a denial that tells the model why.
type NoPrompter struct{}

// Prompt denies.
func (NoPrompter) Prompt(context.Context, Prompt) (Reply, error) {
	return Reply{Choice: ChoiceDeny, Message: "This run is headless: no one can approve permission prompts, so the call was denied."}, nil
}

// AutoDenyPrompter is the prompter of a background agent (S-7.5): it
// denies every prompt.
type AutoDenyPrompter struct{}

// Prompt denies.
func (AutoDenyPrompter) Prompt(context.Context, Prompt) (Reply, error) {
	return Reply{Choice: ChoiceDeny, Message: "This agent runs in the background, where no one can answer a permission prompt, so the call was denied automatically."}, nil
}

// BubblePrompter forwards a sub-agent's prompts to the root session's
// prompter, labelled with the agent.
type BubblePrompter struct {
	Parent Prompter
}

// Prompt labels the prompt with the agent and forwards it.
func (b BubblePrompter) Prompt(ctx context.Context, p Prompt) (Reply, error) {
	if b.Parent == nil {
		return NoPrompter{}.Prompt(ctx, p)
	}
	if p.Label == "" {
		p.Label = AgentLabel(p.Request.AgentType, p.Request.AgentID)
	}
	return b.Parent.Prompt(ctx, p)
}

// AgentLabel renders "agent TYPE (ID)" for prompts; "" for the main agent.
func AgentLabel(agentType, agentID string) string {
	switch {
	case agentType != "" && agentID != "":
		return fmt.Sprintf("agent %s (%s)", agentType, agentID)
	case agentID != "":
		return "agent " + agentID
	case agentType != "":
		return "agent " + agentType
	}
	return ""
}

// TerminalPrompter asks on a terminal: allow once, always for this
// session (showing the rule it adds), or deny. Prompts from concurrent
// agents are shown one at a time.
type TerminalPrompter struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

// NewTerminalPrompter reads answers from in and writes prompts to out.
func NewTerminalPrompter(in io.Reader, out io.Writer) *TerminalPrompter {
	return &TerminalPrompter{in: bufio.NewReader(in), out: out}
}

// Prompt shows the call and reads a choice. Reading blocks until a line
// arrives; end of input denies.
func (t *TerminalPrompter) Prompt(ctx context.Context, p Prompt) (Reply, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	head := "Permission needed"
	if p.Label != "" {
		head += " for " + p.Label
	}
	fmt.Fprintf(t.out, "%s: %s\n  %s\n  why: %s\n", head, p.Request.Tool, describeInput(p.Request), p.Decision.Reason)
	fmt.Fprintf(t.out, "  1) Allow once\n")
	if p.HasSuggestion {
		fmt.Fprintf(t.out, "  2) Allow always for this session (adds rule %s)\n", p.Suggested.String())
	} else {
		fmt.Fprintf(t.out, "  2) Allow always for this session\n")
	}
	fmt.Fprintf(t.out, "  3) Deny\n")
	for attempt := 0; attempt < 3; attempt++ {
		fmt.Fprintf(t.out, "Choose [1-3]: ")
		line, err := t.in.ReadString('\n')
		if cerr := ctx.Err(); cerr != nil {
			return Reply{}, cerr
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "1", "y", "yes", "once":
			return Reply{Choice: ChoiceAllowOnce}, nil
		case "2", "a", "always":
			return Reply{Choice: ChoiceAllowSession}, nil
		case "3", "n", "no", "d", "deny":
			return Reply{Choice: ChoiceDeny, Message: "The user denied this call."}, nil
		}
		if err != nil {
			return Reply{Choice: ChoiceDeny, Message: "No answer to the permission prompt, so the call was denied."}, nil
		}
		fmt.Fprintf(t.out, "Please answer 1, 2 or 3.\n")
	}
	return Reply{Choice: ChoiceDeny, Message: "No valid answer to the permission prompt, so the call was denied."}, nil
}

// describeInput renders the interesting part of a call for a prompt.
func describeInput(r Request) string {
	if s, declared, err := subjectOf(r); declared && err == nil {
		switch {
		case s.Content != "" && canonicalTool(r.Tool) == tool.Bash:
			return "command: " + truncate(s.Content, 500)
		case s.Content != "":
			return "content: " + truncate(s.Content, 500)
		case len(s.Paths) > 0 && s.Paths[0] != "":
			d := "path: " + strings.Join(s.Paths, ", ")
			if s.Glob != "" {
				d += ", pattern: " + s.Glob
			}
			return truncate(d, 500)
		case s.URL != "":
			return "url: " + truncate(s.URL, 500)
		case s.AgentType != "":
			return "agent type: " + truncate(s.AgentType, 500)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, r.Input); err != nil {
		return "input: " + truncate(string(r.Input), 500)
	}
	return "input: " + truncate(b.String(), 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
