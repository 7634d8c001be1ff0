package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The end-to-end tests run the real cadre binary in a real terminal:
// tmux gives it a pseudo-terminal, takes keys with send-keys and shows
// the screen with capture-pane. Waiting polls the screen with a generous
// deadline that only bounds a failing test; no outcome depends on time.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// cadreBinary builds cmd/cadre once for every test of the package.
func cadreBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", fmt.Sprintf("cadre-e2e-%d-", os.Getpid())) // removed by TestMain
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cadre")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/cadre-dev/cadre/cmd/cadre").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// needTmux skips without tmux, except in CI, where .ci/run installs it.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
}

// term is one tmux server with one pane running a command.
type term struct {
	t      *testing.T
	socket string
}

const (
	termWidth  = 100
	termHeight = 30
	// waitLimit bounds every wait for the screen; only a failing test
	// reaches it.
	waitLimit = 60 * time.Second
)

// startTerm runs script with sh in a new tmux pane of termWidth×termHeight
// with env; the pane stays open after script ends.
func startTerm(t *testing.T, env []string, script string) *term {
	t.Helper()
	tm := &term{t: t, socket: fmt.Sprintf("cadre-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	args := []string{"-L", tm.socket, "-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(termWidth), "-y", fmt.Sprint(termHeight)}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, "sh", "-c", script+"; exec cat")
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", tm.capture())
		}
		_ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
	})
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// capture is the visible screen.
func (tm *term) capture() string {
	out, _ := exec.Command("tmux", "-L", tm.socket, "capture-pane", "-p", "-t", "e2e").Output()
	return string(out)
}

// colours lists the colour codes of the screen's SGR sequences (30–38,
// 40–48, 90–97, 100–107; the defaults 39 and 49 are not colours).
func (tm *term) colours() []string {
	screen := tm.tmux("capture-pane", "-p", "-e", "-t", "e2e")
	var out []string
	for _, m := range sgr.FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, err := strconv.Atoi(p)
			if err == nil && (n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107) {
				out = append(out, m[0])
				break
			}
		}
	}
	return out
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// history is the screen and the scrollback above it.
func (tm *term) history() string {
	return tm.tmux("capture-pane", "-p", "-S", "-", "-t", "e2e")
}

// typeText types text literally.
func (tm *term) typeText(s string) { tm.tmux("send-keys", "-t", "e2e", "-l", s) }

// keys presses named keys (Enter, Escape, C-c, BTab…).
func (tm *term) keys(k ...string) { tm.tmux(append([]string{"send-keys", "-t", "e2e"}, k...)...) }

// waitFor waits until the screen shows every one of subs.
func (tm *term) waitFor(subs ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s := tm.capture()
		ok := true
		for _, sub := range subs {
			ok = ok && strings.Contains(s, sub)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q; it shows:\n%s", subs, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until the screen no longer shows sub.
func (tm *term) waitGone(sub string) {
	tm.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for strings.Contains(tm.capture(), sub) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen still shows %q:\n%s", sub, tm.capture())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// altScreen reports whether the pane is on the alternate screen.
func (tm *term) altScreen() bool {
	return strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "e2e", "#{alternate_on}")) == "1"
}

// project is a work directory with its own HOME and state dir, and the
// environment cadre runs with against srv.
type project struct {
	dir, home string
	env       []string
}

func newProject(t *testing.T, srv *llmtest.Server) *project {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &project{dir: dir, home: home, env: []string{
		"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=test-key", "TERM=xterm-256color", "LANG=C.UTF-8",
	}}
}

// headless runs cadre -p in the project, as an earlier session.
func (p *project) headless(t *testing.T, bin, prompt string) {
	t.Helper()
	cmd := exec.Command(bin, "-p", prompt)
	cmd.Dir, cmd.Env = p.dir, p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p: %v\n%s", err, out.String())
	}
}

