package engine

import (
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// gitRepo makes a repository with one commit (a.txt) in a fresh temp dir
// and returns its canonical path.
func gitRepo(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "add", "a.txt")
	runGit(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// runGit runs git in dir with a fixed identity and no user config.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitTestEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var gitTestEnv = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}

func isolated(prompt string) map[string]any {
	in := agentCall("", prompt)
	in["isolation"] = "worktree"
	return in
}

var treeRE = regexp.MustCompile(`You work in your own git worktree at (\S+), on branch (\S+),`)

// treeOf reads the worktree path an isolated child was told.
func treeOf(t testing.TB, r *llmtest.Request) string {
	m := treeRE.FindStringSubmatch(r.System)
	if m == nil {
		t.Errorf("the child was not told about its worktree:\n%s", r.System)
		return "/nonexistent"
	}
	return m[1]
}

// leftTrees lists the agents' worktrees git knows and the directories on
// disk, which must agree.
func leftTrees(t testing.TB, repo string) []string {
	t.Helper()
	var git []string
	for l := range strings.SplitSeq(runGit(t, repo, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && p != repo {
			git = append(git, p)
		}
	}
	disk, _ := filepath.Glob(filepath.Join(repo, ".cadre", "worktrees", "agent-*"))
	disk = slices.DeleteFunc(disk, func(p string) bool { return strings.HasSuffix(p, ".json") })
	slices.Sort(git)
	slices.Sort(disk)
	if !slices.Equal(git, disk) {
		t.Errorf("git worktree list %v != directories %v", git, disk)
	}
	return disk
}

func branches(t testing.TB, repo string) []string {
	return strings.Fields(runGit(t, repo, "branch", "--format=%(refname:short)"))
}

// wtHarness is a harness whose directory is a git repository.
func wtHarness(t *testing.T) (*harness, Config) {
	h := newHarness(t)
	h.dir = gitRepo(t)
	cfg := h.config()
	// Bypass mode still confines a worktree child with Edit deny rules, so
	// git (a program cadre cannot see into) needs a rule naming it to run
	// (README: worktree isolation).
	cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions,
		Rules: []permission.Rule{{Behavior: permission.Allow, Tool: "Bash", Content: "git:*", Source: "test"}}}
	return h, cfg
}

func TestWorktreeUnchangedChildLeavesNothing(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD-1: look around")), llmtest.Text("done"))
	var seen string
	h.srv.ScriptFunc("CHILD-1", func(r *llmtest.Request) llmtest.Turn {
		seen = treeOf(t, r)
		if st, err := os.Stat(seen); err != nil || !st.IsDir() {
			t.Errorf("worktree %s does not exist while the child runs: %v", seen, err)
		}
		return llmtest.Text("nothing to change")
	})
	evs, res, rt := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != 1 {
		t.Fatalf("stats %+v", res.Subagents)
	}
	if !strings.Contains(string(rt.mainSpec.spec.InputSchema), `"isolation"`) {
		t.Fatalf("inside a repository the schema offers isolation: %s", rt.mainSpec.spec.InputSchema)
	}
	report := h.toolResults("MAIN")[0]
	contains(t, report, "made no changes; the worktree and branch worktree-agent-")
	if left := leftTrees(t, h.dir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	if b := branches(t, h.dir); !slices.Equal(b, []string{"main"}) {
		t.Fatalf("branches %v", b)
	}
	if _, err := os.Stat(seen + ".json"); !os.IsNotExist(err) {
		t.Fatalf("record left: %v", err)
	}
	req := h.srv.RequestsFor("CHILD-1")[0]
	contains(t, req.System, "Paths in your instructions or in any conversation you inherited refer to the parent's tree")
	contains(t, req.System, "Working directory: "+seen)
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			w := ev.Subagent.Worktree
			if w == nil || w.State != run.WorktreeRemoved || w.Path != seen || ev.Subagent.Receipt.Worktree != seen {
				t.Fatalf("structured result %+v", ev.Subagent)
			}
		}
	}
	// git status of the user's tree is untouched: .cadre/worktrees is
	// excluded through info/exclude, not .gitignore.
	if s := runGit(t, h.dir, "status", "--porcelain"); s != "" {
		t.Fatalf("status %q", s)
	}
}

// TestWorktreeChangedChildIsKept: a dirty tree, a commit, an untracked
// file — each kept and reported with path, branch and files.
func TestWorktreeChangedChildIsKept(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// calls returns the child's tool calls given its tree.
		calls func(tree string) []llmtest.Turn
		want  []string
	}{
		{"edit", func(tree string) []llmtest.Turn {
			return []llmtest.Turn{
				llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(tree, "a.txt")}),
				llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(tree, "a.txt"), "content": "two\n"}),
			}
		}, []string{"uncommitted changes:\n  modified a.txt"}},
		{"untracked", func(tree string) []llmtest.Turn {
			return []llmtest.Turn{llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(tree, "new.txt"), "content": "x\n"})}
		}, []string{"uncommitted changes:\n  untracked new.txt"}},
		{"commit", func(tree string) []llmtest.Turn {
			return []llmtest.Turn{
				llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(tree, "b.txt"), "content": "b\n"}),
				llmtest.ToolUse("Bash", map[string]any{"command": "git add b.txt && git -c user.name=t -c user.email=t@t commit -q -m 'add b'"}),
			}
		}, []string{"commits (1):", " add b", "files changed by the commits:\n  b.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: work")), llmtest.Text("done"))
			var mu sync.Mutex
			var tree string
			var turns []llmtest.Turn
			h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
				mu.Lock()
				defer mu.Unlock()
				if tree == "" {
					tree = treeOf(t, r)
					turns = append(c.calls(tree), llmtest.Text("changed things"))
				}
				for _, tr := range r.LastToolResults() {
					if tr.IsError {
						t.Errorf("tool failed: %s", tr.ResultText())
					}
				}
				next := turns[0]
				turns = turns[1:]
				return next
			})
			_, res, _ := mustRun(t, cfg, "MAIN: go")
			if res.Subagents.Completed != 1 {
				t.Fatalf("stats %+v", res.Subagents)
			}
			report := h.toolResults("MAIN")[0]
			contains(t, report, "worktree kept: "+tree+"\nbranch: worktree-agent-")
			for _, w := range c.want {
				contains(t, report, w)
			}
			if left := leftTrees(t, h.dir); !slices.Equal(left, []string{tree}) {
				t.Fatalf("left %v, want %s", left, tree)
			}
			if !slices.Contains(branches(t, h.dir), "worktree-agent-"+strings.TrimPrefix(filepath.Base(tree), "agent-")) {
				t.Fatalf("branch gone: %v", branches(t, h.dir))
			}
			// The parent's tree is untouched.
			if b, _ := os.ReadFile(filepath.Join(h.dir, "a.txt")); string(b) != "one\n" {
				t.Fatalf("parent's a.txt = %q", b)
			}
		})
	}
}

