package prompts

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed fork.md
var forkRules string

// ForkTag is the element that wraps the fork rules in a fork's first
// message. A conversation holding it in a user text block is a fork's, so
// its Agent tool refuses (S-6.3) even after the conversation is restored
// from a transcript.
const ForkTag = "fork-rules"

// ForkRules is the text block every fork of one parent turn gets first in
// its directive message: the same bytes for every sibling, so it closes
// the prefix they share in the prompt cache (S-6.2).
func ForkRules() string {
	return "<" + ForkTag + ">\n" + strings.TrimSpace(forkRules) + "\n</" + ForkTag + ">"
}

// IsForkRules reports whether text is (or starts with) the fork rules
// block.
func IsForkRules(text string) bool { return strings.HasPrefix(text, "<"+ForkTag+">") }

// ForkPlaceholder is the tool result every tool use of the parent's last
// message gets in a fork's request — the fork's own call and its siblings'
// alike, so every sibling's bytes stay identical up to its directive.
const ForkPlaceholder = "Forked: a copy of this agent is carrying out this call's directive and will report back."

// ForkDirective is the last block of a fork's first message: which of the
// parent's calls is the fork's own, then the directive (the call's
// prompt).
func ForkDirective(toolUseID, directive string) string {
	return fmt.Sprintf("Your directive, from Agent call %s:\n\n%s", toolUseID, strings.TrimSpace(directive))
}

// ForkNested answers an Agent call made by a fork (S-6.3).
func ForkNested() string {
	return "A fork cannot start sub-agents or forks of its own. Do not retry; do the work yourself with your tools and report once when done."
}

// ForkUnavailable answers an Agent call that asks for the fork path where
// it is enabled but unavailable; reason says why.
func ForkUnavailable(reason, defaultType string) string {
	return fmt.Sprintf("The fork path is unavailable: %s. Do not retry it; name an agent type, or omit subagent_type to start a %s agent.", reason, defaultType)
}

// ForkUserAgentReason: forking is off because a definition named fork
// exists (at path), and the name means that agent.
func ForkUserAgentReason(path string) string {
	return fmt.Sprintf("an agent definition named fork exists (%s), so subagent_type \"fork\" starts that agent", path)
}

// ForkDeniedReason: forking is off because rule (from source) denies
// Agent(fork).
func ForkDeniedReason(rule, source string) string {
	if source == "" {
		source = "an unnamed source"
	}
	return fmt.Sprintf("rule %s from %s denies it", rule, source)
}

// ForkIgnoredArgument is the receipt warning for an argument of the Agent
// call that a fork does not take (model, effort): it keeps its parent's.
func ForkIgnoredArgument(field, value, kept string) string {
	return fmt.Sprintf("%s %q was ignored: a fork keeps its parent's %s (%s)", field, value, field, kept)
}

// AgentToolFork is the Agent tool's description when an Agent call without
// subagent_type forks the calling agent. It is the usual description
// with the fork path as the default and a section on when and how to fork.
func AgentToolFork(listing string) string {
	def := " Without it, you fork: see below."
	return strings.NewReplacer("{{LISTING}}", strings.TrimRight(listing, "\n"), "{{DEFAULT_TYPE}}", def).Replace(strings.TrimSpace(agentTool)) +
		"\n\n" + strings.TrimSpace(forkTool)
}

// ForkListingLine is the agent listing's line about the fork path when it
// is enabled but unavailable to this agent (reason says why).
func ForkListingLine(reason string) string {
	return "- fork: unavailable (" + reason + ")"
}

//go:embed forktool.md
var forkTool string

// ForkNotAllowedReason: the calling agent's definition limits the types it
// may start (`Agent(a, b)`), and fork is not one of them.
func ForkNotAllowedReason() string {
	return "this agent's definition limits the agent types it may start, and fork is not one of them"
}

// ForkWorktree is the block after a fork's directive when the fork runs in
// its own git worktree (S-6.4): the fork keeps its parent's system prompt
// bytes and history, whose paths name the parent's tree, so it is told
// both roots and that every inherited path must be translated and the file
// read again. tree is the worktree, branch its branch ("" for a tree a
// WorktreeCreate hook made), parentRoot the top of the parent's tree and
// cwd the fork's working directory in its tree.
func ForkWorktree(tree, branch, parentRoot, cwd string) string {
	if branch == "" {
		branch = "(none known)"
	}
	return fmt.Sprintf(`<fork-worktree>
You do not work in your parent's tree: you run in your own git worktree at %s, on branch %s, made from the parent's tree at %s. Your working directory is %s, not the one the system prompt above names.
- Every path in the conversation above (files read, edited or listed, command output, the working directory) refers to the parent's tree at %s. Translate each to the same relative path under %s: %s/<path> is %s/<path>.
- Read a file again in your tree before you rely on it or edit it: what the conversation shows is the parent's copy, which may differ from yours.
- Read and change files only under %s. The parent's tree is not yours: writes there are refused.
- Commit your work on your branch when it is done (git add, git commit), or leave the changes in the tree: either way the worktree is kept for the parent to merge. A worktree without changes is removed when you finish. Do not check out other branches, and do not remove or move the worktree.
</fork-worktree>`, tree, branch, parentRoot, cwd, parentRoot, tree, parentRoot, tree, tree)
}
