package engine

import (
	"cmp"
	"slices"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
)

// The fork path (S-6): with Config.ForkSubagent on, an Agent call without
// subagent_type (or with "fork") starts a copy of the calling agent. The
// fork sends its parent's system prompt bytes, tool list, model and effort,
// and the parent's whole conversation, then one message of placeholder
// tool results, the fork rules and its directive (spawn.BuildFork). Every
// fork of one parent turn is byte-identical up to the directive, so the
// prompt cache serves all but the first almost entirely.

// forkState is whether an agent's Agent calls without subagent_type fork:
// on, or off with the reason it is unavailable although the session
// turned it on ("" when the session did not).
type forkState struct {
	on     bool
	reason string
}

// key distinguishes Agent tool specs by fork state.
func (f forkState) key() string {
	switch {
	case f.on:
		return "fork"
	case f.reason != "":
		return "fork-unavailable:" + f.reason
	}
	return ""
}

// forkState decides the fork path for an agent with these rules and
// allowed types (nil: any) (S-6.1): off unless Config.ForkSubagent;
// unavailable when a definition is named fork (the name then means that
// agent), when a rule denies Agent(fork), or when the agent's definition
// limits it to types that do not include fork.
func (tb toolbox) forkState(rules []permission.Rule, allowed []string) forkState {
	r := tb.r
	if !r.cfg.ForkSubagent {
		return forkState{}
	}
	if d := r.defs[agentdef.ForkName]; d != nil {
		return forkState{reason: prompts.ForkUserAgentReason(d.Path)}
	}
	if rule, denied := permission.AgentTypeDenied(rules, agentdef.ForkName); denied {
		return forkState{reason: prompts.ForkDeniedReason(rule.String(), rule.Source)}
	}
	if allowed != nil && !slices.Contains(allowed, agentdef.ForkName) {
		return forkState{reason: prompts.ForkNotAllowedReason()}
	}
	return forkState{on: true}
}

// isForkDef reports whether def is the fork path's own definition (not a
// user agent that happens to be named fork).
func isForkDef(def *agentdef.Definition) bool {
	return def != nil && def.Name == agentdef.ForkName && def.Source == agentdef.SourceBuiltin
}

// forkRoute decides an Agent call of a that names typ ("" when omitted)
// against the fork path: the fork definition when the call forks, a
// refusal when it asks for a fork that is unavailable, or neither.
func (fp forkPath) forkRoute(typ string) (*agentdef.Definition, *refusal) {
	a := fp.a
	var fs forkState
	if a.spec != nil {
		fs = a.spec.fork
	}
	if typ != "" && (typ != agentdef.ForkName || a.run.rt.defs[agentdef.ForkName] != nil) {
		return nil, nil
	}
	_, denied := permission.AgentTypeDenied(a.perms.Rules, agentdef.ForkName)
	switch {
	case fs.on:
		return agentdef.Fork(), nil
	case typ == "" || denied: // a denied fork is refused like any denied type
		return nil, nil
	case fs.reason != "":
		return nil, &refusal{run.RefusedFork, prompts.ForkUnavailable(fs.reason, defaultAgentType)}
	}
	return nil, &refusal{run.RefusedFork, prompts.ForkDisabled(defaultAgentType, setupOf(a).listedTypes())}
}

// inFork reports whether a is a fork (S-6.3): the runtime marker, or —
// for a conversation restored from a fork's transcript — the fork rules
// in a user message of the conversation its tools see.
func (fp forkPath) inFork(conversation []llm.Message) bool {
	a := fp.a
	if a.fork {
		return true
	}
	for _, m := range conversation {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockText && prompts.IsForkRules(b.Text) {
				return true
			}
		}
	}
	return false
}