// crashingModel panics on the second request of an agent whose prompt holds
// key: a crash in the middle of a child's run.
type crashingModel struct {
	llm.Model
	key string
}

func (m crashingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if len(req.Messages) > 1 && strings.Contains(req.Messages[0].Text(), m.key) {
		panic("the model adapter crashed")
	}
	return m.Model.Stream(ctx, req)
}

// TestWorktreeKeptOnErrorPanicAndCancel: a child that wrote a file and
// then failed, crashed or was cancelled leaves its tree with the file.
func TestWorktreeKeptOnErrorPanicAndCancel(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"error", "panic", "cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: work")), llmtest.Text("done"))
			var tree string
			h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
				if len(r.Messages) == 1 {
					tree = treeOf(t, r)
					return llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(tree, "work.txt"), "content": "w\n"})
				}
				return llmtest.HTTPError(400, "the request is bad")
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "panic" {
				cfg.Model = crashingModel{cfg.Model, "CHILD"}
			}
			rt, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var res *run.Result
			for ev, err := range rt.Run(ctx, "MAIN: go") {
				if err != nil {
					if how != "cancel" {
						t.Fatal(err)
					}
					break
				}
				if how == "cancel" && ev.Type == run.EventToolEnd && ev.AgentID != "" {
					cancel() // the Write is done; the child is cancelled mid-run
				}
				if ev.Type == run.EventResult {
					res = ev.Result
				}
			}
			if how != "cancel" {
				if res == nil || res.Subagents.Failed != 1 {
					t.Fatalf("result %+v", res)
				}
				report := h.toolResults("MAIN")[0]
				contains(t, report, "worktree kept: "+tree)
				contains(t, report, "untracked work.txt")
			}
			if b, err := os.ReadFile(filepath.Join(tree, "work.txt")); err != nil || string(b) != "w\n" {
				t.Fatalf("the work is gone: %q %v", b, err)
			}
			if left := leftTrees(t, h.dir); !slices.Equal(left, []string{tree}) {
				t.Fatalf("left %v", left)
			}
		})
	}
}

