// Package spawn decides what a sub-agent gets when it starts: its
// capability ceiling (tools, spawnable types, permission mode and rules,
// each drop explained), its model and the rule that chose it, the narrowed
// tools its definition asks for, and — through the Gate — whether it may
// start now, must wait for a slot, or is refused. The functions are pure
// and table-tested; the Gate is the one piece of state, owned by the
// runtime.
package spawn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// CeilingInput is what a child's capability ceiling is computed from.
type CeilingInput struct {
	// ParentTools are the names of the parent's tools, in order.
	ParentTools []string
	// ParentTypes limits the agent types the parent may spawn (nil: any).
	ParentTypes []string
	ParentPerms permission.Effective
	Limits      permission.SessionLimits
	Def         *agentdef.Definition
	// Depth is the child's depth (the main agent is 0); MaxDepth the
	// nesting limit.
	Depth, MaxDepth int
	// Background selects the background allow-list (S-5.1 step 2).
	Background bool
}

// Ceiling is a child's effective capabilities, computed once at spawn
// (S-15.1).
type Ceiling struct {
	// Tools are the granted tools, in the parent's order.
	Tools []string
	// Types limits the agent types the child may spawn (nil: any type
	// the rules allow).
	Types []string
	// Narrow maps tools granted only through entries with rule content
	// (`Bash(git diff:*)`) to those entries; see Narrow.
	Narrow map[string][]agentdef.ToolEntry
	// Perms are the child's permission mode and rules.
	Perms permission.Effective
	// Dropped are the parent's tools the child did not get, with why.
	Dropped []Dropped
	// Warnings are what the author of the definition should know.
	Warnings []string
}

// Dropped is a tool a child did not get.
type Dropped struct {
	Name   string
	Reason string
}

// EntryMatches reports whether a tools entry selects the tool called name:
// the same name (aliases included), or an MCP pattern covering it.
func EntryMatches(e agentdef.ToolEntry, name string) bool {
	if tool.Canonical(e.Name) == tool.Canonical(name) {
		return true
	}
	server, tl, ok := e.MCP()
	if !ok || !tool.IsMCP(name) {
		return false
	}
	nServer, nTool, _ := strings.Cut(strings.TrimPrefix(name, tool.MCPPrefix), "__")
	if server == "*" {
		return true
	}
	return server == nServer && (tl == "" || tl == "*" || tl == nTool)
}

// WholeToolDenied returns the rule that denies every use of the tool
// called name (a deny rule without content).
func WholeToolDenied(rules []permission.Rule, name string) (permission.Rule, bool) {
	for _, r := range rules {
		if r.Behavior != permission.Deny || r.Content != "" {
			continue
		}
		if EntryMatches(agentdef.ParseToolEntry(r.Tool), name) {
			return r, true
		}
	}
	return permission.Rule{}, false
}

// NamesMCP reports whether a definition's tools list names MCP tools
// (`mcp__server`, `mcp__server__tool`, `mcp__*`): they come from servers
// that may still be connecting, so an empty ceiling of built-in tools
// does not yet mean the agent has no tools.
func NamesMCP(def *agentdef.Definition) bool {
	for _, e := range def.EffectiveTools() {
		if _, _, ok := e.MCP(); ok {
			return true
		}
	}
	return false
}

// wholeEntry reports whether an entry grants or denies the whole tool (no
// rule content, or `*`).
func wholeEntry(e agentdef.ToolEntry) bool {
	return !e.HasContent || e.Content == "" || e.Content == "*"
}

// ComputeCeiling is the one place a child's tools, spawnable types, mode
// and rules are decided (S-5.1, S-10.3, S-15.1). It is pure: the same
// input gives the same ceiling. A definition can only narrow what the
// parent has; the parent's deny and ask rules bind the child.
func ComputeCeiling(in CeilingInput) Ceiling {
	def := in.Def
	var c Ceiling
	c.Perms = permission.Ratchet(in.ParentPerms, def.PermissionMode, in.Limits)
	// disallowedTools entries with content narrow by rule instead of
	// removing the tool (`Bash(rm:*)` denies rm, not Bash).
	for _, e := range def.DisallowedTools {
		if !wholeEntry(e) {
			c.Perms.Rules = append(c.Perms.Rules, permission.Rule{Behavior: permission.Deny, Tool: e.Name, Content: e.Content, Source: def.Path})
		}
	}
	if def.PermissionMode != "" && c.Perms.Mode != def.PermissionMode {
		c.Warnings = append(c.Warnings, modeNotApplied(def.PermissionMode, in.ParentPerms.Mode, in.Limits, c.Perms.Mode))
	}
	allowList := def.EffectiveTools()
	c.grant(in, allowList)
	c.narrowByRule(allowList)
	c.Types = spawnableTypes(in.ParentTypes, allowList)
	return c
}

