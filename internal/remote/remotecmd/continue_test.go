package remotecmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/transcript"
)

var noteIDRE = regexp.MustCompile(`<task-id>([^<]+)</task-id>`)

// Continuing a finished remote agent, end to end through the cadre binary
// and its bridge: `cadre -p --remote` in a repository, two workers with
// their own clones. The agent commits a file and ends; the main agent
// sends it a message, which continues it on a worker from its whole
// conversation and its landed branch — it sees its first file and commits
// a second on top —, and the branch worktree-agent-<id> in the launcher's
// repository moves forward. Each run's end is one notification, and the
// launcher's transcript of the agent holds both runs.
func TestCadreRemoteContinuesAFinishedAgentOnItsBranch(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("cont")
	repo, clones := launcherRepo(t, 2)
	startWorker(t, queue, srv, "worker-key", "--repo", clones[0], "--worker-id", "one")
	startWorker(t, queue, srv, "worker-key", "--repo", clones[1], "--worker-id", "two")
	commit := func(file string) string {
		return "echo " + file + " > " + file + " && git add " + file + " && git -c user.name=W -c user.email=w@example.com commit -qm '" + file + "' && echo committed-" + file
	}
	srv.ScriptFunc("WSCONT", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case len(r.Messages) == 1:
			return bash(commit("one.txt"))
		case len(r.LastToolResults()) == 0 && strings.Contains(r.LastUserText(), "WSCONT-MORE"):
			return bash("test -f one.txt && " + commit("two.txt"))
		}
		return llmtest.Text("WSCONT done")
	})
	var mu sync.Mutex
	var agentID string
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "w", "prompt": "WSCONT write and commit"}})
		}
		if m := noteIDRE.FindStringSubmatch(r.LastUserText()); m != nil && agentID == "" {
			agentID = m[1]
			return llmtest.ToolUse("SendMessage", map[string]any{"to": agentID, "message": "WSCONT-MORE commit a second file"})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := t.TempDir()
	settings := `{"remote": {"temporal": {"address": "` + server.Address + `", "namespace": "` + server.Namespace + `", "taskQueue": "` + queue + `"}}}`
	if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cadreBin, "-p", "--remote", "--dangerously-skip-permissions", "LAUNCH one agent")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin, "GIT_CONFIG_GLOBAL=/dev/null")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	mu.Lock()
	id := agentID
	mu.Unlock()
	if id == "" || !strings.Contains(stdout.String(), "LAUNCHER-ANSWER") {
		t.Fatalf("agent %q; stdout %q\nstderr: %s", id, stdout.String(), stderr.String())
	}
	reqs := srv.RequestsFor("WSCONT")
	if len(reqs) != 4 {
		t.Fatalf("the agent made %d model requests, want 4 (two per run)", len(reqs))
	}
	if tr := reqs[3].LastToolResults(); len(tr) != 1 || !strings.Contains(tr[0].ResultText(), "committed-two.txt") {
		t.Fatalf("the continued run's call: %+v", tr)
	}
	branch := "worktree-agent-" + id
	if got := git(t, repo, "log", "--format=%s", branch); got != "two.txt\none.txt\nlauncher's first commit" {
		t.Fatalf("the branch %s holds %q", branch, got)
	}
	launch := srv.RequestsFor("LAUNCH")
	last := launch[len(launch)-1]
	var all string
	for _, m := range last.Messages {
		all += m.Text()
	}
	if n := strings.Count(all, "<task-id>"+id+"</task-id>"); n != 2 {
		t.Fatalf("the main agent read %d notifications of the agent, want 2 (one per run)", n)
	}
	var tpath string
	_ = filepath.WalkDir(home, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == "agent-"+id+".jsonl" {
			tpath = p
		}
		return nil
	})
	entries, err := transcript.ReadFile(tpath)
	if err != nil {
		t.Fatalf("the launcher's transcript of the agent (%q): %v", tpath, err)
	}
	var types []string
	for _, e := range entries {
		types = append(types, e.Type)
	}
	if got := strings.Join(types, ","); got != "user,assistant,user,assistant,run_end,user,assistant,user,assistant,run_end" {
		t.Fatalf("transcript entries %s", got)
	}
}
