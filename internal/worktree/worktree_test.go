package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnchangedTreeIsRemoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	l := create(t, m, repo, "a1")
	info := l.Info()
	want := Info{Path: filepath.Join(repo, ".cadre", "worktrees", "agent-a1"), Branch: "worktree-agent-a1", AgentID: "a1",
		SessionID: "s1", Root: repo, Base: BaseHead, BaseRef: "HEAD", BaseCommit: gitT(t, repo, "rev-parse", "HEAD")}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Fatalf("Info (-want +got):\n%s", diff)
	}
	assertKept(t, repo, "a1")
	if got := gitT(t, info.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "worktree-agent-a1" {
		t.Errorf("tree is on %q, want worktree-agent-a1", got)
	}
	// The trees directory is invisible to git in the main tree, and the
	// user's .gitignore is untouched.
	if st := gitT(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main tree status shows the worktree: %q", st)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".gitignore")); string(b) != "*.log\n" {
		t.Errorf(".gitignore changed: %q", b)
	}
	o, err := l.Release(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o.State != Removed || o.Changes != nil {
		t.Errorf("outcome = %+v, want removed", o)
	}
	assertGone(t, repo, "a1")
	if got := registeredTrees(t, repo); len(got) != 0 {
		t.Errorf("git still lists %v", got)
	}
}

// TestChanges drives each kind of change an agent can leave, and checks
// what is kept and how it is described.
func TestChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		act         func(t *testing.T, dir string)
		kept        bool
		commits     int
		committed   []string
		uncommitted []FileStatus
	}{
		{name: "nothing", act: func(*testing.T, string) {}},
		{name: "ignored file only", act: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "build.log"), "noise\n")
		}},
		{name: "edit", kept: true, act: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "src", "a.txt"), "one\nTWO\nthree\n")
		}, uncommitted: []FileStatus{{Path: "src/a.txt", Status: "modified"}}},
		{name: "untracked file", kept: true, act: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "notes", "new.md"), "x\n")
		}, uncommitted: []FileStatus{{Path: "notes/new.md", Status: "untracked"}}},
		{name: "deleted file", kept: true, act: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
				t.Fatal(err)
			}
		}, uncommitted: []FileStatus{{Path: "README.md", Status: "deleted"}}},
		{name: "staged new file", kept: true, act: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "b.txt"), "b\n")
			gitT(t, dir, "add", "b.txt")
		}, uncommitted: []FileStatus{{Path: "b.txt", Status: "added"}}},
		{name: "commit", kept: true, act: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "src", "c.txt"), "c\n")
			gitT(t, dir, "add", "-A")
			gitT(t, dir, "commit", "-q", "-m", "add c")
		}, commits: 1, committed: []string{"src/c.txt"}},
		{name: "commit and edit", kept: true, act: func(t *testing.T, dir string) {
			gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "empty")
			writeFile(t, filepath.Join(dir, "README.md"), "# changed\n")
		}, commits: 1, uncommitted: []FileStatus{{Path: "README.md", Status: "modified"}}},
		{name: "commit on another branch", kept: true, act: func(t *testing.T, dir string) {
			gitT(t, dir, "checkout", "-q", "-b", "side")
			writeFile(t, filepath.Join(dir, "side.txt"), "s\n")
			gitT(t, dir, "add", "-A")
			gitT(t, dir, "commit", "-q", "-m", "side work")
		}, commits: 1, committed: []string{"side.txt"}},
		{name: "branch moved back", kept: true, act: func(t *testing.T, dir string) {
			gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "one more")
			gitT(t, dir, "reset", "-q", "--hard", "HEAD~2")
		}},
		{name: "detached at base, branch deleted", act: func(t *testing.T, dir string) {
			gitT(t, dir, "checkout", "-q", "--detach")
			gitT(t, dir, "branch", "-q", "-D", "worktree-agent-"+filepath.Base(dir)[len("agent-"):])
		}},
	}
	repo := newRepo(t)
	// A second commit, so that "branch moved back" has somewhere to go.
	gitT(t, repo, "commit", "-q", "--allow-empty", "-m", "second")
	m := newManager(t)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := "c" + string(rune('a'+i))
			l := create(t, m, repo, id)
			tc.act(t, l.Info().Path)
			o, err := l.Release(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !tc.kept {
				if o.State != Removed {
					t.Fatalf("outcome %+v, want removed", o)
				}
				assertGone(t, repo, id)
				return
			}
			if o.State != Kept || o.Changes == nil {
				t.Fatalf("outcome %+v, want kept with changes", o)
			}
			assertKept(t, repo, id)
			c := o.Changes
			if c.CommitCount != tc.commits || len(c.Commits) != tc.commits {
				t.Errorf("commits = %d %v, want %d", c.CommitCount, c.Commits, tc.commits)
			}
			if diff := cmp.Diff(tc.committed, c.Committed); diff != "" {
				t.Errorf("committed files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.uncommitted, c.Uncommitted); diff != "" {
				t.Errorf("uncommitted files (-want +got):\n%s", diff)
			}
			rec, err := readRecord(o.Path)
			if err != nil || rec.EndedAt.IsZero() {
				t.Errorf("record of a kept tree: %+v, %v; want ended", rec, err)
			}
		})
	}
}

