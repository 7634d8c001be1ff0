package worktree

import (
	"context"
	"strings"
	"testing"
)

// TestMergeWithoutIdentity (issue 29): on a machine with no git identity
// (empty HOME, no global configuration, nothing in the environment), the
// merge-back still commits the tree's uncommitted work and merges: cadre's
// identity stands in for what is missing, and the result says so. A name
// configured without an e-mail is kept.
func TestMergeWithoutIdentity(t *testing.T) {
	t.Parallel()
	for _, localName := range []string{"", "Ada"} {
		t.Run("name="+localName, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			if localName != "" {
				gitT(t, repo, "config", "user.name", localName)
			}
			m, err := New(Config{Env: []string{"HOME=" + t.TempDir(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
				"GIT_AUTHOR_NAME=", "GIT_AUTHOR_EMAIL=", "GIT_COMMITTER_NAME=", "GIT_COMMITTER_EMAIL=", "EMAIL="}})
			if err != nil {
				t.Fatal(err)
			}
			keptTree(t, m, repo, "anon", func(dir string) {
				writeFile(t, dir+"/src/new.txt", "new\n")
			})
			commitFile(t, repo, "README.md", "# parent\n", "parent moves on") // a real merge commit follows
			res, err := m.Merge(context.Background(), MergeRequest{Dir: repo, AgentID: "anon", Remove: true})
			if err != nil {
				t.Fatalf("merge without an identity: %v", err)
			}
			want := FallbackName
			if localName != "" {
				want = localName
			}
			if res.Status != MergeDone || res.Committed == nil || !strings.Contains(res.Identity, want+" <"+FallbackEmail+">") {
				t.Fatalf("result %+v", res)
			}
			if got := gitT(t, repo, "log", "-2", "--format=%an <%ae> / %cn <%ce>"); !strings.Contains(got, want+" <"+FallbackEmail+"> / "+want+" <"+FallbackEmail+">") {
				t.Errorf("commits made as %q", got)
			}
			assertClean(t, repo)
		})
	}
	// With an identity, nothing is said and nothing replaced.
	repo := newRepo(t)
	m := newManager(t)
	keptTree(t, m, repo, "named", func(dir string) { writeFile(t, dir+"/src/new.txt", "new\n") })
	res, err := m.Merge(context.Background(), MergeRequest{Dir: repo, AgentID: "named", Remove: true})
	if err != nil || res.Identity != "" || res.Committed == nil {
		t.Fatalf("merge with an identity: %+v %v", res, err)
	}
	if got := gitT(t, repo, "log", "-1", "--format=%an"); got != "cadre test" {
		t.Errorf("author %q", got)
	}
}
