package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// keptTree runs an agent that does work in its tree and returns the kept
// tree's path.
func keptTree(t *testing.T, m *Manager, repo, id string, work func(dir string)) string {
	t.Helper()
	l := create(t, m, repo, id)
	work(l.Info().Path)
	o, err := l.Release(context.Background())
	if err != nil || o.State != Kept {
		t.Fatalf("release = %+v, %v; want kept", o, err)
	}
	return o.Path
}

// commitFile writes path (relative to dir) and commits it.
func commitFile(t *testing.T, dir, path, text, msg string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, path), text)
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", msg)
}

// assertClean fails if dir has changes of any kind or an operation in
// progress.
func assertClean(t *testing.T, dir string) {
	t.Helper()
	if st := gitT(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("tree %s is not clean:\n%s", dir, st)
	}
	for _, f := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "sequencer"} {
		if exists(filepath.Join(dir, ".git", f)) {
			t.Errorf("%s left in %s", f, dir)
		}
	}
}

func TestMergeClean(t *testing.T) {
	t.Parallel()
	for _, how := range []Strategy{StrategyMerge, StrategyCherryPick} {
		t.Run(string(how), func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			m := newManager(t)
			keptTree(t, m, repo, "mc", func(dir string) {
				commitFile(t, dir, "src/a.txt", "one\ntwo (child)\nthree\n", "child edits a")
				commitFile(t, dir, "src/b.txt", "b\n", "child adds b")
			})
			// The parent moved on meanwhile, elsewhere in the tree.
			commitFile(t, repo, "README.md", "# parent\n", "parent edits the readme")
			before := gitT(t, repo, "rev-parse", "HEAD")
			res, err := m.Merge(context.Background(), MergeRequest{Dir: repo, AgentID: "mc", Strategy: how, Remove: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != MergeDone || len(res.Commits) != 2 || res.Commits[0].Subject != "child edits a" || !res.Removed {
				t.Fatalf("result %+v", res)
			}
			if b, _ := os.ReadFile(filepath.Join(repo, "src", "a.txt")); string(b) != "one\ntwo (child)\nthree\n" {
				t.Errorf("a.txt = %q", b)
			}
			if res.Head != gitT(t, repo, "rev-parse", "HEAD") || res.Head == before {
				t.Errorf("head = %s, before %s", res.Head, before)
			}
			if got := gitT(t, repo, "rev-list", "--count", before+"..HEAD"); how == StrategyCherryPick && got != "2" {
				t.Errorf("cherry-pick made %s commits, want 2", got)
			}
			assertClean(t, repo)
			assertGone(t, repo, "mc")
		})
	}
}

func TestMergeConflict(t *testing.T) {
	t.Parallel()
	for _, how := range []Strategy{StrategyMerge, StrategyCherryPick} {
		t.Run(string(how), func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			m := newManager(t)
			keptTree(t, m, repo, "mx", func(dir string) {
				commitFile(t, dir, "src/b.txt", "b\n", "child adds b")
				commitFile(t, dir, "src/a.txt", "one\ntwo (child)\nthree\n", "child edits a")
			})
			commitFile(t, repo, "src/a.txt", "one\ntwo (parent)\nthree\n", "parent edits a")
			before := gitT(t, repo, "rev-parse", "HEAD")
			res, err := m.Merge(context.Background(), MergeRequest{Dir: repo, AgentID: "mx", Strategy: how, Remove: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != MergeConflict || !cmp.Equal(res.Conflicts, []string{"src/a.txt"}) || res.Removed {
				t.Fatalf("result %+v, want a conflict in src/a.txt and nothing removed", res)
			}
			if how == StrategyCherryPick && (res.ConflictCommit == nil || res.ConflictCommit.Subject != "child edits a") {
				t.Errorf("conflict commit = %+v", res.ConflictCommit)
			}
			if res.Head != before || gitT(t, repo, "rev-parse", "HEAD") != before {
				t.Errorf("HEAD moved: %s, want %s", gitT(t, repo, "rev-parse", "HEAD"), before)
			}
			if b, _ := os.ReadFile(filepath.Join(repo, "src", "a.txt")); string(b) != "one\ntwo (parent)\nthree\n" {
				t.Errorf("a.txt = %q, want the parent's", b)
			}
			if exists(filepath.Join(repo, "src", "b.txt")) {
				t.Error("b.txt of the aborted merge is in the parent's tree")
			}
			assertClean(t, repo)
			assertKept(t, repo, "mx")
		})
	}
}

func TestMergeUncommittedWork(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	ctx := context.Background()
	edit := func(dir string) { writeFile(t, filepath.Join(dir, "src", "new.txt"), "new\n") }
	keptTree(t, m, repo, "mleave", edit)
	res, err := m.Merge(ctx, MergeRequest{Dir: repo, AgentID: "mleave", LeaveUncommitted: true, Remove: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []FileStatus{{Path: "src/new.txt", Status: "untracked"}}
	if res.Status != MergeUpToDate || !cmp.Equal(res.Uncommitted, want) || res.Removed || res.NotRemoved == "" {
		t.Errorf("leave uncommitted: %+v", res)
	}
	assertKept(t, repo, "mleave")

	keptTree(t, m, repo, "mtake", edit)
	res, err = m.Merge(ctx, MergeRequest{Dir: repo, AgentID: "mtake", Remove: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != MergeDone || res.Committed == nil || len(res.Commits) != 1 || !res.Removed {
		t.Errorf("take uncommitted: %+v", res)
	}
	if !exists(filepath.Join(repo, "src", "new.txt")) {
		t.Error("the uncommitted file did not reach the parent")
	}
	assertClean(t, repo)
	assertGone(t, repo, "mtake")
}

func TestMergeSkipsChangesAlreadyThere(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	keptTree(t, m, repo, "msame", func(dir string) {
		commitFile(t, dir, "src/a.txt", "same\n", "child's version")
		commitFile(t, dir, "src/c.txt", "c\n", "child adds c")
	})
	commitFile(t, repo, "src/a.txt", "same\n", "parent's identical version")
	res, err := m.Merge(context.Background(), MergeRequest{Dir: repo, AgentID: "msame", Strategy: StrategyCherryPick})
	if err != nil || res.Status != MergeDone {
		t.Fatalf("result %+v, %v", res, err)
	}
	if got := gitT(t, repo, "log", "-1", "--format=%s"); got != "child adds c" {
		t.Errorf("last commit %q", got)
	}
	assertClean(t, repo)
}

func TestMergeRefusals(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	ctx := context.Background()
	keptTree(t, m, repo, "mr", func(dir string) { commitFile(t, dir, "x.txt", "x\n", "x") })
	running := create(t, m, repo, "mrun")
	defer running.Release(ctx)
	writeFile(t, filepath.Join(repo, "README.md"), "# uncommitted edit\n")
	tests := []struct {
		req  MergeRequest
		want string
	}{
		{MergeRequest{Dir: repo, AgentID: "mr"}, "uncommitted changes in 1 files (README.md)"},
		{MergeRequest{Dir: repo, AgentID: "mrun"}, "still running"},
		{MergeRequest{Dir: repo, AgentID: "nosuch"}, "no kept worktree for agent nosuch"},
		{MergeRequest{Dir: repo, Branch: "nosuch"}, "no branch nosuch"},
		{MergeRequest{Dir: repo, AgentID: "mr", Branch: "x"}, "not both"},
		{MergeRequest{Dir: repo}, "name the agent id or the branch"},
		{MergeRequest{Dir: repo, AgentID: "mr", Strategy: "rebase"}, "unknown strategy"},
		{MergeRequest{Dir: filepath.Join(repo, TreesDir, "agent-mr"), AgentID: "mr"}, "is the tree being merged"},
	}
	for _, tc := range tests {
		_, err := m.Merge(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Merge(%+v) = %v, want an error with %q", tc.req, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "README.md")); string(b) != "# uncommitted edit\n" {
		t.Error("a refused merge touched the parent's tree")
	}
	// By branch name, once the parent's tree is clean.
	gitT(t, repo, "checkout", "-q", "--", "README.md")
	res, err := m.Merge(ctx, MergeRequest{Dir: repo, Branch: BranchName("mr")})
	if err != nil || res.Status != MergeDone || res.Path == "" {
		t.Errorf("merge by branch = %+v, %v", res, err)
	}
}