// TestFailurePathsKeepWork: an agent that fails, panics or is cancelled
// with work in its tree keeps the tree; without work the tree goes, also
// when the context is already cancelled at release.
func TestFailurePathsKeepWork(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	for _, how := range []string{"error", "panic", "cancel"} {
		for _, dirty := range []bool{true, false} {
			name := how + map[bool]string{true: " dirty", false: " clean"}[dirty]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				id := strings.ReplaceAll(name, " ", "-")
				var o Outcome
				runErr := runAgent(m, repo, id, &o, func(ctx context.Context, cancel func(), dir string) error {
					if dirty {
						writeFile(t, filepath.Join(dir, "wip.txt"), "half done\n")
					}
					switch how {
					case "panic":
						panic("the agent crashed")
					case "cancel":
						cancel()
						return ctx.Err()
					}
					return errors.New("the model failed")
				})
				if runErr == nil {
					t.Fatal("the agent did not fail")
				}
				if dirty {
					if o.State != Kept || o.Changes == nil || len(o.Changes.Uncommitted) != 1 {
						t.Fatalf("outcome %+v, want kept with wip.txt", o)
					}
					assertKept(t, repo, id)
					if b, err := os.ReadFile(filepath.Join(o.Path, "wip.txt")); err != nil || string(b) != "half done\n" {
						t.Errorf("the work is not intact: %q %v", b, err)
					}
				} else {
					if o.State != Removed {
						t.Fatalf("outcome %+v, want removed", o)
					}
					assertGone(t, repo, id)
				}
			})
		}
	}
}

// runAgent runs body as a spawn would: the lease released by a deferred
// call that runs while a panic unwinds, the panic recovered further up.
func runAgent(m *Manager, dir, id string, o *Outcome, body func(ctx context.Context, cancel func(), dir string) error) (err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := m.Create(ctx, Request{Dir: dir, AgentID: id})
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("panic")
		}
	}()
	defer func() { *o, _ = l.Release(ctx) }()
	return body(ctx, cancel, l.Info().Path)
}