// setup is the start of every end-to-end test against the scripted
// model: tmux is there, the binary built, the server up (checked at the
// end) and a project made.
func setup(t *testing.T) (string, *llmtest.Server, *project) {
	t.Helper()
	needTmux(t)
	t.Parallel()
	bin := cadreBinary(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	return bin, srv, newProject(t, srv)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// launch runs cadre with args in the project in a new terminal; when it
// exits, the pane prints its exit status and the terminal's settings.
func (p *project) launch(t *testing.T, bin string, args ...string) *term {
	t.Helper()
	cmd := "cd " + shellQuote(p.dir) + " && " + shellQuote(bin)
	for _, a := range args {
		cmd += " " + shellQuote(a)
	}
	return startTerm(t, p.env, cmd+`; st=$?; echo "cadre exited $st, tty: $(stty -a | tr ' ' '\n' | grep -E '^-?(icanon|echo)$' | tr '\n' ' ')end"`)
}

// TestTerminalUI drives a whole session in a real terminal: a prompt
// whose Bash call asks permission, a turn with a running sub-agent in the
// tree, Ctrl+B on it, Esc mid-turn, /agents, /resume, and Ctrl+C twice.
func TestTerminalUI(t *testing.T) {
	bin, srv, p := setup(t)

	// An earlier session of the project, for /resume.
	srv.Script("earlier-session", llmtest.Text("The earlier answer."), llmtest.Text("The follow-up answer."))
	p.headless(t, bin, "earlier-session: what is in this repo?")

	srv.Script("tui-session",
		llmtest.ToolUse("Bash", map[string]any{"command": "touch notes.txt", "description": "Create the notes file"}),
		llmtest.Text("Created **notes.txt** for you."),
		llmtest.ToolUse("Agent", map[string]any{"subagent_type": "Explore", "description": "survey the repo", "prompt": "child-survey: list every file"}),
		llmtest.Text("The survey goes on in the background."),
		llmtest.Text("never sent").WithDelay(10*time.Minute),
	)
	srv.Script("child-survey", llmtest.Text("never sent").WithDelay(10*time.Minute))

	tm := p.launch(t, bin)
	tm.waitFor("Ask anything", "default mode")
	if !tm.altScreen() {
		t.Error("the UI is not on the alternate screen")
	}
	if len(tm.colours()) == 0 {
		t.Error("the UI shows no colour at all")
	}

	// A prompt; its Bash call asks; allow once.
	tm.typeText("tui-session: create notes.txt")
	tm.keys("Enter")
	tm.waitFor("Permission needed · main", "touch notes.txt", "1. Yes, allow once", "Bash(touch:*)")
	tm.keys("1")
	tm.waitFor("Created notes.txt for you.")
	if _, err := os.Stat(filepath.Join(p.dir, "notes.txt")); err != nil {
		t.Fatalf("the allowed call did not run: %v", err)
	}

	// A turn with a sub-agent that keeps running: the tree shows it.
	tm.typeText("now survey the repo")
	tm.keys("Enter")
	tm.waitFor("Agents", "Explore", "running", "survey the repo")
	// Ctrl+B on the running child moves it to the background: the main
	// agent's call returns and its turn goes on (S-7.4).
	tm.keys("C-b")
	tm.waitFor("runs in the background now.", "The survey goes on in the background.")
	// Esc interrupts a turn that waits on the model.
	tm.typeText("and then wait")
	tm.keys("Enter")
	tm.waitFor("and then wait")
	tm.keys("Escape")
	tm.waitFor("Interrupted")

	// /agents lists the definitions with their sources.
	tm.typeText("/agents")
	tm.keys("Enter")
	tm.waitFor("NAME", "SOURCE", "Explore", "builtin")

	// /model shows the main agent's model and switches it.
	tm.typeText("/model haiku")
	tm.keys("Enter")
	tm.waitFor("Main agent: claude-haiku")

	// /resume lists the earlier session with its first prompt and
	// continues it: its conversation is back, and the model gets it with
	// the next prompt.
	tm.typeText("/resume")
	tm.keys("Enter")
	tm.waitFor("Resume a session of this project", "earlier-session: what is in this repo?")
	tm.keys("Enter")
	tm.waitFor("Resumed session", "The earlier answer.")
	tm.typeText("and what else?")
	tm.keys("Enter")
	tm.waitFor("The follow-up answer.")
	if reqs := srv.RequestsFor("earlier-session"); len(reqs) != 2 || len(reqs[1].Messages) != 3 || !strings.Contains(reqs[1].Messages[1].Text(), "The earlier answer.") {
		t.Errorf("the resumed session's request does not carry its conversation: %d requests", len(reqs))
	}

	// Ctrl+C twice leaves; the terminal is back to normal.
	tm.keys("C-c")
	tm.waitFor("Press Ctrl+C again to exit")
	tm.keys("C-c")
	out := tm.waitFor("cadre exited 0, tty:", "end")
	if tm.altScreen() {
		t.Error("the alternate screen is still on after exit")
	}
	if !strings.Contains(out, "icanon echo") || strings.Contains(out, "-icanon") || strings.Contains(out, "-echo") {
		t.Errorf("the terminal was not restored (line mode and echo):\n%s", out)
	}

	// What was said is in the transcript, the interrupted turn included.
	b, err := exec.Command("sh", "-c", "cat "+shellQuote(filepath.Join(p.home, "state"))+"/cadre/projects/*/*.jsonl").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"create notes.txt", "Created **notes.txt** for you.", "now survey the repo"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the transcripts lack %q", want)
		}
	}
}