// TestWorktreeNestedChildSharesTheLease: a child of an isolated child,
// without isolation of its own, works in the same tree, which lives until
// both have ended.
func TestWorktreeNestedChildSharesTheLease(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: delegate")), llmtest.Text("done"))
	var tree string
	h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			tree = treeOf(t, r)
			return llmtest.ToolUse("Agent", agentCall("", "GRANDCHILD: write a note"))
		}
		return llmtest.Text("delegated")
	})
	h.srv.ScriptFunc("GRANDCHILD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			contains(t, r.System, "Working directory: "+tree)
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo n > note.txt"})
		}
		if _, err := os.Stat(tree); err != nil {
			t.Errorf("the tree is gone while the grandchild runs: %v", err)
		}
		return llmtest.Text("wrote it")
	})
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != 2 {
		t.Fatalf("stats %+v", res.Subagents)
	}
	if b, err := os.ReadFile(filepath.Join(tree, "note.txt")); err != nil || string(b) != "n\n" {
		t.Fatalf("the grandchild's note is not in the tree: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "note.txt")); !os.IsNotExist(err) {
		t.Fatalf("the grandchild wrote in the parent's tree: %v", err)
	}
	contains(t, h.toolResults("MAIN")[0], "untracked note.txt")
}

// TestWorktreeSixteenAtOnce: sixteen isolated children started in one
// message all get a tree, and all trees are removed.
func TestWorktreeSixteenAtOnce(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	const n = 16
	var calls []llmtest.Call
	for i := range n {
		calls = append(calls, llmtest.Call{Name: "Agent", Input: isolated(fmt.Sprintf("KID-%02d: look", i))})
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("done"))
	var mu sync.Mutex
	trees := map[string]bool{}
	for i := range n {
		h.srv.ScriptFunc(fmt.Sprintf("KID-%02d", i), func(r *llmtest.Request) llmtest.Turn {
			mu.Lock()
			trees[treeOf(t, r)] = true
			mu.Unlock()
			return llmtest.Text("ok")
		})
	}
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != n || len(trees) != n {
		t.Fatalf("stats %+v, %d trees", res.Subagents, len(trees))
	}
	for _, r := range h.toolResults("MAIN") {
		contains(t, r, "made no changes")
	}
	if left := leftTrees(t, h.dir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	if b := branches(t, h.dir); !slices.Equal(b, []string{"main"}) {
		t.Fatalf("branches %v", b)
	}
}

// TestWorktreeOutsideRepository: no isolation in the schema, and a call
// that asks anyway gets an error result and starts nothing.
func TestWorktreeOutsideRepository(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: x")), llmtest.Text("done"))
	_, res, rt := mustRun(t, h.config(), "MAIN: go")
	if strings.Contains(string(rt.mainSpec.spec.InputSchema), `"isolation"`) {
		t.Fatalf("outside a repository the schema offers isolation: %s", rt.mainSpec.spec.InputSchema)
	}
	if res.Subagents.Spawned != 0 || len(h.srv.RequestsFor("CHILD")) != 0 {
		t.Fatalf("a child started: %+v", res.Subagents)
	}
	contains(t, h.toolResults("MAIN")[0], "isolation: worktree needs a git repository, and "+h.dir+" is not inside one. No agent was started.")
}

// TestWorktreeIsolationRefusals: cwd with isolation, and unknown kinds.
func TestWorktreeIsolationRefusals(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	withCwd := isolated("CHILD: x")
	withCwd["cwd"] = h.dir
	remote := agentCall("", "CHILD: y")
	remote["isolation"] = "remote"
	h.srv.Script("MAIN", llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: withCwd}, llmtest.Call{Name: "Agent", Input: remote}), llmtest.Text("done"))
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Spawned != 0 {
		t.Fatalf("stats %+v", res.Subagents)
	}
	out := h.toolResults("MAIN")
	contains(t, out[0], "cwd and isolation: worktree exclude each other")
	contains(t, out[1], "isolation: remote is not available")
}

