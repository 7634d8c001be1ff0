package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// TestPermissionModesInTheLoop drives real tool calls through the
// runtime's permission sessions in headless mode (no prompter), and
// checks what ran on disk and what the model was told.
func TestPermissionModesInTheLoop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		mode     permission.Mode
		call     func(cwd, outside string) (string, map[string]any)
		wantFile func(cwd, outside string) string // must exist afterwards ("" = none)
		noFile   func(cwd, outside string) string // must not exist
		wantText string                           // in the tool result
		denied   bool
	}{
		{
			name: "default denies a write headless and says why",
			mode: permission.ModeDefault,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Write", map[string]any{"file_path": filepath.Join(cwd, "a.txt"), "content": "x"}
			},
			noFile:   func(cwd, _ string) string { return filepath.Join(cwd, "a.txt") },
			wantText: "Edit(",
			denied:   true,
		},
		{
			name: "default runs a read inside the working directory",
			mode: permission.ModeDefault,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Read", map[string]any{"file_path": filepath.Join(cwd, "seed.txt")}
			},
			wantText: "seed content",
		},
		{
			name: "plan refuses a write",
			mode: permission.ModePlan,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Write", map[string]any{"file_path": filepath.Join(cwd, "p.txt"), "content": "x"}
			},
			noFile:   func(cwd, _ string) string { return filepath.Join(cwd, "p.txt") },
			wantText: "Plan mode is read-only",
			denied:   true,
		},
		{
			name: "plan refuses a writing Bash command",
			mode: permission.ModePlan,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Bash", map[string]any{"command": "touch " + filepath.Join(cwd, "t.txt")}
			},
			noFile:   func(cwd, _ string) string { return filepath.Join(cwd, "t.txt") },
			wantText: "Plan mode is read-only",
			denied:   true,
		},
		{
			name: "plan runs a read-only Bash command",
			mode: permission.ModePlan,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Bash", map[string]any{"command": "cat seed.txt"}
			},
			wantText: "seed content",
		},
		{
			name: "acceptEdits writes inside the working directory",
			mode: permission.ModeAcceptEdits,
			call: func(cwd, _ string) (string, map[string]any) {
				return "Write", map[string]any{"file_path": filepath.Join(cwd, "in.txt"), "content": "inside"}
			},
			wantFile: func(cwd, _ string) string { return filepath.Join(cwd, "in.txt") },
		},
		{
			name: "acceptEdits asks for a write outside, and headless means no",
			mode: permission.ModeAcceptEdits,
			call: func(_, outside string) (string, map[string]any) {
				return "Write", map[string]any{"file_path": filepath.Join(outside, "out.txt"), "content": "outside"}
			},
			noFile:   func(_, outside string) string { return filepath.Join(outside, "out.txt") },
			wantText: "outside",
			denied:   true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(h.dir, "seed.txt"), []byte("seed content\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name, input := c.call(h.dir, outside)
			h.srv.Script("MAIN", llmtest.ToolUse(name, input), llmtest.Text("done"))
			cfg := h.config()
			cfg.Home = t.TempDir()
			cfg.Permissions = &Permissions{Mode: c.mode}
			_, res, _ := mustRun(t, cfg, "MAIN")
			got := h.srv.RequestsFor("MAIN")[1].LastToolResults()[0]
			if c.wantText != "" && !strings.Contains(got.ResultText(), c.wantText) {
				t.Fatalf("tool result %q lacks %q", got.ResultText(), c.wantText)
			}
			if got.IsError != c.denied || (len(res.PermissionDenials) == 1) != c.denied {
				t.Fatalf("denied: result error %v, denials %+v, want %v", got.IsError, res.PermissionDenials, c.denied)
			}
			if c.wantFile != nil {
				if _, err := os.Stat(c.wantFile(h.dir, outside)); err != nil {
					t.Fatal(err)
				}
			}
			if c.noFile != nil {
				if _, err := os.Stat(c.noFile(h.dir, outside)); err == nil {
					t.Fatal("a denied call changed the disk")
				}
			}
		})
	}
}

// TestSearchCannotRevealDeniedFiles: a Read deny rule also keeps the
// file's name and content out of Glob and Grep results.
func TestSearchCannotRevealDeniedFiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if err := os.MkdirAll(filepath.Join(h.dir, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"secret/key.txt": "TOKEN=hunter2\n", "open.txt": "TOKEN=public\n"} {
		if err := os.WriteFile(filepath.Join(h.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Grep", Input: map[string]any{"pattern": "TOKEN", "output_mode": "content"}},
		llmtest.Call{Name: "Glob", Input: map[string]any{"pattern": "**/*.txt"}},
	), llmtest.Text("done"))
	cfg := h.config()
	cfg.Home = t.TempDir()
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault,
		Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Read", Content: "./secret/**", Source: "test"}}}
	mustRun(t, cfg, "MAIN")
	res := h.srv.RequestsFor("MAIN")[1].LastToolResults()
	for i, r := range res {
		text := r.ResultText()
		if strings.Contains(text, "hunter2") || strings.Contains(text, "key.txt") {
			t.Fatalf("result %d reveals the denied file:\n%s", i, text)
		}
		contains(t, text, "open.txt")
		contains(t, text, "permission rules deny reading them")
	}
}
