package prompts

import (
	"strings"
	"testing"
)

func TestForkTextsGolden(t *testing.T) {
	rules := ForkRules()
	golden(t, "fork-rules", rules)
	if !IsForkRules(rules) || IsForkRules("x "+rules) {
		t.Fatal("IsForkRules does not recognise exactly the rules block")
	}
	if strings.Count(rules, "<"+ForkTag+">") != 1 || !strings.HasSuffix(rules, "</"+ForkTag+">") {
		t.Fatalf("rules not wrapped once in the fork tag:\n%s", rules)
	}
	golden(t, "fork-agent-tool", AgentToolFork("- general-purpose: anything (Tools: *)\n"))
	var b strings.Builder
	for _, s := range []string{
		ForkPlaceholder,
		ForkDirective("toolu_01", "  Fix the parser.\n"),
		ForkNested(),
		ForkUnavailable(ForkUserAgentReason("/p/.cadre/agents/fork.md"), "general-purpose"),
		ForkUnavailable(ForkDeniedReason("Agent(fork)", ""), "general-purpose"),
		ForkListingLine(ForkDeniedReason("Agent(fork)", "/p/.cadre/settings.json")),
		ForkIgnoredArgument("model", "opus", "claude-sonnet-4-5"),
		ForkListingLine(ForkNotAllowedReason()),
	} {
		b.WriteString(s + "\n---\n")
	}
	golden(t, "fork-messages", b.String())
	golden(t, "fork-worktree", ForkWorktree("/r/.cadre/worktrees/agent-a1", "worktree-agent-a1", "/r", "/r/.cadre/worktrees/agent-a1/sub")+
		"\n---\n"+ForkWorktree("/hooks/agent-a1", "", "/r", "/hooks/agent-a1"))
	// The fork description is the usual one with the fork default and
	// section: the listing and the rest stay the same bytes.
	plain := AgentTool("L", "general-purpose")
	fork := AgentToolFork("L")
	if !strings.HasPrefix(fork, strings.SplitN(plain, "Pick the type", 2)[0]) {
		t.Fatal("fork description does not share the usual description's start")
	}
}
