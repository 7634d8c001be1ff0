package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/worktree"
)

// testEnv keeps the tests' own git commands off the machine's
// configuration and gives the commits they make an author; the package
// under test runs git with the process's environment (no identity in CI,
// where cadre's fallback identity commits the uncommitted work).
var testEnv = []string{
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=cadre test", "GIT_AUTHOR_EMAIL=test@cadre.invalid",
	"GIT_COMMITTER_NAME=cadre test", "GIT_COMMITTER_EMAIL=test@cadre.invalid",
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), testEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func canon(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fleet is a repository published in a bare upstream, the launcher's
// clone of it and a worker's root directory holding its own clone (made
// before the launcher's last commit) beside an unrelated repository.
type fleet struct {
	upstream, launcher, workerRoot, workerClone, other string
}

func newFleet(t *testing.T) fleet {
	t.Helper()
	base := canon(t, t.TempDir())
	f := fleet{upstream: filepath.Join(base, "upstream.git"), launcher: filepath.Join(base, "launcher"),
		workerRoot: filepath.Join(base, "worker")}
	seed := filepath.Join(base, "seed")
	gitT(t, base, "init", "-q", "-b", "main", seed)
	write(t, filepath.Join(seed, "README.md"), "# project\n")
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "-q", "-m", "initial")
	gitT(t, base, "clone", "-q", "--bare", seed, f.upstream)
	gitT(t, base, "clone", "-q", f.upstream, f.launcher)
	if err := os.MkdirAll(f.workerRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	f.other = filepath.Join(f.workerRoot, "aaa-other")
	gitT(t, base, "init", "-q", "-b", "main", f.other)
	write(t, filepath.Join(f.other, "x"), "x\n")
	gitT(t, f.other, "add", "-A")
	gitT(t, f.other, "commit", "-q", "-m", "unrelated")
	f.workerClone = filepath.Join(f.workerRoot, "project")
	gitT(t, base, "clone", "-q", f.upstream, f.workerClone)
	// The launcher moves on after the worker cloned, and publishes.
	write(t, filepath.Join(f.launcher, "src", "lib.go"), "package lib\n")
	gitT(t, f.launcher, "add", "-A")
	gitT(t, f.launcher, "commit", "-q", "-m", "launcher's work")
	gitT(t, f.launcher, "push", "-q", "origin", "main")
	return f
}

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func manager(t *testing.T) *worktree.Manager {
	t.Helper()
	m, err := worktree.New(worktree.Config{Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A remote agent's round trip between two clones that share no disk but
// an upstream: the worker picks its clone of the launcher's repository
// (not the unrelated one beside it), fetches the launcher's commit it
// lacks, works in a fresh tree at it, and its commit and its uncommitted
// file travel back as a bundle that lands as worktree-agent-<id>, kept
// for `cadre worktrees merge`, while the worker's clone is left clean.
func TestRoundTripLandsTheAgentsWorkAsItsBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	if want := gitT(t, f.launcher, "rev-parse", "HEAD"); src.Commit != want {
		t.Fatalf("source commit %s, want the launcher's HEAD %s", src.Commit, want)
	}
	if src.Remote != NormalizeRemote(f.upstream) || src.Remote == "" {
		t.Fatalf("source remote %q, want the normalised %q", src.Remote, f.upstream)
	}
	// The source travels as JSON.
	raw, _ := json.Marshal(src)
	var got Source
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, Config{Roots: []string{f.workerRoot}})
	co, err := pool.Checkout(ctx, got, "a1b2", "sess")
	if err != nil {
		t.Fatal(err)
	}
	if co.Clone() != f.workerClone {
		t.Fatalf("picked clone %s, want %s", co.Clone(), f.workerClone)
	}
	if head := gitT(t, co.Dir(), "rev-parse", "HEAD"); head != src.Commit {
		t.Fatalf("the tree starts at %s, want the launcher's commit %s", head, src.Commit)
	}
	if _, err := os.Stat(filepath.Join(co.Dir(), "src", "lib.go")); err != nil {
		t.Fatalf("the launcher's file is not in the worker's tree: %v", err)
	}
	// The agent commits once and leaves a file uncommitted.
	write(t, filepath.Join(co.Dir(), "feature.txt"), "feature\n")
	gitT(t, co.Dir(), "add", "feature.txt")
	gitT(t, co.Dir(), "commit", "-q", "-m", "agent: add feature")
	write(t, filepath.Join(co.Dir(), "notes.md"), "left uncommitted\n")
	tree := co.Dir()

	res, err := co.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed() || len(res.Bundle) == 0 || res.Base != src.Commit || res.Committed == nil {
		t.Fatalf("result %+v (bundle %d bytes): want work on top of %s with the uncommitted file committed", res.Pack, len(res.Bundle), src.Commit)
	}
	if _, err := os.Stat(tree); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the packed tree %s is still on the worker: %v", tree, err)
	}
	if out := gitT(t, f.workerClone, "branch", "--list", "worktree-agent-a1b2"); out != "" {
		t.Fatalf("the worker's clone keeps the branch: %q", out)
	}
	// The result travels as JSON.
	raw, _ = json.Marshal(res)
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}

	m := manager(t)
	o, err := Land(ctx, m, f.launcher, "a1b2", "sess", back, 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != worktree.Kept || o.Branch != "worktree-agent-a1b2" || o.Changes == nil || o.Changes.CommitCount != 2 {
		t.Fatalf("landed %+v (changes %+v), want the branch kept with 2 commits", o, o.Changes)
	}
	if tip := gitT(t, f.launcher, "rev-parse", "refs/heads/worktree-agent-a1b2"); tip != res.Tip {
		t.Fatalf("branch at %s, want %s", tip, res.Tip)
	}
	ents, err := m.List(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].State != worktree.StateChanged || ents[0].AgentID != "a1b2" {
		t.Fatalf("listed %+v, want one changed entry for a1b2", ents)
	}
	mr, err := m.Merge(ctx, worktree.MergeRequest{Dir: f.launcher, AgentID: "a1b2"})
	if err != nil {
		t.Fatal(err)
	}
	if mr.Status != worktree.MergeDone {
		t.Fatalf("merge %+v", mr)
	}
	for _, name := range []string{"feature.txt", "notes.md"} {
		if _, err := os.Stat(filepath.Join(f.launcher, name)); err != nil {
			t.Fatalf("after the merge %s is not in the launcher's tree: %v", name, err)
		}
	}
	// Landing the same agent twice is refused: the branch is there.
	if _, err := Land(ctx, m, f.launcher, "a1b2", "sess", back, 0); err == nil {
		t.Fatal("a second landing of the same agent was accepted")
	}
}

// An agent that changed nothing brings nothing back: no bundle, its tree
// removed on the worker, and nothing landed (Removed), as an unchanged
// local tree is removed.
func TestUnchangedTreeLandsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	co, err := newPool(t, Config{Roots: []string{f.workerClone}}).Checkout(ctx, src, "idle1", "")
	if err != nil {
		t.Fatal(err)
	}
	tree := co.Dir()
	res, err := co.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed() || len(res.Bundle) != 0 {
		t.Fatalf("an unchanged tree brought back %+v and %d bytes", res.Pack, len(res.Bundle))
	}
	if _, err := os.Stat(tree); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unchanged tree is still there: %v", err)
	}
	o, err := Land(ctx, manager(t), f.launcher, "idle1", "", res, 0)
	if err != nil || o.State != worktree.Removed {
		t.Fatalf("landing %+v, %v; want Removed", o, err)
	}
	if out := gitT(t, f.launcher, "branch", "--list", "worktree-agent-idle1"); out != "" {
		t.Fatalf("a branch was made for no work: %q", out)
	}
}

