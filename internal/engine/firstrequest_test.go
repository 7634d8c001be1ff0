package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/transcript"
)

// agentFiles lists the sub-agent files under dir (agent-*.jsonl and
// agent-*.meta.json), by base name.
func agentFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "agent-") {
			out = append(out, d.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChildFirstRequestBeforeItsFiles: a sub-agent's first request reaches
// the model before its transcript and .meta.json exist (issue 24: their
// creation is off the path to the first request), and both are whole
// once it answered. Order observed, not timed: child A's request is
// looked at by the scripted server while its sibling B is still held
// before its own first request (a SubagentStart hook waits for a file
// the server makes only then), so the burst of starting children is not
// over and nothing has written A's files yet; A's request goes out only
// once B is held (A's own SubagentStart hook waits for B's).
func TestChildFirstRequestBeforeItsFiles(t *testing.T) {
	w := newHookWorld(t)
	dir := t.TempDir()
	flag, bHeld := filepath.Join(dir, "go-on"), filepath.Join(dir, "b-held")
	// B's hook: B is started (its files held), then waits for the flag.
	waitB := w.script("wait-b.sh", "#!/bin/sh\ncat >/dev/null\n: > \""+bHeld+"\"\nwhile [ ! -e \""+flag+"\" ]; do sleep 0.01; done\n")
	// A's hook: A's request goes out only once B is held.
	waitA := w.script("wait-a.sh", "#!/bin/sh\ncat >/dev/null\nwhile [ ! -e \""+bHeld+"\" ]; do sleep 0.01; done\n")
	cfg := w.config(`{"SubagentStart": [{"matcher": "Explore", "hooks": [{"type": "command", "command": "` + waitB + `"}]},
		{"matcher": "general-purpose", "hooks": [{"type": "command", "command": "` + waitA + `"}]}]}`)

	w.srv.Script("", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: map[string]any{"description": "a", "prompt": "CHILD-A: look", "subagent_type": "general-purpose"}},
		llmtest.Call{Name: "Agent", Input: map[string]any{"description": "b", "prompt": "CHILD-B: look", "subagent_type": "Explore"}},
	), llmtest.Text("all done"))
	var mu sync.Mutex
	var seenAtFirst []string
	first := true
	w.srv.ScriptFunc("CHILD-A", func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		if first {
			first = false
			seenAtFirst = agentFiles(t, cfg.StateDir)
			if seenAtFirst == nil {
				seenAtFirst = []string{}
			}
			if err := os.WriteFile(flag, nil, 0o600); err != nil {
				t.Error(err)
			}
		}
		return llmtest.Text("A done")
	})
	w.srv.Script("CHILD-B", llmtest.Text("B done"))

	_, res, _ := mustRun(t, cfg, "MAIN: start")
	if res.IsError {
		t.Fatalf("run failed: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if seenAtFirst == nil {
		t.Fatal("child A's request never reached the server")
	}
	if len(seenAtFirst) != 0 {
		t.Fatalf("when child A's first request reached the server, these files existed: %v", seenAtFirst)
	}
	// Afterwards: per child its transcript and its metadata, nothing else.
	files := agentFiles(t, cfg.StateDir)
	var jsonl, meta int
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".meta.json"):
			meta++
		case strings.HasSuffix(f, ".jsonl"):
			jsonl++
		}
	}
	if jsonl != 2 || meta != 2 || len(files) != 4 {
		t.Fatalf("files per child: %v", files)
	}
	var paths []string
	_ = filepath.WalkDir(cfg.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "agent-") && strings.HasSuffix(p, ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	for _, p := range paths {
		entries, err := transcript.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		msgs := transcript.Messages(entries)
		if len(msgs) != 2 || msgs[0].Role != llm.RoleUser || !strings.Contains(msgs[0].Text(), ": look") || !strings.HasSuffix(msgs[1].Text(), " done") {
			t.Fatalf("%s: %+v", filepath.Base(p), msgs)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".jsonl") + ".meta.json")
		if err != nil || !strings.Contains(string(raw), `"finished":true`) {
			t.Fatalf("%s meta: %s %v", filepath.Base(p), raw, err)
		}
	}
}