// TestWorktreeDefinitionIsolation: `isolation: worktree` in a definition
// isolates every child of that type.
func TestWorktreeDefinitionIsolation(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	def, diags := agentdef.ParseFile("/defs/worker.md", []byte("---\nname: worker\ndescription: does work\nisolation: worktree\n---\nYou work.\n"), agentdef.SourceProject)
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	cfg.Agents = append(agentdef.Builtins(), def)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("worker", "CHILD: go")), llmtest.Text("done"))
	var tree string
	h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
		tree = treeOf(t, r)
		return llmtest.Text("ok")
	})
	mustRun(t, cfg, "MAIN: go")
	if !strings.Contains(tree, "/.cadre/worktrees/agent-a") {
		t.Fatalf("tree %q", tree)
	}
}

// TestWorktreeChildCannotWriteParentTree: through the loop, in
// acceptEdits and in bypassPermissions, the child's writes to the
// parent's tree are denied (Write and a Bash redirection), its writes in
// its own tree allowed.
func TestWorktreeChildCannotWriteParentTree(t *testing.T) {
	t.Parallel()
	for _, mode := range []permission.Mode{permission.ModeAcceptEdits, permission.ModeBypassPermissions} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			cfg.Permissions = &Permissions{Mode: mode}
			parentFile := filepath.Join(h.dir, "a.txt")
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: work")), llmtest.Text("done"))
			var tree string
			h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					tree = treeOf(t, r)
					return llmtest.ToolUses(
						llmtest.Call{Name: "Write", Input: map[string]any{"file_path": parentFile, "content": "clobbered\n"}},
						llmtest.Call{Name: "Bash", Input: map[string]any{"command": "echo clobbered > " + parentFile}},
						llmtest.Call{Name: "Write", Input: map[string]any{"file_path": filepath.Join(tree, "mine.txt"), "content": "mine\n"}},
					)
				}
				return llmtest.Text("tried")
			})
			_, res, _ := mustRun(t, cfg, "MAIN: go")
			out := h.toolResults("CHILD")
			if len(out) != 3 {
				t.Fatalf("results %q", out)
			}
			for _, o := range out[:2] {
				contains(t, o, IsolationRuleSource)
			}
			if strings.Contains(out[2], "denied") {
				t.Fatalf("write in the own tree refused: %s", out[2])
			}
			if b, _ := os.ReadFile(parentFile); string(b) != "one\n" {
				t.Fatalf("parent's file = %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(tree, "mine.txt")); string(b) != "mine\n" {
				t.Fatalf("tree's file = %q", b)
			}
			if len(res.PermissionDenials) != 2 {
				t.Fatalf("denials %+v", res.PermissionDenials)
			}
		})
	}
}

var agentIDRE = regexp.MustCompile(`agent_id: (a[0-9a-f]{16})`)

