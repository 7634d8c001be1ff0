package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/cadre-dev/cadre/prompts"
)

// Denial is one denied tool call, as reported in the run's
// permission_denials.
type Denial struct {
	AgentID   string          `json:"agent_id,omitempty"`
	AgentType string          `json:"agent_type,omitempty"`
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	ToolInput json.RawMessage `json:"tool_input"`
	Reason    string          `json:"reason"`
	Rule      string          `json:"rule,omitempty"`
	Source    string          `json:"source,omitempty"`
	// Background is true when the denial was automatic because a
	// background agent cannot prompt (S-7.5).
	Background bool `json:"background,omitempty"`
}

// DenialLog collects the denials of every agent of a run. Safe for
// concurrent use.
type DenialLog struct {
	mu   sync.Mutex
	list []Denial
}

// Add records a denial.
func (l *DenialLog) Add(d Denial) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, d)
}

// All returns the denials recorded so far, in order.
func (l *DenialLog) All() []Denial {
	return l.Since(0)
}

// Len is how many denials were recorded so far: a mark for Since.
func (l *DenialLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.list)
}

// Since returns the denials recorded after mark (a Len taken earlier), in
// order.
func (l *DenialLog) Since(mark int) []Denial {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Denial(nil), l.list[min(mark, len(l.list)):]...)
}

// SessionConfig configures one agent's Session.
type SessionConfig struct {
	// Checker holds the agent's mode and rules (required).
	Checker *Checker
	// Prompter asks a person; nil means nobody can be asked (headless).
	Prompter Prompter
	// AgentID and AgentType name the agent; they fill requests that lack
	// them.
	AgentID, AgentType string
	// Background marks an agent that can never show a prompt (S-7.5)
	// unless its mode is bubble and Prompter can reach a terminal.
	Background bool
	// Answerer, when set, decides a background agent's call that would
	// be asked about before it is denied for want of a prompt: as in
	// Claude Code, PermissionRequest hooks still answer for an agent that
	// cannot prompt. When it has no answer the call is denied as before.
	// (With a Prompter to ask, the Prompter is expected to consult the
	// hooks itself; see hooks.Prompter.)
	Answerer Answerer
	// Log, when set, also receives this agent's denials (the run's list).
	Log *DenialLog
	// UntrustedWorkspace says the workspace's settings files are ignored:
	// a denial's hint then names the user's settings file or a flag,
	// never a file of the workspace.
	UntrustedWorkspace bool
	// Grants, when set, is shared with the session's other agents: rules
	// granted "always for this session" here go there, and those granted
	// elsewhere apply here (issue 9).
	Grants *Grants
}

// Session is one agent's Authorizer: the checker, the prompter, the
// session allow rules a person granted, and denial tracking.
type Session struct {
	cfg SessionConfig

	mu      sync.Mutex
	checker *Checker
	granted []Rule
	shared  int // how many of cfg.Grants the checker holds
	counts  map[string]int
	denials []Denial
}

var _ Authorizer = (*Session)(nil)

// NewSession returns a Session for one agent.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Checker == nil {
		return nil, errors.New("permission session: nil checker")
	}
	return &Session{cfg: cfg, checker: cfg.Checker, counts: map[string]int{}}, nil
}

// Checker returns the current checker, including session rules.
func (s *Session) Checker() *Checker {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Grants != nil {
		var more []Rule
		if more, s.shared = s.cfg.Grants.since(s.shared); len(more) > 0 {
			s.checker = s.checker.WithRules(more...)
		}
	}
	return s.checker
}

// Effective returns the agent's mode and rules (with session rules), the
// input of Ratchet for its children.
func (s *Session) Effective() Effective { return s.Checker().Effective() }

// SessionRules returns the allow rules granted with "always for this
// session".
func (s *Session) SessionRules() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rule(nil), s.granted...)
}

// Denials returns this agent's denials so far.
func (s *Session) Denials() []Denial {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Denial(nil), s.denials...)
}

// Authorize decides one call: the rules and mode first, then a prompt when
// they say ask and someone can answer.
func (s *Session) Authorize(ctx context.Context, req Request) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	req = s.fill(req)
	d := s.Checker().Check(req)
	switch d.Behavior {
	case Allow:
		return Outcome{Allowed: true, Decision: d}, nil
	case Deny:
		return s.deny(req, d, "", false), nil
	}
	return s.ask(ctx, req, d)
}

// fill completes a request with the session's agent.
func (s *Session) fill(req Request) Request {
	if req.AgentID == "" {
		req.AgentID = s.cfg.AgentID
	}
	if req.AgentType == "" {
		req.AgentType = s.cfg.AgentType
	}
	req.Background = req.Background || s.cfg.Background
	return req
}

