package worktree

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// clonePair returns upstream (a repository that pushes to origin) and a
// clone of origin, whose local main is behind after upstream pushes.
func clonePair(t *testing.T) (upstream, clone string) {
	t.Helper()
	upstream = newRepo(t)
	root := canonical(t.TempDir())
	origin := filepath.Join(root, "origin.git")
	gitT(t, root, "clone", "-q", "--bare", upstream, origin)
	clone = filepath.Join(root, "clone")
	gitT(t, root, "clone", "-q", origin, clone)
	gitT(t, upstream, "remote", "add", "origin", origin)
	commitFile(t, upstream, "fresh.txt", "fresh\n", "pushed after the clone")
	gitT(t, upstream, "push", "-q", "origin", "main")
	return upstream, clone
}

func TestBaseDefaultFetchesFresh(t *testing.T) {
	t.Parallel()
	upstream, clone := clonePair(t)
	m := newManager(t)
	ctx := context.Background()
	stale := gitT(t, clone, "rev-parse", "HEAD")
	fresh := gitT(t, upstream, "rev-parse", "HEAD")
	l, err := m.Create(ctx, Request{Dir: clone, AgentID: "d1", Base: BaseDefault})
	if err != nil {
		t.Fatal(err)
	}
	info := l.Info()
	if info.BaseCommit != fresh || info.BaseRef != "origin/main" || info.Base != BaseDefault || len(info.Warnings) != 0 {
		t.Errorf("info = %+v; want base %s from origin/main (the clone's HEAD is %s)", info, fresh, stale)
	}
	if !exists(filepath.Join(info.Path, "fresh.txt")) {
		t.Error("the tree does not have the fresh commit's file")
	}
	if _, err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Without origin/HEAD, the remote is asked for its default branch.
	gitT(t, clone, "remote", "set-head", "origin", "-d")
	l, err = m.Create(ctx, Request{Dir: clone, AgentID: "d2", Base: BaseDefault})
	if err != nil {
		t.Fatal(err)
	}
	if l.Info().BaseCommit != fresh {
		t.Errorf("without origin/HEAD: base %s, want %s", l.Info().BaseCommit, fresh)
	}
	l.Release(ctx)

	// A fetch that fails falls back to the last fetched ref, with a warning.
	gitT(t, clone, "remote", "set-head", "origin", "main")
	gitT(t, clone, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	l, err = m.Create(ctx, Request{Dir: clone, AgentID: "d3", Base: BaseDefault})
	if err != nil {
		t.Fatal(err)
	}
	if info := l.Info(); info.BaseCommit != fresh || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "could not fetch origin/main") {
		t.Errorf("failed fetch: %+v", info)
	}
	l.Release(ctx)
}

func TestBaseDefaultWithoutRemote(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	ctx := context.Background()
	mainCommit := gitT(t, repo, "rev-parse", "HEAD")
	gitT(t, repo, "checkout", "-q", "-b", "feature")
	commitFile(t, repo, "feature.txt", "f\n", "feature work")
	l, err := m.Create(ctx, Request{Dir: repo, AgentID: "local", Base: BaseDefault})
	if err != nil {
		t.Fatal(err)
	}
	if info := l.Info(); info.BaseCommit != mainCommit || info.BaseRef != "main" {
		t.Errorf("info = %+v, want main at %s", info, mainCommit)
	}
	l.Release(ctx)
	head, err := m.Create(ctx, Request{Dir: repo, AgentID: "head"})
	if err != nil {
		t.Fatal(err)
	}
	if got := head.Info().BaseCommit; got != gitT(t, repo, "rev-parse", "HEAD") {
		t.Errorf("base head = %s, want the feature branch's HEAD", got)
	}
	head.Release(ctx)

	gitT(t, repo, "branch", "-q", "-m", "main", "trunk")
	if _, err := m.Create(ctx, Request{Dir: repo, AgentID: "none", Base: BaseDefault}); err == nil || !strings.Contains(err.Error(), "no default branch") {
		t.Errorf("no main or master: %v", err)
	}
}

func TestParseBase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Base{"": BaseHead, "head": BaseHead, "default": BaseDefault} {
		if got, err := ParseBase(in); err != nil || got != want {
			t.Errorf("ParseBase(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseBase("HEAD~1"); err == nil || !strings.Contains(err.Error(), `"head"`) {
		t.Errorf("ParseBase(HEAD~1) = %v", err)
	}
}