// TestWorktreeMergeBack: a kept child's work is merged into the parent's
// tree by the MergeWorktree tool; a conflicting one is reported and
// leaves the parent's tree clean.
func TestWorktreeMergeBack(t *testing.T) {
	t.Parallel()
	for _, conflict := range []bool{false, true} {
		t.Run(fmt.Sprintf("conflict=%v", conflict), func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					return llmtest.ToolUse("Agent", isolated("CHILD: change a"))
				case 3:
					report := r.LastToolResults()[0].ResultText()
					m := agentIDRE.FindStringSubmatch(report)
					if m == nil {
						t.Errorf("no agent id in %s", report)
						return llmtest.Text("lost")
					}
					if conflict {
						// Meanwhile the parent's tree changed the same line.
						if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("parent\n"), 0o644); err != nil {
							t.Error(err)
						}
						runGit(t, h.dir, "commit", "-q", "-am", "parent's change")
					}
					return llmtest.ToolUse("MergeWorktree", map[string]any{"agent_id": m[1]})
				}
				return llmtest.Text("merged")
			})
			h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
				if len(r.Messages) == 1 {
					return llmtest.ToolUse("Bash", map[string]any{"command": "echo child > a.txt"})
				}
				return llmtest.Text("changed a")
			})
			_, res, rt := mustRun(t, cfg, "MAIN: go")
			if !slices.Contains(rt.ToolNames(), "MergeWorktree") {
				t.Fatalf("tools %v", rt.ToolNames())
			}
			out := h.srv.RequestsFor("MAIN")[2].LastToolResults()[0]
			if s := runGit(t, h.dir, "status", "--porcelain"); s != "" {
				t.Fatalf("the parent's tree is not clean: %q", s)
			}
			if _, err := os.Stat(filepath.Join(h.dir, ".git", "MERGE_HEAD")); !os.IsNotExist(err) {
				t.Fatalf("a merge is left in progress: %v", err)
			}
			a, _ := os.ReadFile(filepath.Join(h.dir, "a.txt"))
			if conflict {
				if !out.IsError {
					t.Fatalf("a conflict is an error result: %s", out.ResultText())
				}
				contains(t, out.ResultText(), "stopped on conflicts and was aborted")
				contains(t, out.ResultText(), "conflicting files:\n  a.txt")
				if string(a) != "parent\n" {
					t.Fatalf("a.txt = %q", a)
				}
				if left := leftTrees(t, h.dir); len(left) != 1 {
					t.Fatalf("the kept tree must stay after a conflict: %v", left)
				}
				return
			}
			if out.IsError || string(a) != "child\n" {
				t.Fatalf("merge: %s; a.txt = %q", out.ResultText(), a)
			}
			contains(t, out.ResultText(), "Merged worktree-agent-")
			contains(t, out.ResultText(), "The worktree and its branch were removed.")
			if left := leftTrees(t, h.dir); len(left) != 0 {
				t.Fatalf("left %v", left)
			}
			_ = res
		})
	}
}

// fakeHooks makes worktrees as plain directories, as a WorktreeCreate
// hook for another version control system would.
type fakeHooks struct {
	root    string
	mu      sync.Mutex
	removed []WorktreeHookRequest
}

func (f *fakeHooks) HandlesWorktrees() bool { return true }

func (f *fakeHooks) CreateWorktree(_ context.Context, req WorktreeHookRequest) (string, error) {
	p := filepath.Join(f.root, req.Name)
	return p, os.Mkdir(p, 0o755)
}

func (f *fakeHooks) RemoveWorktree(_ context.Context, req WorktreeHookRequest) error {
	f.mu.Lock()
	f.removed = append(f.removed, req)
	f.mu.Unlock()
	return os.RemoveAll(req.Path)
}

// TestWorktreeHooksSeam: with WorktreeHooks handling worktrees, isolation
// works outside git; the child runs in the hook's directory, which the
// remove hook gets when the child ends.
func TestWorktreeHooksSeam(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	hk := &fakeHooks{root: t.TempDir()}
	cfg.WorktreeHooks = hk
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: x")), llmtest.Text("done"))
	var cwd string
	h.srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
		m := regexp.MustCompile(`Working directory: (\S+)`).FindStringSubmatch(r.System)
		if m != nil {
			cwd = m[1]
		}
		return llmtest.Text("ok")
	})
	_, res, rt := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != 1 || !strings.Contains(string(rt.mainSpec.spec.InputSchema), `"isolation"`) {
		t.Fatalf("stats %+v", res.Subagents)
	}
	if len(hk.removed) != 1 || hk.removed[0].Path != cwd || !strings.HasPrefix(cwd, hk.root) || hk.removed[0].SessionID != rt.SessionID() {
		t.Fatalf("removed %+v, child cwd %s", hk.removed, cwd)
	}
	contains(t, h.toolResults("MAIN")[0], "worktree: "+cwd+" was removed.")
}

