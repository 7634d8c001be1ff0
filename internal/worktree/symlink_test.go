package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// TestSymlinkedTreesDirRefused (issue 23): a checked-in link
// .cadre/worktrees -> ~/.claude/agents (or .cadre itself a link) made
// worktree isolation write the repository's files into the user's agents.
// Creation now fails with an error naming the link, and nothing is
// written where it points.
func TestSymlinkedTreesDirRefused(t *testing.T) {
	t.Parallel()
	for _, link := range []string{".cadre/worktrees", ".cadre"} {
		t.Run(link, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			target := filepath.Join(t.TempDir(), "home", ".claude", "agents")
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(repo, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			gitT(t, repo, "add", "-A")
			gitT(t, repo, "commit", "-q", "-m", "a link")
			m := newManager(t)
			_, err := m.Create(context.Background(), Request{Dir: repo, AgentID: "evil", SessionID: "s"})
			var se *safefs.SymlinkError
			if !errors.As(err, &se) || se.Path != at || !strings.Contains(err.Error(), at) {
				t.Fatalf("create = %v; want an error naming the link %s", err, at)
			}
			entries, _ := os.ReadDir(target)
			if len(entries) != 0 {
				t.Errorf("files were written through the link: %v", entries)
			}
			if branchExists(t, repo, BranchName("evil")) {
				t.Error("the branch was left behind")
			}
			if _, err := m.List(context.Background(), repo); !errors.As(err, &se) {
				t.Errorf("list through the link = %v; want an error naming it", err)
			}
		})
	}
}
