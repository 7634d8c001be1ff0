package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/permission"
)

// Run is one hook run, as an Observer sees it.
type Run struct {
	// ID numbers the runs of one Dispatcher ("hook-1", "hook-2", …).
	ID    string
	Event Event
	// Matcher and Source are the group's; Command is the command or
	// "callback NAME".
	Matcher string
	Command string
	Source  string
	// AgentID and AgentType name the agent the event belongs to.
	AgentID   string
	AgentType string
	// ToolName is the tool of a tool event.
	ToolName string
	// Match is the value the event's matchers test (the tool name, the
	// agent type, the session's source…); "" for events without one.
	Match string

	// The fields below are set when the run finished.

	// ExitCode is the command's exit status; -1 when it did not exit on
	// its own (killed, failed to start). Callbacks report 0, or 1 on error.
	ExitCode int
	Duration time.Duration
	// Stdout and Stderr are what the command printed, each cut at the
	// dispatcher's output limit (Truncated says so).
	Stdout, Stderr string
	Truncated      bool
	// TimedOut is true when the hook was killed at its timeout; Canceled
	// when the run it belonged to ended first.
	TimedOut, Canceled bool
	// Err is a problem running the hook or reading its output (it did not
	// start, its JSON was malformed); the run carries on.
	Err error
	// Decision summarises what the hook decided: "block", "allow", "deny",
	// "ask", "stop" (continue: false) or "" for no decision.
	Decision string
	// SystemMessage is the hook's message for the user.
	SystemMessage string
}

// Outcome is what the hooks of one event decided together. The hooks run
// in parallel; their answers are combined in configuration order, so the
// outcome is deterministic.
type Outcome struct {
	// Runs are the hook runs, in configuration order.
	Runs []Run
	// Blocked is true when a hook exited 2 or answered decision "block"
	// (or, for PreToolUse, permissionDecision "deny"); Feedback holds the
	// texts meant for the model (stderr of exit 2, the reasons), in order.
	// What blocking means depends on the event: the tool call is not
	// made, the agent does not stop, the prompt is dropped.
	Blocked  bool
	Feedback []string
	// Stop is true when a hook answered continue: false: the agent stops
	// after the current step. StopReason is the first reason given.
	Stop       bool
	StopReason string
	// Permission is a PreToolUse verdict: deny wins over ask, ask over
	// allow; "" when no hook gave one. PermissionReason goes with it.
	Permission       permission.Behavior
	PermissionReason string
	// UpdatedInput replaces the tool input (PreToolUse, or
	// PermissionRequest with allow); the first hook that gives one wins.
	UpdatedInput json.RawMessage
	// Context are additionalContext texts for the model, and for
	// UserPromptSubmit and SessionStart the plain stdout of hooks that
	// exited 0.
	Context []string
	// SystemMessages are messages for the user, not the model.
	SystemMessages []string
	// SuppressOutput asks that the hooks' stdout be kept out of verbose
	// output.
	SuppressOutput bool
	// Request is a PermissionRequest answer: Allow or Deny (deny wins);
	// "" when no hook answered. RequestMessage tells the model why a
	// denial happened.
	Request        permission.Behavior
	RequestMessage string
	// RequestRules are the allow rules a PermissionRequest allow grants
	// for the session (its updatedPermissions of type addRules).
	RequestRules []permission.Rule
	// WorktreePath is the path a WorktreeCreate hook printed.
	WorktreePath string
}

// Errors returns the runs that failed without blocking (exit codes other
// than 0 and 2, timeouts, unreadable output), for verbose output.
func (o *Outcome) Errors() []Run {
	var out []Run
	for _, r := range o.Runs {
		if r.Err != nil || r.TimedOut || (r.ExitCode != 0 && r.ExitCode != 2) {
			out = append(out, r)
		}
	}
	return out
}

// hookOutput is the JSON a hook may print on stdout (exit 0).
type hookOutput struct {
	Continue       *bool           `json:"continue"`
	StopReason     string          `json:"stopReason"`
	SuppressOutput bool            `json:"suppressOutput"`
	SystemMessage  string          `json:"systemMessage"`
	Decision       string          `json:"decision"`
	Reason         string          `json:"reason"`
	Specific       *specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *requestDecision `json:"decision"`
	// WorktreePath is accepted beside the plain stdout path.
	WorktreePath string `json:"worktreePath"`
}

type requestDecision struct {
	Behavior           string             `json:"behavior"`
	UpdatedInput       json.RawMessage    `json:"updatedInput"`
	UpdatedPermissions []permissionUpdate `json:"updatedPermissions"`
	Message            string             `json:"message"`
}

// permissionUpdate is one of Claude Code's permission updates; only
// addRules with behavior allow is applied (as session rules).
type permissionUpdate struct {
	Type     string `json:"type"`
	Behavior string `json:"behavior"`
	Rules    []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
}

// result is one finished hook before combination.
type result struct {
	run    Run
	stdout []byte
	stderr []byte
	// exit is the exit code, or -1.
	exit int
}

// combine folds the results, in order, into one Outcome for event ev.
func combine(ev Event, results []result) Outcome {
	var o Outcome
	for _, res := range results {
		run := res.run
		switch {
		case run.TimedOut || run.Canceled || run.Err != nil && res.exit < 0:
			// No verdict from a hook that did not finish.
		case res.exit == 2:
			run.Decision = "block"
			o.Blocked = true
			if msg := strings.TrimSpace(string(res.stderr)); msg != "" {
				o.Feedback = append(o.Feedback, msg)
			} else {
				o.Feedback = append(o.Feedback, fmt.Sprintf("A %s hook blocked this without saying why.", ev))
			}
		case res.exit == 0:
			applyStdout(ev, res, &run, &o)
		}
		o.Runs = append(o.Runs, run)
	}
	return o
}

