package cadre

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
)

// AgentToolName is the name of the tool that spawns sub-agents; TaskAlias
// is its old name, accepted in rules and definitions.
const (
	AgentToolName = "Agent"
	TaskAlias     = "Task"
)

// Receipt records what a spawn was granted and why (S-15.1): the resolved
// model and the rule that chose it, the tools granted and those dropped with
// the reason, the permission mode, the depth, and warnings. It goes into the
// structured result, the task_started event and the agent's .meta.json.
type Receipt struct {
	AgentType string `json:"agent_type"`
	Model     string `json:"model"`
	ModelRule string `json:"model_rule"`
	// Tools are the granted tools, in the order the child sees them.
	Tools []string `json:"tools"`
	// Dropped are the tools the child did not get, with why.
	Dropped []DroppedTool `json:"dropped,omitempty"`
	// AllowedAgentTypes limits what the child may spawn (nil: any type
	// the rules allow).
	AllowedAgentTypes []string        `json:"allowed_agent_types,omitempty"`
	PermissionMode    permission.Mode `json:"permission_mode"`
	Depth             int             `json:"depth"`
	Background        bool            `json:"background"`
	Warnings          []string        `json:"warnings,omitempty"`
}

// DroppedTool is a tool a child did not get.
type DroppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ceilingInput is what a child's capability ceiling is computed from.
type ceilingInput struct {
	// ParentTools are the names of the parent's tools, in order.
	ParentTools []string
	// ParentTypes limits the agent types the parent may spawn (nil: any).
	ParentTypes []string
	ParentPerms permission.Effective
	Limits      permission.SessionLimits
	Def         *agentdef.Definition
	// Depth is the child's depth (the main agent is 0).
	Depth      int
	MaxDepth   int
	Background bool
}

// ceiling is a child's effective capabilities, computed once at spawn.
type ceiling struct {
	tools []string
	types []string
	// narrow maps tools granted only through entries with rule content
	// to those entries.
	narrow  map[string][]agentdef.ToolEntry
	perms   permission.Effective
	receipt Receipt
}

// interactiveOnly are tools no sub-agent gets: they need the user at the
// terminal or switch the session's own mode.
func interactiveOnly(name string) bool {
	switch name {
	case "AskUserQuestion", "EnterPlanMode", "ExitPlanMode":
		return true
	}
	return false
}

// backgroundAllowed is the allow-list for agents in the background (S-5.1
// step 2): file and shell tools and MCP tools; no Agent.
func backgroundAllowed(name string) bool {
	switch name {
	case "Read", "Write", "Edit", "Glob", "Grep", "Bash", "BashOutput", "KillShell":
		return true
	}
	return strings.HasPrefix(name, "mcp__")
}

// canonical maps the Task alias onto Agent.
func canonical(name string) string {
	if name == TaskAlias {
		return AgentToolName
	}
	return name
}

// entryMatches reports whether a tools entry selects the tool called name:
// same name (aliases included), or an MCP pattern covering it.
func entryMatches(e agentdef.ToolEntry, name string) bool {
	if canonical(e.Name) == canonical(name) {
		return true
	}
	server, tl, ok := e.MCP()
	if !ok || !strings.HasPrefix(name, "mcp__") {
		return false
	}
	nServer, nTool, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	if server == "*" {
		return true
	}
	return server == nServer && (tl == "" || tl == "*" || tl == nTool)
}

// wholeToolDenied returns the rule that denies every use of the tool.
func wholeToolDenied(rules []permission.Rule, name string) (permission.Rule, bool) {
	for _, r := range rules {
		if r.Behavior != permission.Deny || r.Content != "" {
			continue
		}
		if entryMatches(agentdef.ParseToolEntry(r.Tool), name) {
			return r, true
		}
	}
	return permission.Rule{}, false
}