// modeNotApplied says why a declared permissionMode did not apply.
func modeNotApplied(declared, parent permission.Mode, limits permission.SessionLimits, got permission.Mode) string {
	if declared == permission.ModeBypassPermissions && !limits.AllowBypass && !limits.DisableBypass &&
		(parent == permission.ModeDefault || parent == permission.ModeDontAsk || parent == permission.ModeBubble || parent == "") {
		return fmt.Sprintf("permissionMode bypassPermissions was not applied: the session was not started with bypass allowed (--allow-dangerously-skip-permissions or --permission-mode bypassPermissions); the agent runs in %s", got)
	}
	return fmt.Sprintf("permissionMode %s was not applied: the parent's mode %s and the session limits give %s", declared, parent, got)
}

// grant walks the parent's tools and keeps those the child may have
// (S-5.1), recording why each other one was dropped.
func (c *Ceiling) grant(in CeilingInput, allowList []agentdef.ToolEntry) {
	def := in.Def
	used := make([]bool, len(allowList))
	// Room for every parent tool at once (an allocation per child, not
	// one per doubling); nil again below when none was granted.
	c.Tools = make([]string, 0, len(in.ParentTools))
	defer func() {
		if len(c.Tools) == 0 {
			c.Tools = nil
		}
	}()
	drop := func(name, why string) { c.Dropped = append(c.Dropped, Dropped{Name: name, Reason: why}) }
	for _, name := range in.ParentTools {
		info, _ := tool.Lookup(name)
		switch {
		case info.InteractiveOnly:
			drop(name, prompts.DroppedInteractiveOnly)
			continue
		case name == tool.TaskStop || name == tool.TaskOutput || name == tool.SendMessage:
			// They act on the session's tasks: the main agent's tools.
			drop(name, prompts.DroppedTaskTools)
			continue
		case in.Background && !info.Background:
			drop(name, prompts.DroppedInBackground)
			continue
		}
		if i := slices.IndexFunc(def.DisallowedTools, func(e agentdef.ToolEntry) bool { return wholeEntry(e) && EntryMatches(e, name) }); i >= 0 {
			drop(name, prompts.DroppedDisallowed(def.DisallowedTools[i].Raw))
			continue
		}
		if allowList != nil {
			found := false
			for i, e := range allowList {
				if EntryMatches(e, name) {
					used[i], found = true, true
				}
			}
			if !found {
				drop(name, prompts.DroppedNotInTools)
				continue
			}
		}
		if rule, denied := WholeToolDenied(c.Perms.Rules, name); denied {
			drop(name, prompts.DroppedByRule(rule.Label()))
			continue
		}
		if tool.Canonical(name) == tool.Agent && in.Depth >= in.MaxDepth {
			drop(name, prompts.DroppedNestingLimit(in.Depth, in.MaxDepth))
			continue
		}
		c.Tools = append(c.Tools, name)
	}
	for i, e := range allowList {
		if !used[i] && !e.IsMCP() {
			c.Warnings = append(c.Warnings, fmt.Sprintf("tools entry %q matches no tool the parent has; ignored", e.Raw))
		}
	}
}

// narrowByRule records the tools granted only through entries with rule
// content (`Bash(git diff:*)`): such a tool runs only for calls those
// rules allow, unless another entry grants the whole tool.
func (c *Ceiling) narrowByRule(allowList []agentdef.ToolEntry) {
	if allowList == nil {
		return
	}
	for _, name := range c.Tools {
		if tool.Canonical(name) == tool.Agent {
			continue
		}
		var rules []agentdef.ToolEntry
		whole := false
		for _, e := range allowList {
			if !EntryMatches(e, name) {
				continue
			}
			if wholeEntry(e) {
				whole = true
				break
			}
			rules = append(rules, e)
		}
		if whole || len(rules) == 0 {
			continue
		}
		if c.Narrow == nil {
			c.Narrow = map[string][]agentdef.ToolEntry{}
		}
		c.Narrow[name] = rules
		for _, e := range rules {
			c.Warnings = append(c.Warnings, fmt.Sprintf("tools entry %q limits %s to the calls that rule allows", e.Raw, name))
		}
	}
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
		} else if tool.Canonical(e.Name) == tool.Agent {
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
	out := []string{}
	for _, t := range own {
		if slices.Contains(parent, t) {
			out = append(out, t)
		}
	}
	return out
}