// newFork builds the fork of a for its Agent call toolUseID: a's model,
// effort, system prompt, tool pool and Agent tool spec as they are, its
// conversation from ctx, bubble mode and 200 turns; isolation is the
// worktree isolation the call asked for ("" for none). Arguments a fork
// does not take are receipt warnings.
func (fp forkPath) newFork(conversation []llm.Message, in agentInput, toolUseID string, isolation agentdef.Isolation) (*agent, *refusal) {
	a := fp.a
	rt := a.run.rt
	def := agentdef.Fork()
	req, err := spawn.BuildFork(spawn.ForkInput{
		Parent: llm.Request{
			Model: a.modelID, System: a.system, SystemPrefix: a.systemPrefix, Tools: a.pool.Specs(), Effort: a.effort,
			MaxTokens: rt.cfg.MaxTokens, Thinking: rt.cfg.Thinking, Messages: conversation,
		},
		ToolUseID: toolUseID, Placeholder: prompts.ForkPlaceholder,
		Rules: prompts.ForkRules(), Directive: prompts.ForkDirective(toolUseID, in.Prompt),
	})
	if err != nil {
		return nil, &refusal{msg: prompts.SubagentNotStarted(err)}
	}
	var limits permission.SessionLimits
	if rt.cfg.Permissions != nil {
		limits = rt.cfg.Permissions.Limits
	}
	depth := a.depth + 1
	ceiling := spawn.Ceiling{Tools: a.pool.Names(), Types: a.types, Perms: permission.Ratchet(a.perms, def.PermissionMode, limits)}
	receipt := newReceipt(def.Name, depth, false, &ceiling)
	receipt.Model, receipt.ModelRule = a.modelID, run.ModelRuleParent
	id := newAgentID()
	child := &agent{
		run: a.run, id: id, typ: def.Name, toolUseID: toolUseID, depth: depth, def: def,
		modelID: a.modelID, types: a.types, perms: ceiling.Perms, env: a.env.Clone(id), maxTurns: def.MaxTurns,
		effort: a.effort, spawnReceipt: receipt, pool: a.pool, spec: a.spec, unavailable: a.unavailable,
		system: a.system, systemPrefix: a.systemPrefix, fork: true, start: req.Messages, cacheHints: req.CacheHints, isolation: isolation,
	}
	for _, arg := range []struct{ field, value, kept string }{
		{"model", in.Model, a.modelID}, {"effort", string(in.Effort), string(a.effort)}, {"cwd", in.Cwd, a.env.Cwd},
	} {
		if arg.value != "" && arg.value != arg.kept {
			child.warn(prompts.ForkIgnoredArgument(arg.field, arg.value, cmp.Or(arg.kept, "default")))
		}
	}
	return child, nil
}

// startMessages are the messages the child's loop starts from: a fork's
// inherited conversation and directive message, else its prompt. A fork's
// inherited messages go to its transcript first, so the transcript alone
// restores the fork, fork rules included (S-6.3).
func (fp forkPath) startMessages(prompt string, rec loop.Recorder) ([]llm.Message, error) {
	c := fp.a
	if c.start == nil {
		return []llm.Message{llm.UserText(prompt)}, nil
	}
	if rec != nil && c.resumed == nil { // a continued agent's history is in its transcript (resume.go)
		for _, m := range c.start[:len(c.start)-1] {
			if err := rec.AppendMessage(m, c.modelID, nil); err != nil {
				return nil, err
			}
		}
	}
	return c.start, nil
}

// forkPrompter is the prompter of an agent in bubble mode: its prompts go
// to the session's prompter, labelled with the agent (S-6.4). Nil stays
// nil, so a headless fork's prompts are denied and reported.
func forkPrompter(mode permission.Mode, p permission.Prompter) permission.Prompter {
	if mode != permission.ModeBubble || p == nil {
		return p
	}
	return permission.BubblePrompter{Parent: p}
}

// message is the message the SubagentStart hooks' context is put in
// front of (hooks.go): a fresh child's first message; for a fork, a
// scratch message that hookGlue.withContext appends after the directive, so
// the bytes the fork shares with its parent and siblings stay put.
func (hg hookGlue) message(msgs []llm.Message) *llm.Message {
	c := hg.a
	if c.start == nil {
		return &msgs[0]
	}
	return &llm.Message{Role: llm.RoleUser}
}

// withContext returns msgs with the blocks of a fork's scratch hook
// message (see hookGlue.message) at the end of its last message.
func (hg hookGlue) withContext(msgs []llm.Message, m *llm.Message) []llm.Message {
	c := hg.a
	if c.start == nil || len(m.Content) == 0 {
		return msgs
	}
	out := slices.Clone(msgs)
	last := &out[len(out)-1]
	last.Content = append(slices.Clip(last.Content), m.Content...)
	return out
}

// tell tells a fork that runs in its own worktree where it is (S-6.4):
// a block after its directive, so its system prompt and every byte it
// shares with its parent and siblings stay as they are.
func (tg treeGlue) tell(tree, branch, parentRoot, cwd string) {
	c := tg.a
	msgs := slices.Clone(c.start)
	last := &msgs[len(msgs)-1]
	last.Content = append(slices.Clip(last.Content), llm.TextBlock(prompts.ForkWorktree(tree, branch, parentRoot, cwd)))
	c.start = msgs
}
