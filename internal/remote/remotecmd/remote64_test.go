package remotecmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// fanOut is the Done-when fan-out of issue 26.
const fanOut = 64

// remote64 is the state of one 64-agent run: which agent's requests
// came from which worker, and when.
type remote64 struct {
	mu sync.Mutex
	// gated counts the requests held at the gate; open is closed at the
	// kill, after which nothing is held.
	gated    int
	allHeld  chan struct{}
	open     chan struct{}
	openOnce sync.Once
	// heldBy is the worker key that held each agent's gated request;
	// after are the arrival times of each agent's requests after the gate
	// opened.
	heldBy map[int]string
	after  map[int][]time.Time
	keys   map[int][]string
}

// index is the agent's number in a request's first user message.
func r64index(r *llmtest.Request) int {
	f := strings.Fields(strings.TrimPrefix(r.FirstUserText(), "R64 agent "))
	if len(f) == 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
	if err != nil {
		return -1
	}
	return n
}

// The Done-when run of issue 26, with a real server, three `cadre-remote
// worker` processes each with its own clone (--repo) and the real cadre
// binary as the launcher (`cadre -p --remote` in the launcher's
// repository): 64 remote agents, each making one Bash call that writes
// its file, appends its number to an append-only log outside every
// repository, and commits. With every agent held at a model call — a
// quarter before their tool call, the rest after it — one worker is
// killed (SIGKILL): its agents move to the others with their trees
// restored from their last snapshot. Once the main agent has been told
// of some agents, the launcher is killed (SIGKILL) too, while the others
// run on; `cadre -p --resume ID` re-attaches. Then: 64 of 64 completed
// and the main agent was told of each exactly once across both launcher
// processes (counted in the captured requests), every branch
// worktree-agent-<id> is in the launcher's repository with its agent's
// file and commit, the log holds each number once (no tool call ran
// twice), and once the launchers have exited and the workers are stopped
// no process of the run is left.
func TestRemote64KillAWorkerAndTheLauncher(t *testing.T) {
	// About a minute of 2 cores. (Its moved agents that once failed were
	// concurrent restores into one clone tripping over each other's git,
	// now locked per clone: see docs/remote.md.)
	if testing.Short() {
		t.Skip("64 remote agents through three worker processes: not under -short")
	}
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("r64")
	repo, clones := launcherRepo(t, 3)
	logDir := t.TempDir()
	logFile := filepath.Join(logDir, "calls-"+queue+".log")
	// A call waits this long in the queue of a worker holding its tree
	// before the worker is taken for gone (10 s: on 2 loaded cores under
	// -race, 64 agents' calls queue for seconds, and each such wait
	// moves a live agent needlessly).
	const wait = 10 * time.Second
	keys := []string{"key-a", "key-b", "key-c"}
	workers := map[string]*proc{}
	for i, k := range keys {
		workers[k] = startWorker(t, queue, srv, k, "--repo", clones[i], "--worker-id", k, "--workspace-wait", wait.String())
	}
	st := &remote64{allHeld: make(chan struct{}), open: make(chan struct{}), heldBy: map[int]string{}, after: map[int][]time.Time{}, keys: map[int][]string{}}
	openGate := func() { st.openOnce.Do(func() { close(st.open) }) }
	t.Cleanup(openGate)
	srv.ScriptFunc("R64", func(r *llmtest.Request) llmtest.Turn {
		i := r64index(r)
		if i < 0 {
			return llmtest.Text("R64: no agent number in " + r.FirstUserText())
		}
		first := len(r.Messages) == 1
		// A quarter of the agents are held before their tool call, the
		// rest after it.
		held := first == (i%4 == 0)
		st.mu.Lock()
		st.keys[i] = append(st.keys[i], keyOf(r))
		select {
		case <-st.open:
			st.after[i] = append(st.after[i], time.Now())
			held = false
		default:
		}
		if held {
			if _, again := st.heldBy[i]; !again {
				st.heldBy[i] = keyOf(r)
				st.gated++
				if st.gated == fanOut {
					close(st.allHeld)
				}
			}
		}
		st.mu.Unlock()
		if held {
			<-st.open
		}
		if first {
			return bash(fmt.Sprintf("echo %d > out-%d.txt && echo %d >> %s && git add out-%d.txt && git -c user.name=W -c user.email=w@example.com commit -qm 'agent %d' && echo committed",
				i, i, i, logFile, i, i))
		}
		return llmtest.Text(fmt.Sprintf("R64 agent %d done", i))
	})
	srv.ScriptFunc("LAUNCH64", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			calls := make([]llmtest.Call, fanOut)
			for i := range calls {
				calls[i] = llmtest.Call{Name: "Agent", Input: map[string]any{"description": fmt.Sprintf("agent %d", i), "prompt": fmt.Sprintf("R64 agent %d: write and commit your file", i)}}
			}
			return llmtest.ToolUses(calls...)
		}
		return llmtest.Text("LAUNCHER-WAITING")
	})
	home := t.TempDir()
	settings := `{"maxConcurrentAgents": 64, "remote": {"temporal": {"address": "` + server.Address + `", "namespace": "` + server.Namespace + `", "taskQueue": "` + queue + `"}}}`
	if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	session := newSessionID()
	first := startLauncher(t, repo, home, srv, "-p", "--remote", "--dangerously-skip-permissions", "--session-id", session, "LAUNCH64 sixty-four agents")
	select {
	case <-st.allHeld:
	case <-time.After(3 * time.Minute):
		st.mu.Lock()
		held := st.gated
		st.mu.Unlock()
		t.Fatalf("after 3 minutes %d of %d agents are held (%d requests of the agents)", held, fanOut, len(srv.RequestsFor("R64")))
	case <-first.done:
		st.mu.Lock()
		held := st.gated
		st.mu.Unlock()
		t.Fatalf("the launcher ended before its agents were all held (%d of %d held, %d requests of the agents): %v\nstdout: %s\nstderr: %s",
			held, fanOut, len(srv.RequestsFor("R64")), first.err, first.stdout, first.stderr)
	}
	// The worker holding the most agents is killed.
	st.mu.Lock()
	perKey := map[string][]int{}
	for i, k := range st.heldBy {
		perKey[k] = append(perKey[k], i)
	}
	st.mu.Unlock()
	victim := keys[0]
	for _, k := range keys {
		if len(perKey[k]) > len(perKey[victim]) {
			victim = k
		}
	}
	moved := perKey[victim]
	slices.Sort(moved)
	workers[victim].kill9()
	killed := time.Now()
	openGate()
	if len(moved) == 0 {
		t.Fatal("the killed worker held no agent")
	}
	// The launcher is killed once it has told its main agent of some
	// agents (as a crash: the process alone; its bridge ends with it).
	for !notified(srv) {
		select {
		case <-first.done:
			t.Fatalf("the launcher ended before the kill: %v\nstdout: %s\nstderr: %s", first.err, first.stdout, first.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	pgid := first.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	waitGroupGone(t, pgid)
	resumed := startLauncher(t, repo, home, srv, "-p", "--resume", session, "--dangerously-skip-permissions", "LAUNCH64 resumed")
	resumed.wait(t)
	waitGroupGone(t, resumed.cmd.Process.Pid)
	stderr := resumed.stderr

	// 64 of 64 completed, each told to the main agent exactly once across
	// the two launchers.
	reqs := srv.RequestsFor("LAUNCH64")
	last := reqs[len(reqs)-1]
	var notes int
	done := map[int]int{}
	for _, m := range last.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		text := m.Text()
		notes += strings.Count(text, "<task-notification>")
		for _, d := range doneRE.FindAllStringSubmatch(text, -1) {
			i, _ := strconv.Atoi(d[1])
			done[i]++
		}
	}
	if notes != fanOut {
		t.Fatalf("the main agent read %d notifications, want %d\nstderr: %s", notes, fanOut, stderr.String())
	}
	descs := make([]string, fanOut)
	for i := range descs {
		descs[i] = fmt.Sprintf("agent %d", i)
	}
	told := summaries(last, descs)
	for i := range fanOut {
		if done[i] != 1 || told[descs[i]] != 1 {
			var all strings.Builder
			for _, m := range last.Messages {
				all.WriteString(m.Text())
			}
			t.Fatalf("agent %d's completion reached the main agent %d times (%d summaries), want once\n%s", i, done[i], told[descs[i]], all.String())
		}
	}
	// No tool call ran twice: the log holds each number once.
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	for _, l := range strings.Fields(string(raw)) {
		lines[l]++
	}
	for i := range fanOut {
		if n := lines[strconv.Itoa(i)]; n != 1 {
			t.Fatalf("agent %d's tool call ran %d times (log: %q)", i, n, raw)
		}
	}
	if len(lines) != fanOut {
		t.Fatalf("the log holds %d distinct lines, want %d: %q", len(lines), fanOut, raw)
	}
	// Every branch arrived with its agent's file and commit.
	branches := strings.Fields(git(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/worktree-agent-*"))
	if len(branches) != fanOut {
		t.Fatalf("%d branches worktree-agent-* in the launcher's repo, want %d\nstderr: %s", len(branches), fanOut, stderr.String())
	}
	seen := map[int]bool{}
	for _, b := range branches {
		subject := git(t, repo, "log", "-1", "--format=%s", b)
		i, err := strconv.Atoi(strings.TrimPrefix(subject, "agent "))
		if err != nil || seen[i] {
			t.Fatalf("branch %s ends with commit %q", b, subject)
		}
		seen[i] = true
		if got := git(t, repo, "show", fmt.Sprintf("%s:out-%d.txt", b, i)); got != strconv.Itoa(i) {
			t.Fatalf("branch %s holds out-%d.txt = %q", b, i, got)
		}
	}
	// The killed worker's agents went on elsewhere.
	st.mu.Lock()
	var recovery []time.Duration
	for _, i := range moved {
		after := st.after[i]
		if len(after) == 0 {
			st.mu.Unlock()
			t.Fatalf("agent %d, on the killed worker, made no call after the kill", i)
		}
		ks := st.keys[i]
		if k := ks[len(ks)-1]; k == victim {
			st.mu.Unlock()
			t.Fatalf("agent %d's last call came from the killed worker", i)
		}
		recovery = append(recovery, after[0].Sub(killed))
	}
	st.mu.Unlock()
	slices.Sort(recovery)
	t.Logf("%d agents; worker %s killed holding %d of them; kill → each moved agent's next model request on another worker: min %s, median %s, max %s",
		fanOut, victim, len(moved), recovery[0].Round(time.Millisecond), recovery[len(recovery)/2].Round(time.Millisecond), recovery[len(recovery)-1].Round(time.Millisecond))

	// No process left: the workers stop on SIGTERM, and nothing that
	// names the run's queue or its log is still running.
	for _, k := range keys {
		if k == victim {
			continue
		}
		p := workers[k]
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
		<-p.done
		if !strings.Contains(p.output(), "cadre-remote worker: stopped") {
			t.Fatalf("worker %s did not stop cleanly: %s", k, p.output())
		}
	}
	if left := processesNaming(t, queue, logFile); len(left) > 0 {
		t.Fatalf("processes left after the run: %q", left)
	}
}

// doneRE finds an agent's report in a notification.
var doneRE = regexp.MustCompile(`R64 agent (\d+) done\b`)

// notified reports whether the main agent was told of an agent yet.
func notified(srv *llmtest.Server) bool {
	for _, r := range srv.RequestsFor("LAUNCH64") {
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser && strings.Contains(m.Text(), "<task-notification>") {
				return true
			}
		}
	}
	return false
}

// processesNaming lists the running processes whose command line holds
// any of words.
func processesNaming(t *testing.T, words ...string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to look for processes left: %v", err)
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		line := strings.ReplaceAll(string(raw), "\x00", " ")
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, fmt.Sprintf("%d: %s", pid, line))
				break
			}
		}
	}
	return out
}
