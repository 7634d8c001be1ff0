package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
)

// TestForkInWorktree: a fork started with isolation: worktree (S-6.4) runs
// in its own git worktree of a real repository. It keeps its parent's
// system prompt bytes and inherited history (whose paths name the
// parent's tree); after its directive it is told both roots and that
// those paths must be translated and read again; its working directory is
// its tree, so a relative write and a commit land there and the parent's
// tree is untouched.
func TestForkInWorktree(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	cfg.ForkSubagent, cfg.Background = true, BackgroundOff
	h.srv.Script("MAIN",
		llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(h.dir, "a.txt")}),
		llmtest.ToolUse("Agent", isolated("FORK-W: add b.txt and commit it")))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isForkRequest(r):
			return llmtest.ToolUse("Bash", map[string]any{"command": "git rev-parse --show-toplevel && echo b > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -qm 'add b'"})
		case hasForkRules(r):
			return llmtest.Text("committed b.txt")
		}
		return llmtest.Text("done")
	})
	evs, res, _ := mustRun(t, cfg, "MAIN: read, then fork into a worktree")
	if res.Subagents.Completed != 1 || res.Text != "done" {
		t.Fatalf("result %q, subagents %+v", res.Text, res.Subagents)
	}
	var w *run.WorktreeOutcome
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			if ev.Subagent.AgentType != agentdef.ForkName {
				t.Fatalf("completed %s, want a fork", ev.Subagent.AgentType)
			}
			w = ev.Subagent.Worktree
		}
	}
	if w == nil || w.State != run.WorktreeKept || w.CommitCount != 1 || !strings.HasPrefix(w.Path, filepath.Join(h.dir, ".cadre", "worktrees")) {
		t.Fatalf("fork's worktree %+v", w)
	}

	all := h.srv.RequestsFor("MAIN")
	parent := all[0]
	var first, second *llmtest.Request
	for _, r := range all {
		switch {
		case isForkRequest(r):
			first = r
		case hasForkRules(r) && second == nil:
			second = r
		}
	}
	if first == nil || second == nil {
		t.Fatalf("fork requests: first %v, second %v", first != nil, second != nil)
	}
	// The parent's system prompt bytes; the parent's Read of its own
	// tree in the inherited history.
	if first.System != parent.System {
		t.Fatal("the fork's system prompt differs from its parent's")
	}
	contains(t, first.System, h.dir)
	// Directive, then the worktree block with both roots.
	last := first.Messages[len(first.Messages)-1]
	n := len(last.Content)
	if n < 3 || last.Content[n-1].Type != llm.BlockText || last.Content[n-2].Type != llm.BlockText {
		t.Fatalf("fork's last message %+v", last)
	}
	if want := prompts.ForkWorktree(w.Path, w.Branch, h.dir, w.Path); last.Content[n-1].Text != want {
		t.Fatalf("worktree block:\n%s\nwant:\n%s", last.Content[n-1].Text, want)
	}
	contains(t, last.Content[n-2].Text, "FORK-W: add b.txt and commit it")
	if !prompts.IsForkRules(last.Content[n-3].Text) {
		t.Fatalf("block before the directive is not the fork rules: %q", last.Content[n-3].Text)
	}
	// Its working directory is its tree: git there names the tree, and
	// the relative write and the commit are the tree's, not the parent's.
	out := second.LastToolResults()
	if len(out) != 1 || out[0].IsError || strings.TrimSpace(out[0].ResultText()) != w.Path {
		t.Fatalf("the fork's Bash in its tree gave %+v, want %s", out, w.Path)
	}
	if _, err := os.Stat(filepath.Join(w.Path, "b.txt")); err != nil {
		t.Fatalf("b.txt not in the fork's tree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt reached the parent's tree: %v", err)
	}
	contains(t, h.toolResults("MAIN")[0], "worktree kept: "+w.Path)
}