var worktreeAgents = flag.Int("worktree-agents", 40, "isolated children in TestWorktreePropertyThroughRuntime")

// TestWorktreePropertyThroughRuntime: many isolated children at once, each
// with a random outcome (no change, edit, commit, untracked file, model
// error, panic): afterwards exactly the changed trees are left, each with
// its work, and git agrees with the disk. -worktree-agents sets how many.
func TestWorktreePropertyThroughRuntime(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	cfg.Model = crashingModel{cfg.Model, "PANIC"}
	n := *worktreeAgents
	outcomes := []string{"none", "edit", "commit", "untracked", "error", "panic"}
	rng := rand.New(rand.NewPCG(uint64(n), 13))
	var calls []llmtest.Call
	want := map[string]string{} // key → outcome
	for i := range n {
		o := outcomes[rng.IntN(len(outcomes))]
		key := fmt.Sprintf("KID-%03d-%s", i, strings.ToUpper(o))
		want[key] = o
		calls = append(calls, llmtest.Call{Name: "Agent", Input: isolated(key + ": work")})
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("done"))
	var mu sync.Mutex
	trees := map[string]string{} // key → tree
	for key, o := range want {
		h.srv.ScriptFunc(key, func(r *llmtest.Request) llmtest.Turn {
			tree := treeOf(t, r)
			mu.Lock()
			trees[key] = tree
			mu.Unlock()
			if len(r.Messages) > 1 {
				if o == "error" {
					return llmtest.HTTPError(400, "bad request")
				}
				return llmtest.Text("finished")
			}
			switch o {
			case "edit":
				return llmtest.ToolUse("Bash", map[string]any{"command": "echo " + key + " > a.txt"})
			case "commit":
				return llmtest.ToolUse("Bash", map[string]any{"command": "echo " + key + " > c.txt && git add c.txt && git -c user.name=t -c user.email=t@t commit -q -m " + key})
			case "untracked", "error", "panic":
				return llmtest.ToolUse("Bash", map[string]any{"command": "echo " + key + " > u.txt"})
			}
			return llmtest.Text("nothing to do")
		})
	}
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Spawned != n {
		t.Fatalf("stats %+v", res.Subagents)
	}
	var wantLeft []string
	for key, o := range want {
		tree := trees[key]
		if o == "none" {
			continue
		}
		wantLeft = append(wantLeft, tree)
		file := map[string]string{"edit": "a.txt", "commit": "c.txt"}[o]
		if file == "" {
			file = "u.txt"
		}
		if b, err := os.ReadFile(filepath.Join(tree, file)); err != nil || string(b) != key+"\n" {
			t.Errorf("%s (%s): the work in %s is lost: %q %v", key, o, tree, b, err)
		}
	}
	slices.Sort(wantLeft)
	if left := leftTrees(t, h.dir); !slices.Equal(left, wantLeft) {
		t.Fatalf("left %d trees, want the %d changed ones:\n%v\n%v", len(left), len(wantLeft), left, wantLeft)
	}
	if got := len(branches(t, h.dir)); got != len(wantLeft)+1 {
		t.Fatalf("%d branches for %d kept trees", got, len(wantLeft))
	}
}