// applyStdout reads the stdout of a hook that exited 0: JSON when it is
// an object, plain text otherwise.
func applyStdout(ev Event, res result, run *Run, o *Outcome) {
	out := bytes.TrimSpace(res.stdout)
	if len(out) == 0 {
		return
	}
	if out[0] != '{' {
		switch ev {
		case UserPromptSubmit, SessionStart, PreCompact:
			// PreCompact: the text joins the summary's instructions.
			o.Context = append(o.Context, string(out))
		case WorktreeCreate:
			if o.WorktreePath == "" {
				o.WorktreePath = lastLine(string(out))
			}
		}
		return
	}
	var h hookOutput
	if err := json.Unmarshal(out, &h); err != nil {
		run.Err = fmt.Errorf("hook output starts like JSON but is not valid hook JSON: %v", err)
		return
	}
	if h.SystemMessage != "" {
		run.SystemMessage = h.SystemMessage
		o.SystemMessages = append(o.SystemMessages, h.SystemMessage)
	}
	o.SuppressOutput = o.SuppressOutput || h.SuppressOutput
	switch h.Decision {
	case "block":
		run.Decision = "block"
		o.Blocked = true
		reason := h.Reason
		if reason == "" {
			reason = fmt.Sprintf("A %s hook blocked this without saying why.", ev)
		}
		o.Feedback = append(o.Feedback, reason)
	case "approve":
		// The older PreToolUse spelling of permissionDecision "allow".
		if ev == PreToolUse {
			setPermission(o, run, permission.Allow, h.Reason)
		}
	}
	if s := h.Specific; s != nil && (s.HookEventName == "" || s.HookEventName == string(ev)) {
		applySpecific(ev, s, run, o)
	}
	if h.Continue != nil && !*h.Continue {
		run.Decision = "stop"
		if !o.Stop {
			o.Stop, o.StopReason = true, h.StopReason
		}
	}
}

func applySpecific(ev Event, s *specificOutput, run *Run, o *Outcome) {
	if s.AdditionalContext != "" {
		o.Context = append(o.Context, s.AdditionalContext)
	}
	switch ev {
	case PreToolUse:
		switch b := permission.Behavior(s.PermissionDecision); b {
		case permission.Allow, permission.Ask, permission.Deny:
			setPermission(o, run, b, s.PermissionDecisionReason)
		case "":
		default:
			run.Err = fmt.Errorf("permissionDecision %q is not allow, deny or ask; ignored", s.PermissionDecision)
		}
		if s.PermissionDecision != string(permission.Deny) {
			setUpdatedInput(o, run, s.UpdatedInput)
		}
	case PermissionRequest:
		if s.Decision == nil {
			return
		}
		switch b := permission.Behavior(s.Decision.Behavior); b {
		case permission.Deny:
			run.Decision = "deny"
			if o.Request != permission.Deny {
				o.Request, o.RequestMessage = permission.Deny, s.Decision.Message
			}
		case permission.Allow:
			run.Decision = "allow"
			if o.Request == "" {
				o.Request = permission.Allow
				setUpdatedInput(o, run, s.Decision.UpdatedInput)
				for _, u := range s.Decision.UpdatedPermissions {
					if u.Type != "addRules" || u.Behavior != string(permission.Allow) {
						continue // other updates (modes, directories, removals) are not applied
					}
					for _, r := range u.Rules {
						if r.ToolName != "" {
							o.RequestRules = append(o.RequestRules, permission.Rule{Behavior: permission.Allow, Tool: r.ToolName, Content: r.RuleContent, Source: permission.SourceSession})
						}
					}
				}
			}
		default:
			run.Err = fmt.Errorf("decision.behavior %q is not allow or deny; ignored", s.Decision.Behavior)
		}
	case WorktreeCreate:
		if s.WorktreePath != "" && o.WorktreePath == "" {
			o.WorktreePath = s.WorktreePath
		}
	}
}

// permRank orders permission verdicts: deny > ask > allow > none.
func permRank(b permission.Behavior) int {
	switch b {
	case permission.Allow:
		return 1
	case permission.Ask:
		return 2
	case permission.Deny:
		return 3
	}
	return 0
}

func setPermission(o *Outcome, run *Run, b permission.Behavior, reason string) {
	run.Decision = string(b)
	if permRank(b) > permRank(o.Permission) {
		o.Permission, o.PermissionReason = b, reason
	}
	if b == permission.Deny {
		o.Blocked = true
		if reason == "" {
			reason = "A PreToolUse hook denied this call without saying why."
		}
		o.Feedback = append(o.Feedback, reason)
	}
}

// setUpdatedInput keeps the first updatedInput that is a JSON object.
func setUpdatedInput(o *Outcome, run *Run, in json.RawMessage) {
	in = bytes.TrimSpace(in)
	if len(in) == 0 || string(in) == "null" {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(in, &obj); err != nil {
		run.Err = fmt.Errorf("updatedInput is not a JSON object; ignored")
		return
	}
	if o.UpdatedInput == nil {
		o.UpdatedInput = append(json.RawMessage(nil), in...)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}
