package permission

import (
	"fmt"

	"github.com/cadre-dev/cadre/tool"
)

// Effective is an agent's permission state: its mode, whether asks become
// denies, and its rules with their sources.
type Effective struct {
	Mode Mode
	// NoPrompt turns asks into denies (set under a dontAsk ancestor).
	NoPrompt bool
	Rules    []Rule
	// ReadOnly makes the agent read-only whatever its mode (see
	// Config.ReadOnly); the spawner sets it for read-only agents, and a
	// read-only agent's children inherit it.
	ReadOnly bool
}

// SessionLimits bound what any agent of the session may use.
type SessionLimits struct {
	// MaxMode is the most permissive mode the session allows ("" = no
	// limit beyond the parent).
	MaxMode Mode
	// DisableBypass forbids bypassPermissions (managed settings).
	DisableBypass bool
	// AllowBypass is set when the session was started with bypass
	// allowed (in bypassPermissions, or --allow-dangerously-skip-permissions):
	// only then may a child's declared bypassPermissions apply under a
	// default or dontAsk parent.
	AllowBypass bool
}

// Ratchet computes a child's permission state (S-10.3). A parent in
// bypassPermissions, acceptEdits, auto or plan imposes its mode; a parent
// in default, dontAsk or bubble lets the child's declared mode apply, as
// Claude Code does: any stricter mode, acceptEdits, and bypassPermissions
// when limits.AllowBypass says the session allows it (auto is never taken
// from a declaration). The result never exceeds the session limits. The child keeps every parent rule, so the parent's deny
// and ask rules bind it and all its descendants; a dontAsk ancestor makes
// the child never prompt either; a read-only parent makes a read-only
// child.
func Ratchet(parent Effective, childDeclared Mode, limits SessionLimits) Effective {
	pm, err := ParseMode(string(parent.Mode))
	if err != nil {
		pm = ModePlan
	}
	mode := pm
	switch pm {
	case ModeBypassPermissions, ModeAcceptEdits, ModeAuto, ModePlan:
	default:
		if cm, err := ParseMode(string(childDeclared)); err == nil && childDeclared != "" && DeclaredApplies(pm, cm, limits) {
			mode = cm
		}
	}
	if limits.MaxMode != "" {
		if lm, err := ParseMode(string(limits.MaxMode)); err == nil && strictness(mode) > strictness(lm) {
			mode = lm
		}
	}
	if limits.DisableBypass && mode == ModeBypassPermissions {
		mode = ModeDefault
	}
	return Effective{
		Mode:     mode,
		NoPrompt: parent.NoPrompt || pm == ModeDontAsk || mode == ModeDontAsk,
		Rules:    append([]Rule(nil), parent.Rules...),
		ReadOnly: parent.ReadOnly,
	}
}

// DeclaredApplies reports whether a child's declared mode may replace the
// mode of a parent in default, dontAsk or bubble (S-10.3): a stricter mode
// always, acceptEdits always, bypassPermissions only when the session
// allows bypass. Session limits (MaxMode, DisableBypass) still apply after.
func DeclaredApplies(parent, declared Mode, limits SessionLimits) bool {
	switch {
	case strictness(declared) <= strictness(parent):
		return true
	case declared == ModeAcceptEdits:
		return true
	case declared == ModeBypassPermissions:
		return limits.AllowBypass && !limits.DisableBypass
	}
	return false
}

// CheckerConfig turns an effective state into a checker configuration for
// the given working directories.
func (e Effective) CheckerConfig(cwd string, dirs []string, home string) Config {
	return Config{Mode: e.Mode, NoPrompt: e.NoPrompt, ReadOnly: e.ReadOnly, Rules: append([]Rule(nil), e.Rules...), Cwd: cwd, Dirs: dirs, Home: home}
}

// AgentTypeDenied reports the rule that denies spawning agentType (`Agent`
// or `Task` on the whole tool, or `Agent(Type)` naming it), if any.
func AgentTypeDenied(rules []Rule, agentType string) (Rule, bool) {
	for _, r := range rules {
		if r.Behavior != Deny || canonicalTool(r.Tool) != tool.Agent {
			continue
		}
		if r.Content == "" || agentRuleMatches(r, agentType) {
			return r, true
		}
	}
	return Rule{}, false
}

// FilterAgentTypes drops the types denied by a rule, for listings (S-3.4).
func FilterAgentTypes(rules []Rule, types []string) []string {
	out := make([]string, 0, len(types))
	for _, t := range types {
		if _, denied := AgentTypeDenied(rules, t); !denied {
			out = append(out, t)
		}
	}
	return out
}

// AgentTypeRefusal is the message for a spawn of a denied type.
func AgentTypeRefusal(agentType string, r Rule) string {
	src := r.Source
	if src == "" {
		src = "an unnamed source"
	}
	return fmt.Sprintf("Agent type %q is denied by rule %s from %s. Do not retry; pick another agent type or do the work yourself.", agentType, r.String(), src)
}