// TestWorktreeCrashHelper is the process TestWorktreeKilledRunLeavesTrees
// kills: a session with two isolated children, one of which has written
// a file, both waiting on the model when it prints READY.
func TestWorktreeCrashHelper(t *testing.T) {
	repo := os.Getenv("CADRE_WORKTREE_CRASH_REPO")
	if repo == "" {
		t.Skip("run by TestWorktreeKilledRunLeavesTrees")
	}
	h := newHarness(t)
	h.dir = repo
	cfg := h.config()
	var mu sync.Mutex
	waiting := 0
	block := func() llmtest.Turn {
		mu.Lock()
		waiting++
		if waiting == 2 {
			fmt.Println("READY")
		}
		mu.Unlock()
		select {} // killed here
	}
	h.srv.Script("MAIN", llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: isolated("CLEAN: wait")}, llmtest.Call{Name: "Agent", Input: isolated("DIRTY: write")}))
	h.srv.ScriptFunc("CLEAN", func(*llmtest.Request) llmtest.Turn { return block() })
	h.srv.ScriptFunc("DIRTY", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo work > u.txt"})
		}
		return block()
	})
	mustRun(t, cfg, "MAIN: go")
}

// TestWorktreeKilledRunLeavesTrees: a session killed with kill -9 leaves
// its trees; the next session's start removes the unchanged one and
// reports the changed one, which keeps its work.
func TestWorktreeKilledRunLeavesTrees(t *testing.T) {
	t.Parallel()
	h, cfg := wtHarness(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorktreeCrashHelper$", "-test.count=1")
	// The helper is killed, so its own t.TempDir is never removed: its
	// temporary directories go under this test's, which is.
	cmd.Env = append(os.Environ(), "CADRE_WORKTREE_CRASH_REPO="+h.dir, "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool)
	go func() {
		b := make([]byte, 4096)
		var seen strings.Builder
		for {
			n, err := out.Read(b)
			seen.Write(b[:n])
			if strings.Contains(seen.String(), "READY") {
				ready <- true
				_, _ = io.Copy(io.Discard, out)
				return
			}
			if err != nil {
				ready <- false
				return
			}
		}
	}()
	if !<-ready {
		_ = cmd.Wait()
		t.Fatal("the helper ended before its children were ready")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	before := leftTrees(t, h.dir)
	if len(before) != 2 {
		t.Fatalf("the killed session left %v, want two trees", before)
	}

	h.srv.Script("MAIN", llmtest.Text("hello"))
	evs, _, _ := mustRun(t, cfg, "MAIN: hi")
	house := evs[0].Init.Worktrees
	if house == nil || len(house.Removed) != 1 || len(house.Left) != 1 || house.Error != "" {
		t.Fatalf("housekeeping %+v", house)
	}
	kept := house.Left[0]
	if b, err := os.ReadFile(filepath.Join(kept.Path, "u.txt")); err != nil || string(b) != "work\n" || kept.Files != 1 {
		t.Fatalf("the changed tree %+v lost its work: %q %v", kept, b, err)
	}
	if left := leftTrees(t, h.dir); !slices.Equal(left, []string{kept.Path}) {
		t.Fatalf("left %v, want only %s", left, kept.Path)
	}
	if !slices.Contains(before, house.Removed[0]) {
		t.Fatalf("removed %s, not one of %v", house.Removed[0], before)
	}
}

// TestWorktreeBashUnderConfinement: without the sandbox, a program cadre
// cannot see into could write the parent's tree, so a confined child's
// `git commit` needs a Bash allow rule that names git (or the sandbox) —
// also in bypassPermissions; with the rule it commits in its tree.
func TestWorktreeBashUnderConfinement(t *testing.T) {
	t.Parallel()
	for _, allowGit := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow-git=%v", allowGit), func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions}
			if allowGit {
				cfg.Permissions.Rules = []permission.Rule{{Behavior: permission.Allow, Tool: "Bash", Content: "git:*", Source: "test"}}
			}
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: commit")), llmtest.Text("done"))
			h.srv.Script("CHILD", llmtest.ToolUse("Bash", map[string]any{"command": "echo x > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -qm b"}), llmtest.Text("ok"))
			mustRun(t, cfg, "MAIN: go")
			out := h.toolResults("CHILD")[0]
			report := h.toolResults("MAIN")[0]
			if !allowGit {
				contains(t, out, "from worktree isolation protects paths it could reach")
				contains(t, report, "made no changes")
				return
			}
			if strings.Contains(out, "denied") {
				t.Fatalf("git was allowed by a rule: %s", out)
			}
			contains(t, report, "commits (1):")
		})
	}
}
