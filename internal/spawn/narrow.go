package spawn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// narrowedTool is a tool a definition granted only through entries with
// rule content (`tools: Bash(git diff:*)`): a call runs only when one of
// those rules allows it, on top of the agent's own permission checks. It
// shows the model the same spec as the tool it wraps.
type narrowedTool struct {
	tool.Tool
	entries []string
	checker *permission.Checker
}

// Narrow wraps t so that only calls matching entries run. The rules are
// checked in dontAsk mode, where a call is allowed by a rule or not at all;
// a call allowed only by the mode (a read inside the working directory)
// does not count, so the author's list is exactly what the agent gets.
// home expands ~ in the entries.
func Narrow(t tool.Tool, entries []agentdef.ToolEntry, home string) (tool.Tool, error) {
	raws := make([]string, len(entries))
	rules := make([]permission.Rule, 0, len(entries))
	for i, e := range entries {
		raws[i] = e.Raw
		r, err := permission.ParseRule(e.Raw)
		if err != nil {
			return nil, fmt.Errorf("tools entry %q: %w", e.Raw, err)
		}
		r.Behavior, r.Source = permission.Allow, "the agent definition"
		rules = append(rules, r)
	}
	c, err := permission.NewChecker(permission.Config{Mode: permission.ModeDontAsk, NoPrompt: true, Rules: rules, Home: home})
	if err != nil {
		return nil, fmt.Errorf("tools entries %s: %w", strings.Join(raws, ", "), err)
	}
	n := &narrowedTool{Tool: t, entries: raws, checker: c}
	if d, ok := t.(tool.SubjectDeclarer); ok {
		return &declaredNarrowedTool{narrowedTool: n, declarer: d}, nil
	}
	return n, nil
}

// declaredNarrowedTool is a narrowed tool whose wrapped tool declares the
// subject of its calls: it declares the same, so the agent's own rules
// see it too.
type declaredNarrowedTool struct {
	*narrowedTool
	declarer tool.SubjectDeclarer
}

// Subject implements tool.SubjectDeclarer for the wrapped tool.
func (n *declaredNarrowedTool) Subject(input json.RawMessage) (tool.Subject, error) {
	return n.declarer.Subject(input)
}

// CheckInput implements tool.InputChecker for the wrapped tool.
func (n *narrowedTool) CheckInput(input json.RawMessage) []string {
	return tool.CheckInput(n.Tool, input)
}

// Run implements tool.Tool.
func (n *narrowedTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Output, error) {
	name := n.Tool.Spec().Name
	decl, _ := n.Tool.(tool.SubjectDeclarer)
	d := n.checker.Check(permission.Request{Tool: name, Input: input, ReadOnly: n.Tool.ReadOnly(), Declarer: decl, Cwd: env.Cwd, Dirs: env.Dirs})
	if d.Behavior != permission.Allow || d.Rule == "" {
		return tool.Output{Text: prompts.NarrowedToolRefused(name, n.entries), IsError: true}, nil
	}
	return n.Tool.Run(ctx, env, input)
}
