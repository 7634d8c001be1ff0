package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// A background child in a worktree holds its lease after its parent's
// Agent call has returned and the parent's turn has ended (issue 13,
// point 7): the tree is there until the child ends, and then it is kept
// (changed) or removed (unchanged), and the notification says which.
func TestWorktreeBackgroundChildKeepsItsLease(t *testing.T) {
	t.Parallel()
	for _, changed := range []bool{true, false} {
		name := map[bool]string{true: "changed", false: "unchanged"}[changed]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h, cfg := wtHarness(t)
			call := bgCall("BGWT: work")
			call["isolation"] = "worktree"
			mainDone := make(chan struct{})
			var once sync.Once
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch len(h.srv.RequestsFor("MAIN")) {
				case 1:
					return llmtest.ToolUse("Agent", call)
				case 2:
					once.Do(func() { close(mainDone) })
					return llmtest.Text("started it")
				default:
					return llmtest.Text("noted")
				}
			})
			var mu sync.Mutex
			var tree string
			var existedAfterMain bool
			h.srv.ScriptFunc("BGWT", func(r *llmtest.Request) llmtest.Turn {
				mu.Lock()
				defer mu.Unlock()
				if tree == "" {
					tree = treeOf(t, r)
					<-mainDone // the parent's turn has ended, its Agent call long returned
					_, err := os.Stat(filepath.Join(tree, "a.txt"))
					existedAfterMain = err == nil
					if changed {
						return llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(tree, "new.txt"), "content": "x\n"})
					}
				}
				return llmtest.Text("finished")
			})
			rt := newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt, "MAIN: go"); err != nil {
				t.Fatal(err)
			}
			drainNotifications(t, rt)
			mu.Lock()
			defer mu.Unlock()
			if !existedAfterMain {
				t.Fatalf("the tree %s was gone while its background child still ran", tree)
			}
			reqs := h.srv.RequestsFor("MAIN")
			note := lastTexts(reqs[len(reqs)-1])
			left := leftTrees(t, h.dir)
			if changed {
				contains(t, note, "worktree kept: "+tree)
				contains(t, note, "untracked new.txt")
				if !slices.Equal(left, []string{tree}) {
					t.Fatalf("left %v, want %s", left, tree)
				}
			} else {
				if len(left) != 0 {
					t.Fatalf("an unchanged tree was left: %v", left)
				}
				if got := branches(t, h.dir); !slices.Equal(got, []string{"main"}) {
					t.Fatalf("branches %v", got)
				}
			}
		})
	}
}