// ask prompts for a call the decision d says to ask about, where someone
// can answer.
func (s *Session) ask(ctx context.Context, req Request, d Decision) (Outcome, error) {
	checker := s.Checker()
	suggested, hasSuggestion := SuggestRule(req)
	pr := Prompt{Request: req, Decision: d, Suggested: suggested, HasSuggestion: hasSuggestion}
	if req.Background && (checker.Mode() != ModeBubble || s.cfg.Prompter == nil) {
		if s.cfg.Answerer == nil {
			return s.deny(req, d, prompts.PermDeniedInBackground, true), nil
		}
		reply, ok, err := s.cfg.Answerer.Answer(ctx, pr)
		switch {
		case err != nil:
			if ctxErr := ctx.Err(); ctxErr != nil {
				return Outcome{}, ctxErr
			}
			return s.deny(req, d, prompts.PermPromptFailed(err), false), nil
		case !ok:
			return s.deny(req, d, prompts.PermDeniedInBackground, true), nil
		}
		return s.apply(req, d, reply, suggested, hasSuggestion), nil
	}
	p := s.cfg.Prompter
	if p == nil {
		p = NoPrompter{}
	}
	reply, err := p.Prompt(ctx, pr)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Outcome{}, ctxErr
		}
		return s.deny(req, d, prompts.PermPromptFailed(err), false), nil
	}
	return s.apply(req, d, reply, suggested, hasSuggestion), nil
}

// apply turns the answer to a prompt about req into its outcome: a grant
// "always for this session" adds its rules (or the suggested one).
func (s *Session) apply(req Request, d Decision, reply Reply, suggested Rule, hasSuggestion bool) Outcome {
	switch reply.Choice {
	case ChoiceAllowOnce:
		d.Behavior, d.Reason = Allow, prompts.PermApprovedOnce
		return Outcome{Allowed: true, Decision: d, UpdatedInput: reply.UpdatedInput}
	case ChoiceAllowSession:
		grant := reply.Rules
		if len(grant) == 0 && hasSuggestion {
			grant = []Rule{suggested}
		}
		for _, r := range grant {
			r.Behavior, r.Source = Allow, SourceSession
			s.mu.Lock()
			s.granted = append(s.granted, r)
			if s.cfg.Grants != nil {
				s.cfg.Grants.Add(r) // this session's next Checker call picks it up
			} else {
				s.checker = s.checker.WithRules(r)
			}
			s.mu.Unlock()
			d.Rule, d.Source = r.String(), r.Source
		}
		d.Behavior, d.Reason = Allow, prompts.PermApprovedSession
		return Outcome{Allowed: true, Decision: d, UpdatedInput: reply.UpdatedInput}
	}
	if reply.AsGiven && reply.Message != "" {
		// The answerer's own message (canUseTool, a permission-prompt
		// tool, a PermissionRequest hook) reaches the model as given.
		d.Behavior = Deny
		s.record(req, d, false)
		return Outcome{Allowed: false, Message: reply.Message, Decision: d}
	}
	msg := reply.Message
	if msg == "" {
		msg = prompts.PermUserDenied
	}
	return s.deny(req, d, msg, false)
}

// deny records a denial and builds the message the model reads.
func (s *Session) deny(req Request, d Decision, why string, background bool) Outcome {
	byDenyRule := d.Behavior == Deny && d.Rule != ""
	d.Behavior = Deny
	s.record(req, d, background)
	key := requestKey(req)
	s.mu.Lock()
	s.counts[key]++
	n := s.counts[key]
	s.mu.Unlock()

	text := prompts.PermissionDenial{Tool: req.Tool, Times: n, Untrusted: s.cfg.UntrustedWorkspace}
	if byDenyRule {
		text.Rule, text.Source = d.Rule, d.Source
	} else {
		text.Reason, text.Why = d.Reason, why
		// Name the rule that would allow the call, but only when adding it
		// really would (not in plan mode, not past an ask rule, not when
		// a hook asked).
		if r, ok := SuggestRule(req); ok && d.Source != SourceHook && s.Checker().WithRules(r).Check(req).Behavior == Allow {
			text.Suggest = r.String()
		}
	}
	return Outcome{Allowed: false, Message: text.Render(), Decision: d}
}

// requestKey identifies "the same request" for denial tracking: the tool
// and its input with insignificant JSON whitespace removed.
func requestKey(req Request) string {
	var b bytes.Buffer
	if err := json.Compact(&b, req.Input); err != nil {
		return req.Tool + "\x00" + string(req.Input)
	}
	return canonicalTool(req.Tool) + "\x00" + b.String()
}