// A worker without a clone of the repository says so, naming its roots.
func TestNoCloneOfTheRepositoryIsAClearError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newPool(t, Config{Roots: []string{f.other}}).Checkout(ctx, src, "x1", "")
	if err == nil || !strings.Contains(err.Error(), "no clone of") || !strings.Contains(err.Error(), f.other) {
		t.Fatalf("err = %v, want no clone of the repository under %s", err, f.other)
	}
}

// A launcher's commit that was never pushed cannot reach the worker: a
// clear error, nothing made.
func TestUnpublishedCommitIsAClearError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	write(t, filepath.Join(f.launcher, "local.txt"), "not pushed\n")
	gitT(t, f.launcher, "add", "-A")
	gitT(t, f.launcher, "commit", "-q", "-m", "local only")
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newPool(t, Config{Roots: []string{f.workerRoot}}).Checkout(ctx, src, "x2", "")
	if err == nil || !strings.Contains(err.Error(), "push it there first") {
		t.Fatalf("err = %v, want the commit reported as not fetchable", err)
	}
	if _, err := os.Stat(filepath.Join(f.workerClone, ".cadre", "worktrees", "agent-x2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a tree was made anyway: %v", err)
	}
}

// Work over the size cap is refused with both sizes named, and kept on
// the worker (nothing is lost); the launcher refuses an oversized result
// too.
func TestBundleOverTheCapIsRefusedAndKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	co, err := newPool(t, Config{Roots: []string{f.workerRoot}, MaxBundle: 1024}).Checkout(ctx, src, "big1", "")
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 16<<10)
	_, _ = rand.Read(noise)
	write(t, filepath.Join(co.Dir(), "blob.hex"), hex.EncodeToString(noise))
	tree := co.Dir()
	_, err = co.Finish(ctx)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 1024 || tl.Size <= 1024 || tl.Kept != tree {
		t.Fatalf("err = %v, want a TooLargeError over 1024 bytes keeping %s", err, tree)
	}
	if _, err := os.Stat(filepath.Join(tree, "blob.hex")); err != nil {
		t.Fatalf("the oversized work was not kept on the worker: %v", err)
	}
	big := Result{Pack: worktree.Pack{Branch: "worktree-agent-big2", Base: src.Commit, Tip: src.Commit}, Bundle: make([]byte, 2048)}
	if _, err := Land(ctx, manager(t), f.launcher, "big2", "", big, 1024); !errors.As(err, &tl) {
		t.Fatalf("the launcher accepted a %d-byte bundle over a 1024-byte cap: %v", len(big.Bundle), err)
	}
}

