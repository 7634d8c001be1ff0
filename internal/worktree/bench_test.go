package worktree

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bigRepo makes a repository of 10,000 files (100 directories of 100
// files of about 300 bytes) with one commit.
func bigRepo(b *testing.B) string {
	b.Helper()
	dir := canonical(b.TempDir())
	gitT(b, dir, "init", "-q", "-b", "main")
	body := strings.Repeat("// some source text of a typical small file\n", 7)
	for d := range 100 {
		for f := range 100 {
			writeFile(b, filepath.Join(dir, fmt.Sprintf("pkg%02d", d), fmt.Sprintf("file%02d.go", f)), fmt.Sprintf("package pkg%02d\n%s", d, body))
		}
	}
	gitT(b, dir, "add", "-A")
	gitT(b, dir, "commit", "-q", "-m", "10,000 files")
	return dir
}

// BenchmarkWorktree measures a spawn's worktree on a repository of 10,000
// files: ns/op is the latency of creating fanout trees at once (the last
// one ready); release-ns/op the cleanup of all of them once the agents end
// unchanged. git-ns/op is the time spent waiting for git processes during
// creation, summed over the concurrent creations; cadre-ns/op, for fan-out
// 1, is the rest of the creation latency (cadre's own work).
func BenchmarkWorktree(b *testing.B) {
	repo := bigRepo(b)
	ctx := context.Background()
	for _, fanout := range []int{1, 16} {
		b.Run(fmt.Sprintf("fanout=%d", fanout), func(b *testing.B) {
			m := newManager(b)
			var spent atomic.Int64
			m.git.spent = &spent
			var createGit, release time.Duration
			round := 0
			for b.Loop() {
				before := spent.Load()
				leases := make([]*Lease, fanout)
				errs := make([]error, fanout)
				var wg sync.WaitGroup
				for i := range fanout {
					wg.Go(func() {
						leases[i], errs[i] = m.Create(ctx, Request{Dir: repo, AgentID: fmt.Sprintf("b%d-%d", round, i)})
					})
				}
				wg.Wait()
				createGit += time.Duration(spent.Load() - before)
				b.StopTimer()
				start := time.Now()
				for i := range fanout {
					if errs[i] != nil {
						b.Fatal(errs[i])
					}
					wg.Go(func() {
						if o, err := leases[i].Release(ctx); err != nil || o.State != Removed {
							b.Errorf("release: %+v, %v", o, err)
						}
					})
				}
				wg.Wait()
				release += time.Since(start)
				round++
				b.StartTimer()
			}
			b.ReportMetric(float64(createGit)/float64(b.N), "git-ns/op")
			b.ReportMetric(float64(release)/float64(b.N), "release-ns/op")
			if fanout == 1 {
				b.ReportMetric(float64(b.Elapsed()-createGit)/float64(b.N), "cadre-ns/op")
			}
		})
	}
}

// BenchmarkRawGitWorktreeAdd is the floor: `git worktree add` alone, by
// hand, on the same repository; fan-out 16 runs them one after the other,
// since git cannot run them at once (its lock files make the others fail).
func BenchmarkRawGitWorktreeAdd(b *testing.B) {
	repo := bigRepo(b)
	for _, fanout := range []int{1, 16} {
		b.Run(fmt.Sprintf("fanout=%d", fanout), func(b *testing.B) {
			round := 0
			for b.Loop() {
				var names []string
				for i := range fanout {
					name := fmt.Sprintf("raw%d-%d", round, i)
					names = append(names, name)
					rawGit(b, repo, "worktree", "add", "-q", "-b", name, filepath.Join(repo, TreesDir, name), "HEAD")
				}
				b.StopTimer()
				for _, name := range names {
					rawGit(b, repo, "worktree", "remove", filepath.Join(repo, TreesDir, name))
					rawGit(b, repo, "branch", "-q", "-D", name)
				}
				round++
				b.StartTimer()
			}
		})
	}
}

func rawGit(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), testEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
