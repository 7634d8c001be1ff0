package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	z := func(fields ...string) string { return strings.Join(fields, "\x00") + "\x00" }
	tests := []struct {
		name string
		in   string
		want status
		err  bool
	}{
		{name: "clean", in: z("# branch.oid abc", "# branch.head main"), want: status{oid: "abc", branch: "main"}},
		{name: "initial and detached", in: z("# branch.oid (initial)", "# branch.head (detached)")},
		{name: "every kind", in: z(
			"# branch.oid abc", "# branch.head wt",
			"1 .M N... 100644 100644 100644 h1 h2 src/a file.txt",
			"1 A. N... 000000 100644 100644 h1 h2 new.txt",
			"1 D. N... 100644 000000 000000 h1 h2 gone.txt",
			"1 T. N... 100644 120000 120000 h1 h2 link",
			"2 R. N... 100644 100644 100644 h1 h2 R100 moved.txt", "orig.txt",
			"u UU N... 100644 100644 100644 100644 h1 h2 h3 both.txt",
			"? untracked dir/x",
			"! ignored.log",
		), want: status{oid: "abc", branch: "wt", files: []FileStatus{
			{Path: "src/a file.txt", Status: "modified"}, {Path: "new.txt", Status: "added"},
			{Path: "gone.txt", Status: "deleted"}, {Path: "link", Status: "type changed"},
			{Path: "moved.txt", Status: "modified"}, {Path: "both.txt", Status: "unmerged"},
			{Path: "untracked dir/x", Status: "untracked"},
		}}},
		{name: "short entry", in: z("1 .M N..."), err: true},
		{name: "unknown entry", in: z("x what"), err: true},
	}
	for _, tc := range tests {
		got, err := parseStatus(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.name, err, tc.err)
			continue
		}
		if !tc.err && !cmp.Equal(tc.want, got, cmp.AllowUnexported(status{})) {
			t.Errorf("%s: %s", tc.name, cmp.Diff(tc.want, got, cmp.AllowUnexported(status{})))
		}
	}
}

func TestParseWorktreeList(t *testing.T) {
	t.Parallel()
	in := "worktree /r\x00HEAD aaa\x00branch refs/heads/main\x00\x00" +
		"worktree /r/.cadre/worktrees/agent-x\x00HEAD bbb\x00detached\x00prunable gitdir file points to non-existent location\x00\x00" +
		"worktree /bare\x00bare\x00\x00"
	want := []gitTree{{path: "/r", head: "aaa", branch: "main"}, {path: "/r/.cadre/worktrees/agent-x", head: "bbb"}, {path: "/bare"}}
	if got := parseWorktreeList(in); !cmp.Equal(want, got, cmp.AllowUnexported(gitTree{})) {
		t.Error(cmp.Diff(want, got, cmp.AllowUnexported(gitTree{})))
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add("# branch.oid abc\x00# branch.head main\x001 .M N... 100644 100644 100644 h1 h2 a\x00")
	f.Add("2 R. N... 100644 100644 100644 h1 h2 R100 b\x00a\x00? c\x00")
	f.Add("u UU N... 1 2 3 4 h1 h2 h3 x\x00")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseStatus(s)
		if err == nil {
			for _, fs := range st.files {
				if fs.Status == "" {
					t.Errorf("entry without a status: %+v", fs)
				}
			}
		}
		_ = parseWorktreeList(s)
	})
}

// TestInspectRefusesAForeignDirectory: a tree whose .git file is gone is
// not inspected (git would answer for the main tree) and so is kept.
func TestInspectRefusesAForeignDirectory(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	l := create(t, m, repo, "nogit")
	if err := os.Remove(filepath.Join(l.Info().Path, ".git")); err != nil {
		t.Fatal(err)
	}
	o, err := l.Release(context.Background())
	if err == nil || o.State != Kept || !strings.Contains(o.Reason, "no longer a git worktree") {
		t.Fatalf("release = %+v, %v; want kept, not inspectable", o, err)
	}
	if !exists(l.Info().Path) {
		t.Error("the tree was deleted")
	}
}

func TestGitErrorMessage(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	_, err := m.git.run(context.Background(), t.TempDir(), "rev-parse", "HEAD")
	var ge *GitError
	if !errors.As(err, &ge) || ge.Code != 128 || !strings.Contains(err.Error(), "git rev-parse HEAD (in ") || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("error = %v", err)
	}
}