// computeCeiling is the one place a child's tools, spawnable types, mode and
// rules are decided (S-5.1, S-10.3, S-15.1). It is pure: the same input
// gives the same ceiling. A definition can only narrow what the parent has;
// the parent's deny and ask rules bind the child.
func computeCeiling(in ceilingInput) ceiling {
	def := in.Def
	var c ceiling
	r := &c.receipt
	r.AgentType, r.Depth, r.Background = def.Name, in.Depth, in.Background

	c.perms = permission.Ratchet(in.ParentPerms, permission.Mode(def.PermissionMode), in.Limits)
	// disallowedTools entries with content narrow by rule instead of
	// removing the tool (`Bash(rm:*)` denies rm, not Bash).
	for _, e := range def.DisallowedTools {
		if e.HasContent && e.Content != "" && e.Content != "*" {
			c.perms.Rules = append(c.perms.Rules, permission.Rule{Behavior: permission.Deny, Tool: e.Name, Content: e.Content, Source: def.Path})
		}
	}
	if def.PermissionMode != "" && c.perms.Mode != permission.Mode(def.PermissionMode) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("permissionMode %s was not applied: the parent's mode %s and the session limits give %s", def.PermissionMode, in.ParentPerms.Mode, c.perms.Mode))
	}
	r.PermissionMode = c.perms.Mode

	allowList := def.EffectiveTools()
	used := make([]bool, len(allowList))
	drop := func(name, why string) { r.Dropped = append(r.Dropped, DroppedTool{Name: name, Reason: why}) }
	for _, name := range in.ParentTools {
		switch {
		case interactiveOnly(name):
			drop(name, "interactive-only tools are not given to sub-agents")
			continue
		case in.Background && !backgroundAllowed(name):
			drop(name, "not available to agents running in the background")
			continue
		}
		if i := slices.IndexFunc(def.DisallowedTools, func(e agentdef.ToolEntry) bool {
			return (!e.HasContent || e.Content == "" || e.Content == "*") && entryMatches(e, name)
		}); i >= 0 {
			drop(name, "in the definition's disallowedTools ("+def.DisallowedTools[i].Raw+")")
			continue
		}
		if allowList != nil {
			found := false
			for i, e := range allowList {
				if entryMatches(e, name) {
					used[i], found = true, true
				}
			}
			if !found {
				drop(name, "not in the definition's tools")
				continue
			}
		}
		if rule, denied := wholeToolDenied(c.perms.Rules, name); denied {
			drop(name, "denied by rule "+rule.Label())
			continue
		}
		if canonical(name) == AgentToolName && in.Depth >= in.MaxDepth {
			drop(name, fmt.Sprintf("nesting limit: depth %d of %d", in.Depth, in.MaxDepth))
			continue
		}
		c.tools = append(c.tools, name)
	}
	for i, e := range allowList {
		if !used[i] && !e.IsMCP() {
			r.Warnings = append(r.Warnings, fmt.Sprintf("tools entry %q matches no tool the parent has; ignored", e.Raw))
		}
	}
	// A tools entry with rule content (`Bash(git diff:*)`) grants the tool
	// only for calls that rule allows, unless another entry grants the
	// whole tool.
	for _, name := range c.tools {
		if canonical(name) == AgentToolName || allowList == nil {
			continue
		}
		var rules []agentdef.ToolEntry
		whole := false
		for _, e := range allowList {
			if !entryMatches(e, name) {
				continue
			}
			if !e.HasContent || e.Content == "" || e.Content == "*" {
				whole = true
				break
			}
			rules = append(rules, e)
		}
		if !whole && len(rules) > 0 {
			if c.narrow == nil {
				c.narrow = map[string][]agentdef.ToolEntry{}
			}
			c.narrow[name] = rules
			for _, e := range rules {
				r.Warnings = append(r.Warnings, fmt.Sprintf("tools entry %q limits %s to the calls that rule allows", e.Raw, name))
			}
		}
	}
	c.types = spawnableTypes(in.ParentTypes, allowList)
	if slices.Contains(c.tools, AgentToolName) {
		r.AllowedAgentTypes = c.types
	}
	r.Tools = c.tools
	return c
}

// spawnableTypes narrows the parent's spawnable types by the definition's
// `Agent(a, b)` entries.
func spawnableTypes(parent []string, allowList []agentdef.ToolEntry) []string {
	var own []string
	restricted := false
	for _, e := range allowList {
		if types, ok := e.AgentTypes(); ok {
			restricted = true
			own = append(own, types...)
		} else if canonical(e.Name) == AgentToolName {
			// A bare Agent entry allows every type.
			restricted, own = false, nil
			break
		}
	}
	switch {
	case !restricted:
		return parent
	case parent == nil:
		return own
	}
	var out []string
	for _, t := range own {
		if slices.Contains(parent, t) {
			out = append(out, t)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
