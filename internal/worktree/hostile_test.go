package worktree

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/gitcmd"
	"github.com/cadre-dev/cadre/internal/workspace"
)

// hostile is one way a repository's own configuration can make git run a
// program: setup writes it into repo (evil is a script that creates the
// marker file), and control, run with plain git, proves that it does.
type hostile struct {
	name    string
	setup   func(t *testing.T, repo, evil string)
	control func(repo string) // runs evil with plain git (nil: needs a terminal)
}

// hookNames are the hooks cadre's git could reach: checkout, commit,
// merge, ref updates, index changes, gc.
var hookNames = []string{
	"post-checkout", "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-merge-commit", "post-merge", "reference-transaction", "post-index-change",
	"pre-auto-gc", "post-rewrite", "pre-rebase", "fsmonitor-watchman",
}

func hostileCases(t *testing.T) []hostile {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	cfg := func(kv ...string) func(t *testing.T, repo, evil string) {
		return func(t *testing.T, repo, evil string) {
			for i := 0; i < len(kv); i += 2 {
				gitT(t, repo, "config", strings.ReplaceAll(kv[i], "EVIL", evil), strings.ReplaceAll(kv[i+1], "EVIL", evil))
			}
		}
	}
	then := func(fs ...func(t *testing.T, repo, evil string)) func(t *testing.T, repo, evil string) {
		return func(t *testing.T, repo, evil string) {
			for _, f := range fs {
				f(t, repo, evil)
			}
		}
	}
	hooksIn := func(dir func(repo string) string) func(t *testing.T, repo, evil string) {
		return func(t *testing.T, repo, evil string) {
			d := dir(repo)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, h := range hookNames {
				if err := os.Symlink(evil, filepath.Join(d, h)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run := func(cmds ...[]string) func(repo string) {
		return func(repo string) {
			for _, args := range cmds {
				plainGit(repo, args...)
			}
		}
	}
	status := run([]string{"status"})
	fetch := run([]string{"fetch", "-q", "origin"})
	diff := func(repo string) {
		_ = os.WriteFile(filepath.Join(repo, "src", "a.txt"), []byte("changed\n"), 0o644)
		plainGit(repo, "diff")
	}
	commit := run([]string{"commit", "--allow-empty", "-q", "-m", "x"})
	return []hostile{
		{"core.fsmonitor", cfg("core.fsmonitor", "EVIL"), status},
		{"include.path", func(t *testing.T, repo, evil string) {
			inc := filepath.Join(repo, ".git", "more.cfg")
			writeFile(t, inc, "[core]\n\tfsmonitor = "+evil+"\n")
			gitT(t, repo, "config", "include.path", inc)
		}, status},
		{"core.hooksPath", then(hooksIn(func(repo string) string { return filepath.Join(repo, "githooks") }),
			cfg("core.hooksPath", "githooks")), commit},
		{"hooks directory", hooksIn(func(repo string) string { return filepath.Join(repo, ".git", "hooks") }),
			commit},
		{"core.editor", cfg("core.editor", "EVIL"), run([]string{"commit", "--allow-empty", "-q"})},
		{"sequence.editor", cfg("sequence.editor", "EVIL"), run([]string{"rebase", "-q", "-i", "HEAD~1"})},
		{"core.pager", cfg("core.pager", "EVIL"), nil},
		{"pager.log", cfg("pager.log", "EVIL", "pager.status", "EVIL", "pager.diff", "EVIL"), nil},
		{"diff.external", cfg("diff.external", "EVIL"), diff},
		{"diff.driver.command", cfg("diff.x.command", "EVIL"), diff},
		{"diff.driver.textconv", cfg("diff.x.textconv", "EVIL"), diff},
		{"filter.driver.clean", cfg("filter.x.clean", "EVIL", "filter.x.required", "true"), status},
		{"filter.driver.smudge", cfg("filter.x.smudge", "EVIL"), run([]string{"worktree", "add", "-q", "control-tree"})},
		{"filter.driver.process", cfg("filter.x.process", "EVIL"), status},
		{"merge.driver.driver", cfg("merge.x.driver", "EVIL %O %A %B"), run([]string{"checkout", "-q", "next"}, []string{"merge", "-q", "--no-edit", "child"})},
		{"core.sshCommand", cfg("remote.origin.url", "ssh://127.0.0.1:1/x.git", "core.sshCommand", "EVIL"), fetch},
		{"core.askPass", cfg("remote.origin.url", srv.URL+"/x.git", "core.askPass", "EVIL"), fetch},
		{"credential.helper", cfg("remote.origin.url", srv.URL+"/x.git", "credential.helper", "!EVIL"), fetch},
		{"credential.url.helper", cfg("remote.origin.url", srv.URL+"/x.git", "credential."+srv.URL+".helper", "!EVIL"), fetch},
		{"remote.uploadpack", func(t *testing.T, repo, evil string) {
			cfg("remote.origin.url", repo, "remote.origin.uploadpack", "EVIL")(t, repo, evil)
		}, fetch},
		{"core.gitProxy", cfg("remote.origin.url", "git://127.0.0.1:1/x.git", "core.gitProxy", "EVIL"), fetch},
		{"protocol.ext.allow", cfg("remote.origin.url", "ext::EVIL", "protocol.ext.allow", "always"), fetch},
		{"url.insteadOf ext", cfg("remote.origin.url", "https://example.invalid/x.git",
			"url.ext::EVIL .insteadOf", "https://example.invalid/", "protocol.ext.allow", "always"), fetch},
		{"gpg.program", cfg("commit.gpgSign", "true", "gpg.program", "EVIL"), commit},
		{"gpg.ssh.program", cfg("commit.gpgSign", "true", "gpg.format", "ssh", "user.signingKey", "key::ssh-ed25519 AAAA", "gpg.ssh.program", "EVIL"),
			commit},
		{"submodule's own filter", func(t *testing.T, repo, evil string) {
			sub := newRepo(t)
			writeFile(t, filepath.Join(sub, ".gitattributes"), "*.txt filter=y\n")
			gitT(t, sub, "add", "-A")
			gitT(t, sub, "commit", "-q", "-m", "attributes")
			gitT(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			gitT(t, repo, "commit", "-q", "-m", "a submodule")
			gitT(t, repo, "branch", "-f", "next", "HEAD")
			gitT(t, repo, "branch", "-f", "child", "HEAD")
			gitT(t, repo, "update-ref", "refs/remotes/origin/main", "main")
			gitT(t, filepath.Join(repo, "sub"), "config", "filter.y.clean", evil)
			later := time.Now().Add(2 * time.Hour)
			if err := os.Chtimes(filepath.Join(repo, "sub", "src", "a.txt"), later, later); err != nil {
				t.Fatal(err)
			}
		}, status},
		{"core.alternateRefsCommand", func(t *testing.T, repo, evil string) {
			other := newRepo(t)
			writeFile(t, filepath.Join(repo, ".git", "objects", "info", "alternates"), filepath.Join(other, ".git", "objects")+"\n")
			cfg("remote.origin.url", "file://"+other, "core.alternateRefsCommand", "EVIL")(t, repo, evil)
		}, nil},
	}
}

// hostileRepo makes a repository whose .gitattributes gives every text
// file the driver x (filter, diff and merge), with branches for a merge:
// main at the first commit, next changing the first line of src/a.txt,
// child the last.
func hostileRepo(t *testing.T) string {
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=x diff=x merge=x\n")
	writeFile(t, filepath.Join(repo, "src", "a.txt"), "one\n1\n2\n3\n4\ntwo\nthree\n")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "attributes")
	gitT(t, repo, "checkout", "-q", "-b", "next")
	writeFile(t, filepath.Join(repo, "src", "a.txt"), "one (next)\n1\n2\n3\n4\ntwo\nthree\n")
	gitT(t, repo, "commit", "-q", "-am", "next")
	gitT(t, repo, "checkout", "-q", "-b", "child", "main")
	writeFile(t, filepath.Join(repo, "src", "a.txt"), "one\n1\n2\n3\n4\ntwo\nthree (child)\n")
	gitT(t, repo, "commit", "-q", "-am", "child")
	gitT(t, repo, "checkout", "-q", "main")
	// origin's default branch as last fetched: creation from the default
	// branch falls back to it when the fetch fails.
	gitT(t, repo, "update-ref", "refs/remotes/origin/main", "main")
	gitT(t, repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	return repo
}

// evilScript writes a program that creates marker and fails.
func evilScript(t *testing.T, marker string) string {
	evil := filepath.Join(t.TempDir(), "evil.sh")
	writeFile(t, evil, "#!/bin/sh\necho \"$0 $*\" >> '"+marker+"'\nexit 1\n")
	if err := os.Chmod(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	return evil
}

// restat gives the tracked files a new modification time, so that git
// must read (and filter) them again to know they are unchanged.
func restat(t *testing.T, repo string) {
	later := time.Now().Add(time.Hour)
	for _, f := range []string{"src/a.txt", "README.md"} {
		if err := os.Chtimes(filepath.Join(repo, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRepositoryConfigRunsNothing (issue 23): for each key of a
// repository's configuration that names a program, plain git run the
// way an attacker wants does run it (the control), and cadre's own git —
// the session's git snapshot, worktree creation from HEAD and from the
// default branch, merge-back with a commit of uncommitted work, by merge
// and by cherry-pick, listing and pruning — does not.
func TestRepositoryConfigRunsNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("many git processes")
	}
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if c.control != nil {
				marker := filepath.Join(t.TempDir(), "ran")
				evil := evilScript(t, marker)
				repo := hostileRepo(t)
				c.setup(t, repo, evil)
				restat(t, repo)
				c.control(repo)
				if !exists(marker) {
					t.Fatal("control: plain git did not run the program: the case tests nothing")
				}
			}

			marker := filepath.Join(t.TempDir(), "ran")
			evil := evilScript(t, marker)
			repo := hostileRepo(t)
			c.setup(t, repo, evil)
			restat(t, repo)
			check := func(step string) {
				t.Helper()
				if b, err := os.ReadFile(marker); err == nil {
					t.Fatalf("%s ran the repository's program: %s", step, b)
				}
			}

			if g := workspace.ReadGitStatus(ctx, repo); g.Empty() {
				t.Error("the git snapshot is empty")
			}
			check("the git snapshot")

			m := newManager(t)
			for _, how := range []Strategy{StrategyMerge, StrategyCherryPick} {
				id := "h-" + string(how)
				l, err := m.Create(ctx, Request{Dir: repo, AgentID: id})
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				check("worktree creation")
				dir := l.Info().Path
				writeFile(t, filepath.Join(dir, "src", "a.txt"), "one\n1\n2\n3\n4\ntwo\nthree (agent "+string(how)+")\n")
				writeFile(t, filepath.Join(dir, "src", "new-"+string(how)+".txt"), "new\n")
				restat(t, dir)
				if o, err := l.Release(ctx); err != nil || o.State != Kept {
					t.Fatalf("release = %+v, %v", o, err)
				}
				check("worktree inspection")
				if _, err := m.List(ctx, repo); err != nil {
					t.Errorf("list: %v", err)
				}
				check("listing")
				// The parent moves on (a change to another line) without
				// running anything either.
				if how == StrategyMerge {
					neutral(t, repo, "merge", "-q", "--ff-only", "next")
				}
				restat(t, repo)
				res, err := m.Merge(ctx, MergeRequest{Dir: repo, AgentID: id, Strategy: how, Remove: true})
				if err != nil {
					t.Fatalf("merge-back by %s: %v", how, err)
				}
				if res.Committed == nil {
					t.Errorf("merge-back by %s committed no uncommitted work: %+v", how, res)
				}
				check("merge-back by " + string(how))
			}
			l, err := m.Create(ctx, Request{Dir: repo, AgentID: "h-default", Base: BaseDefault})
			if err != nil {
				t.Fatalf("create from the default branch: %v", err)
			}
			check("worktree creation from the default branch")
			if o, err := l.Release(ctx); err != nil || o.State != Removed {
				t.Errorf("release = %+v, %v", o, err)
			}
			if _, err := m.Prune(ctx, repo, false); err != nil {
				t.Errorf("prune: %v", err)
			}
			check("removal and pruning")
		})
	}
}

// plainGit runs plain git in dir as a user would (no cadre overrides, no
// editor from the environment), ignoring failures: the control only
// wants to know whether the program ran.
func plainGit(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "GIT_EDITOR" && name != "VISUAL" && name != "EDITOR" && name != "GIT_SEQUENCE_EDITOR" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, testEnv...)
	cmd.Stdin = nil
	_ = cmd.Run()
}

// neutral runs git in dir through package gitcmd, failing on error.
func neutral(t *testing.T, dir string, args ...string) {
	t.Helper()
	r := gitcmd.Runner{Env: gitcmd.Environ(append(os.Environ(), testEnv...))}
	cmd, err := r.Command(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}