// A result whose pack does not match its bundle lands nothing.
func TestLandRefusesAMismatchedBundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	co, err := newPool(t, Config{Roots: []string{f.workerRoot}}).Checkout(ctx, src, "mm1", "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(co.Dir(), "a.txt"), "a\n")
	res, err := co.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := res
	bad.Tip = src.Commit[:len(src.Commit)-1] + "0"
	if bad.Tip == res.Tip {
		bad.Tip = src.Commit[:len(src.Commit)-1] + "1"
	}
	if _, err := Land(ctx, manager(t), f.launcher, "mm1", "", bad, 0); err == nil {
		t.Fatal("a bundle whose tip is not the pack's was landed")
	}
	if out := gitT(t, f.launcher, "branch", "--list", "worktree-agent-mm1"); out != "" {
		t.Fatalf("a refused landing left a branch: %q", out)
	}
	if _, err := Land(ctx, manager(t), f.launcher, "mm1", "", Result{Pack: res.Pack, Bundle: []byte("not a bundle")}, 0); err == nil {
		t.Fatal("garbage was landed as a bundle")
	}
}

func TestNormalizeRemote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:secret@GitHub.com/o/r.git": "github.com/o/r",
		"https://github.com/o/r/":                "github.com/o/r",
		"git@github.com:o/r.git":                 "github.com/o/r",
		"ssh://git@github.com/o/r.git":           "github.com/o/r",
		"/srv/git/r.git":                         "/srv/git/r",
		"":                                       "",
	} {
		if got := NormalizeRemote(in); got != want {
			t.Errorf("NormalizeRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

// NormalizeRemote reads a repository's configuration: any input gives an
// answer without a panic, and never keeps a password of a URL.
func FuzzNormalizeRemote(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x.git", "git@h:x", "/a/b", "::", "@", "h:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeRemote(s)
		if strings.Contains(s, "://u:hunter2@") && strings.Contains(got, "hunter2") {
			t.Fatalf("NormalizeRemote(%q) = %q keeps the password", s, got)
		}
	})
}

func TestSourceValidate(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("ab", 20)
	for _, s := range []Source{{Roots: []string{id}, Commit: "HEAD"}, {Commit: id}, {Roots: []string{"x"}, Commit: id}} {
		if s.Validate() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if err := (Source{Roots: []string{id}, Commit: id}).Validate(); err != nil {
		t.Error(err)
	}
}