func TestNestedLeaseHoldsUntilBothEnd(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	for _, childWrites := range []bool{false, true} {
		id := map[bool]string{false: "nclean", true: "ndirty"}[childWrites]
		parent := create(t, m, repo, id)
		child, err := parent.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		// The parent ends first; its child still works in the tree.
		o, err := parent.Release(context.Background())
		if err != nil || o.State != Held || o.Holders != 1 {
			t.Fatalf("parent release = %+v, %v; want held by 1", o, err)
		}
		assertKept(t, repo, id)
		if _, err := parent.Acquire(); err == nil {
			t.Error("Acquire through a released lease succeeded")
		}
		if _, err := parent.Release(context.Background()); err == nil {
			t.Error("second Release of one lease succeeded")
		}
		grandchild, err := child.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		if childWrites {
			writeFile(t, filepath.Join(child.Info().Path, "child.txt"), "from the child\n")
		}
		if o, _ := grandchild.Release(context.Background()); o.State != Held {
			t.Fatalf("grandchild release = %+v, want held", o)
		}
		final, err := child.Release(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		waited, err := parent.Wait(context.Background())
		if err != nil || !cmp.Equal(waited, final) {
			t.Errorf("Wait = %+v, %v; want the last release's outcome %+v", waited, err, final)
		}
		if childWrites {
			if final.State != Kept {
				t.Fatalf("final = %+v, want kept", final)
			}
			assertKept(t, repo, id)
		} else {
			if final.State != Removed {
				t.Fatalf("final = %+v, want removed", final)
			}
			assertGone(t, repo, id)
		}
	}
}

// TestParallelCreations: 16 agents create their trees at once, all hold
// them at the same time, and all clean up.
func TestParallelCreations(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	const n = 16
	leases := make([]*Lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			leases[i], errs[i] = m.Create(context.Background(), Request{Dir: repo, AgentID: "p" + string(rune('a'+i))})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation %d: %v", i, err)
		}
	}
	if got := registeredTrees(t, repo); len(got) != n {
		t.Fatalf("git lists %d trees, want %d", len(got), n)
	}
	outcomes := make([]Outcome, n)
	for i := range n {
		wg.Go(func() { outcomes[i], errs[i] = leases[i].Release(context.Background()) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || outcomes[i].State != Removed {
			t.Errorf("release %d = %+v, %v", i, outcomes[i], errs[i])
		}
	}
	if got := registeredTrees(t, repo); len(got) != 0 {
		t.Errorf("git still lists %v", got)
	}
	if got := treeDirs(t, repo); len(got) != 0 {
		t.Errorf("directories left: %v", got)
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	ctx := context.Background()
	plain := t.TempDir()
	if _, err := m.Create(ctx, Request{Dir: plain, AgentID: "x"}); !errors.Is(err, ErrNotGitRepo) {
		t.Errorf("outside a repository: %v, want ErrNotGitRepo", err)
	}
	empty := t.TempDir()
	gitT(t, empty, "init", "-q", "-b", "main")
	if _, err := m.Create(ctx, Request{Dir: empty, AgentID: "x"}); err == nil || !strings.Contains(err.Error(), "no commits yet") {
		t.Errorf("empty repository: %v", err)
	}
	bare := t.TempDir()
	gitT(t, bare, "init", "-q", "--bare")
	if _, err := m.Create(ctx, Request{Dir: bare, AgentID: "x"}); err == nil {
		t.Error("bare repository: no error")
	}
	repo := newRepo(t)
	for _, id := range []string{"", "-x", "a/b", "a b", "..", strings.Repeat("a", 65)} {
		if _, err := m.Create(ctx, Request{Dir: repo, AgentID: id}); err == nil {
			t.Errorf("agent id %q accepted", id)
		}
	}
	if _, err := m.Create(ctx, Request{Dir: "relative", AgentID: "x"}); err == nil {
		t.Error("relative directory accepted")
	}
	if _, err := m.Create(ctx, Request{Dir: repo, AgentID: "x", Base: "tip"}); err == nil {
		t.Error("unknown base accepted")
	}
	l := create(t, m, repo, "dup")
	if _, err := m.Create(ctx, Request{Dir: repo, AgentID: "dup"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second tree for one agent: %v", err)
	}
	assertKept(t, repo, "dup") // the failed second creation touched nothing
	if o, err := l.Release(ctx); err != nil || o.State != Removed {
		t.Errorf("release = %+v, %v", o, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Create(cancelled, Request{Dir: repo, AgentID: "cx"}); err == nil {
		t.Error("creation with a cancelled context succeeded")
	}
	assertGone(t, repo, "cx")
}

// TestNestedIsolation: a child with its own isolation inside a parent's
// worktree gets a tree under the main working tree, based on the
// parent's tree's HEAD.
func TestNestedIsolation(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	parent := create(t, m, repo, "outer")
	pdir := parent.Info().Path
	gitT(t, pdir, "commit", "-q", "--allow-empty", "-m", "parent's work")
	child := create(t, m, pdir, "inner")
	ci := child.Info()
	if ci.Path != filepath.Join(repo, TreesDir, "agent-inner") || ci.Root != repo {
		t.Errorf("nested tree at %s (root %s), want under %s", ci.Path, ci.Root, repo)
	}
	if want := gitT(t, pdir, "rev-parse", "HEAD"); ci.BaseCommit != want {
		t.Errorf("base = %s, want the parent tree's HEAD %s", ci.BaseCommit, want)
	}
	if o, err := child.Release(context.Background()); err != nil || o.State != Removed {
		t.Errorf("child release = %+v, %v", o, err)
	}
	if o, err := parent.Release(context.Background()); err != nil || o.State != Kept || o.Changes.CommitCount != 1 {
		t.Errorf("parent release = %+v, %v", o, err)
	}
}

func TestExcludeLine(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	writeFile(t, exclude, "*.tmp") // no final newline
	for i, m := range []*Manager{newManager(t), newManager(t)} {
		l := create(t, m, repo, "e"+string(rune('0'+i)))
		if _, err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(exclude)
	if want := "*.tmp\n# cadre: worktrees of isolated agents\n/.cadre/worktrees/\n"; string(b) != want {
		t.Errorf("info/exclude = %q, want %q", b, want)
	}
}

// TestPostCheckoutHook: with RunHooks (a trusted workspace) the
// repository's post-checkout hook runs in the new tree with git's
// arguments, as `git worktree add` would run it; a failing hook is a
// warning, not a failed spawn. Without RunHooks (issue 23: an untrusted
// workspace) it does not run at all.
func TestPostCheckoutHook(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	writeFile(t, hook, "#!/bin/sh\necho \"$1 $2 $3\" > hook.log\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	untrusted := newManager(t)
	l := create(t, untrusted, repo, "nohooks")
	if exists(filepath.Join(l.Info().Path, "hook.log")) {
		t.Error("the post-checkout hook ran without RunHooks")
	}
	if o, err := l.Release(context.Background()); err != nil || o.State != Removed {
		t.Errorf("release = %+v, %v", o, err)
	}
	m, err := New(Config{Env: testEnv, RunHooks: true})
	if err != nil {
		t.Fatal(err)
	}
	l = create(t, m, repo, "hooked")
	base := l.Info().BaseCommit
	b, err := os.ReadFile(filepath.Join(l.Info().Path, "hook.log"))
	if want := strings.Repeat("0", 40) + " " + base + " 1\n"; err != nil || string(b) != want {
		t.Errorf("hook.log = %q, %v; want %q", b, err, want)
	}
	if len(l.Info().Warnings) != 0 {
		t.Errorf("warnings: %v", l.Info().Warnings)
	}
	if o, err := l.Release(context.Background()); err != nil || o.State != Removed {
		t.Errorf("release = %+v, %v (the hook's ignored output is not work)", o, err)
	}

	writeFile(t, hook, "#!/bin/sh\necho broken >&2\nexit 3\n")
	l = create(t, m, repo, "hookfails")
	if w := l.Info().Warnings; len(w) != 1 || !strings.Contains(w[0], "post-checkout hook failed") || !strings.Contains(w[0], "broken") {
		t.Errorf("warnings = %v", w)
	}
	if !exists(filepath.Join(l.Info().Path, "src", "a.txt")) {
		t.Error("the tree is not checked out")
	}
	l.Release(context.Background())
}