// TestTerminalUIContinues: cadre --continue opens the UI on the project's
// latest session, its conversation shown, and the next prompt continues
// it; --resume ID does the same for a named one.
func TestTerminalUIContinues(t *testing.T) {
	bin, srv, p := setup(t)
	srv.Script("saved-session", llmtest.Text("Saved **answer**."), llmtest.Text("Continued answer."), llmtest.Text("Resumed answer."))
	p.headless(t, bin, "saved-session: remember this")

	tm := p.launch(t, bin, "--continue")
	tm.waitFor("Resumed session", "› saved-session: remember this", "Saved answer.")
	tm.typeText("go on")
	tm.keys("Enter")
	tm.waitFor("Continued answer.")
	tm.keys("C-d")
	tm.waitFor("cadre exited 0, tty: icanon echo end")
	reqs := srv.RequestsFor("saved-session")
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 {
		t.Fatalf("--continue did not carry the conversation: %d requests", len(reqs))
	}
	files, err := filepath.Glob(filepath.Join(p.home, "state", "cadre", "projects", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("--continue wrote to another session: %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")

	tm = p.launch(t, bin, "--resume", id)
	tm.waitFor("Resumed session "+id, "Continued answer.")
	tm.typeText("once more")
	tm.keys("Enter")
	tm.waitFor("Resumed answer.")
	tm.keys("C-d")
	tm.waitFor("cadre exited 0, tty: icanon echo end")
	if reqs := srv.RequestsFor("saved-session"); len(reqs) != 3 || len(reqs[2].Messages) != 5 {
		t.Fatalf("--resume did not carry the conversation: %d requests", len(reqs))
	}

	// A session that is not there is a usage error, before any UI.
	tm = p.launch(t, bin, "--resume", "0b7e5a8e-0000-4000-8000-000000000000")
	tm.waitFor("no session 0b7e5a8e-0000-4000-8000-000000000000", "cadre exited 2")
}

// TestTerminalUINotifiesWhileIdle: a background child that ends after the
// main agent's turn reaches the idle UI as a notification, and the main
// agent answers it without a prompt.
func TestTerminalUINotifiesWhileIdle(t *testing.T) {
	bin, srv, p := setup(t)
	srv.Script("bg-session", llmtest.ToolUse("Agent", map[string]any{"subagent_type": "general-purpose", "description": "count the files",
		"prompt": "bg-child: count the files", "run_in_background": true}),
		llmtest.Text("Counting in the background."), llmtest.Text("The background count is done: 1 file."))
	// The child answers once the test lets it: after the main turn ended.
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	srv.ScriptFunc("bg-child", func(*llmtest.Request) llmtest.Turn {
		<-release
		return llmtest.Text("1 file: README.md")
	})

	tm := p.launch(t, bin)
	tm.waitFor("Ask anything")
	tm.typeText("bg-session: count the files in the background")
	tm.keys("Enter")
	tm.waitFor("Counting in the background.", "background")
	tm.waitGone("esc to interrupt")
	letGo()
	tm.waitFor(`notification: general-purpose`, `"count the files" completed`, "The background count is done: 1 file.")
	tm.waitGone("esc to interrupt")
	tm.keys("C-d")
	tm.waitFor("cadre exited 0, tty: icanon echo end")
	reqs := srv.RequestsFor("bg-session")
	if len(reqs) != 3 || !strings.Contains(reqs[2].Messages[len(reqs[2].Messages)-1].Text(), "<task-notification>") {
		t.Fatalf("the main agent was not run on the notification: %d requests", len(reqs))
	}
}

// TestTerminalUIKeepsScrollback: with --no-alt-screen the conversation is
// written to the terminal's scrollback and stays there after exit (Ctrl+D);
// with NO_COLOR the screen has no colour.
func TestTerminalUIKeepsScrollback(t *testing.T) {
	bin, srv, p := setup(t)
	srv.Script("inline-session", llmtest.Text("First **answer**."), llmtest.Text("Second answer."))
	p.env = append(p.env, "NO_COLOR=1")

	tm := p.launch(t, bin, "--no-alt-screen")
	tm.waitFor("Ask anything")
	if tm.altScreen() {
		t.Error("--no-alt-screen still switched to the alternate screen")
	}
	tm.typeText("inline-session: one")
	tm.keys("Enter")
	tm.waitFor("First answer.")
	tm.typeText("two")
	tm.keys("Enter")
	tm.waitFor("Second answer.")
	if c := tm.colours(); len(c) > 0 {
		t.Errorf("NO_COLOR is set, yet the screen has colour codes %q", c)
	}
	tm.keys("C-d")
	tm.waitFor("cadre exited 0, tty: icanon echo end")
	hist := tm.history()
	for _, want := range []string{"› inline-session: one", "First answer.", "› two", "Second answer."} {
		if !strings.Contains(hist, want) {
			t.Errorf("the scrollback lacks %q:\n%s", want, hist)
		}
	}
}

// TestTerminalRestoredAfterPanic: a panic inside the UI (here in the
// /agents action) ends it with the terminal back in line mode with echo,
// off the alternate screen.
func TestTerminalRestoredAfterPanic(t *testing.T) {
	needTmux(t)
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, []string{"CADRE_TUI_PANIC_HELPER=1", "TERM=xterm-256color", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")},
		shellQuote(self)+` 2>/dev/null; st=$?; echo "ui exited $st, tty: $(stty -a | tr ' ' '\n' | grep -E '^-?(icanon|echo)$' | tr '\n' ' ')end"`)
	tm.waitFor("Ask anything")
	tm.typeText("/agents")
	tm.keys("Enter")
	out := tm.waitFor("ui exited 3, tty:", "end")
	if !strings.Contains(out, "ui ended: program was killed: program experienced a panic") {
		t.Errorf("the UI did not report the panic:\n%s", out)
	}
	if !strings.Contains(out, "tty: icanon echo end") {
		t.Errorf("the terminal was not restored after the panic:\n%s", out)
	}
	if tm.altScreen() {
		t.Error("the alternate screen is still on after the panic")
	}
}

// TestTerminalUIResumeShowsInterruptedTasks: a headless run is killed
// (SIGKILL) while its background child works; cadre --resume opens the UI
// on that session and, without a prompt, shows the child's "killed"
// notification and the main agent's answer to it.
func TestTerminalUIResumeShowsInterruptedTasks(t *testing.T) {
	bin, srv, p := setup(t)
	arrived, waiting, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, waitOnce sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	srv.ScriptFunc("crash-main", func(r *llmtest.Request) llmtest.Turn {
		last := r.Messages[len(r.Messages)-1].Text()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"subagent_type": "general-purpose", "description": "index the shop",
				"prompt": "crash-child: index the shop", "run_in_background": true})
		case strings.Contains(last, "<task-notification>") && strings.Contains(last, "<status>killed</status>"):
			return llmtest.Text("The index was interrupted by a crash; I will redo it.")
		}
		waitOnce.Do(func() { close(waiting) })
		return llmtest.Text("Indexing in the background.")
	})
	srv.ScriptFunc("crash-child", func(*llmtest.Request) llmtest.Turn {
		close(arrived)
		<-release
		return llmtest.Text("too late")
	})
	const id = "7c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"
	cmd := exec.Command(bin, "-p", "crash-main: index the shop", "--session-id", id)
	cmd.Dir, cmd.Env = p.dir, p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-arrived
	<-waiting
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	letGo()

	tm := p.launch(t, bin, "--resume", id)
	screen := tm.waitFor("Resumed session "+id, "crash-main: index the shop", `"index the shop" killed`,
		"The index was interrupted by a crash; I will redo it.")
	if strings.Index(screen, `"index the shop" killed`) > strings.Index(screen, "The index was interrupted") {
		t.Fatalf("the notification shows after the answer to it:\n%s", screen)
	}
	tm.waitGone("esc to interrupt")
	tm.keys("C-d")
	tm.waitFor("cadre exited 0, tty: icanon echo end")
	reqs := srv.RequestsFor("crash-main")
	if n := strings.Count(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Text(), "<task-notification>"); n != 1 {
		t.Fatalf("the main agent heard of %d notifications:\n%s", n, out.String())
	}
}
