package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"

	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
)

// The test binary doubles as a small cadre: with CADRE_SANDBOX_HELPER set
// it runs that command through the Bash tool in the sandbox and prints its
// result; the kill -9 test kills it mid-command.
func TestMain(m *testing.M) {
	if cmd := os.Getenv("CADRE_SANDBOX_HELPER"); cmd != "" {
		os.Exit(helper(cmd))
	}
	os.Exit(m.Run())
}

func helper(command string) int {
	cfg := builtin.Config{}
	if os.Getenv("CADRE_SANDBOX_HELPER_PLAIN") == "" {
		sb, err := sandbox.New(context.Background(), sandbox.Config{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cfg.Sandbox = &sandbox.Bash{Sandbox: sb}
	}
	wd, _ := os.Getwd()
	bash := builtin.NewBash(cfg)
	out, err := bash.Run(context.Background(), &tool.Env{Cwd: wd, Files: tool.NewFileState()}, []byte(fmt.Sprintf(`{"command": %q}`, command)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(out.Text)
	return 0
}

// newSandbox returns a sandbox with real bubblewrap, or skips when bwrap
// is not installed (.ci/run installs it, so CI never skips).
func newSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed")
	}
	sb, err := sandbox.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// run runs a shell command in the sandbox and returns its output, exit
// code and the sandbox's notes.
func run(t *testing.T, sb *sandbox.Sandbox, p sandbox.Policy, command string) (string, int, string) {
	t.Helper()
	cmd, err := sb.Command(p, []string{"bash", "-c", command})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code, sb.Explain(p, string(out))
}

// dirs returns a working directory and a directory outside it. The
// outside one is not under /tmp (the sandbox has a /tmp of its own, where
// host paths are simply absent): it is made beside the test's sources (or
// in the user's cache, or /var/tmp) and removed at the end.
func dirs(t *testing.T) (work, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work = filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	outside = sandboxtest.OutsideDir(t, ".sandbox-test-")
	return work, outside
}

func TestNewUnavailable(t *testing.T) {
	t.Parallel()
	_, err := sandbox.New(context.Background(), sandbox.Config{BwrapPath: "/nonexistent/bwrap"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("missing bwrap: %v", err)
	}
	// A bwrap that cannot create namespaces, as on a kernel without
	// unprivileged user namespaces.
	fake := filepath.Join(t.TempDir(), "bwrap")
	script := "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.New(context.Background(), sandbox.Config{BwrapPath: fake})
	for _, w := range []string{"No permissions to create new namespace", "user namespaces", "kernel.unprivileged_userns_clone"} {
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), w) {
			t.Errorf("failing bwrap: %v lacks %q", err, w)
		}
	}
	// Open: a fallback with a warning, or an error when required.
	sb, warning, err := sandbox.Open(context.Background(), sandbox.Config{BwrapPath: fake}, false)
	if sb != nil || err != nil || !strings.Contains(warning, "Bash commands run without it") || !strings.Contains(warning, "user namespaces") {
		t.Errorf("Open, not required: %v %q %v", sb, warning, err)
	}
	sb, warning, err = sandbox.Open(context.Background(), sandbox.Config{BwrapPath: fake}, true)
	if sb != nil || warning != "" || !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("Open, required: %v %q %v", sb, warning, err)
	}
}

func TestWritesConfined(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, sandbox.Config{})
	work, outside := dirs(t)
	_, home := dirs(t)
	p := sandbox.Policy{Cwd: work}
	out, code, notes := run(t, sb, p, fmt.Sprintf("echo ok > inside.txt && echo tmp > /tmp/t && cat /tmp/t && touch %s/x", outside))
	if code == 0 || !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "tmp") {
		t.Errorf("write outside: exit %d, output %q", code, out)
	}
	if !strings.Contains(notes, filepath.Join(outside, "x")) || !strings.Contains(notes, work) {
		t.Errorf("notes %q should name the refused path and where writes may go", notes)
	}
	if b, err := os.ReadFile(filepath.Join(work, "inside.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("write inside the working directory: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a file appeared outside the working directories")
	}
	// /tmp is private: nothing written there is left on the host.
	if _, err := os.Stat("/tmp/t"); err == nil {
		if b, _ := os.ReadFile("/tmp/t"); string(b) == "tmp\n" {
			t.Error("the sandbox's /tmp is the host's")
		}
	}
	// A configured writable path can be written; the home beside it not.
	cache := filepath.Join(home, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	sb2 := newSandbox(t, sandbox.Config{Writable: []string{cache}})
	out, code, _ = run(t, sb2, p, fmt.Sprintf("touch %s/c && touch %s/h", cache, home))
	if _, err := os.Stat(filepath.Join(cache, "c")); err != nil || code == 0 || !strings.Contains(out, "Read-only") {
		t.Errorf("writable path: exit %d output %q stat %v", code, out, err)
	}
	// Extra working directories are writable too.
	out, code, _ = run(t, sb, sandbox.Policy{Cwd: work, Dirs: []string{outside}}, fmt.Sprintf("touch %s/y", outside))
	if code != 0 {
		t.Errorf("write to an additional directory: exit %d %q", code, out)
	}
}

func TestMaskedPaths(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, sandbox.Config{})
	work, _ := dirs(t)
	const secret = "TOP-SECRET-4f1c"
	for name, body := range map[string]string{"secrets/key.txt": secret, ".env": secret, "src/a.txt": "public", "locked/cfg": "cfg"} {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := sandbox.Policy{Cwd: work, Hidden: []string{filepath.Join(work, "secrets"), filepath.Join(work, ".env")},
		ReadOnly: []string{filepath.Join(work, "locked")}}
	for _, c := range []struct{ cmd, want, note string }{
		{"cat secrets/key.txt", "No such file or directory", "secrets/key.txt is masked"},
		{"cat .env", "Permission denied", ".env is masked"},
		{"ls -A secrets | wc -l", "0", ""},
		{"grep -r TOP .; cat src/a.txt", "public", ".env is masked"},
		{"cp -r secrets x && cat x/*", "No such file", ""},
		{"touch secrets/new", "Read-only file system", "secrets/new is masked"},
		{"echo x > locked/cfg", "Read-only file system", "locked/cfg is read-only"},
	} {
		out, _, notes := run(t, sb, p, c.cmd)
		if strings.Contains(out, secret) {
			t.Errorf("%s: the secret leaked: %q", c.cmd, out)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: output %q lacks %q", c.cmd, out, c.want)
		}
		if c.note != "" && !strings.Contains(notes, c.note) || c.note == "" && notes != "" {
			t.Errorf("%s: notes %q, want %q", c.cmd, notes, c.note)
		}
	}
	// The files are untouched on the host.
	if b, _ := os.ReadFile(filepath.Join(work, "locked", "cfg")); string(b) != "cfg" {
		t.Errorf("read-only file changed: %q", b)
	}
}

func TestNetwork(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("the network test runs curl, which is not on PATH (.ci/run installs it): %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello-from-host") }))
	defer srv.Close()
	work, _ := dirs(t)
	p := sandbox.Policy{Cwd: work}
	cmd := "curl -sS --max-time 20 " + srv.URL
	off := newSandbox(t, sandbox.Config{Network: false})
	out, code, notes := run(t, off, p, cmd)
	if code == 0 || strings.Contains(out, "hello-from-host") {
		t.Errorf("network off: exit %d output %q", code, out)
	}
	if !strings.Contains(notes, "network access is off") {
		t.Errorf("network off: notes %q, output %q", notes, out)
	}
	on := newSandbox(t, sandbox.Config{Network: true})
	out, code, notes = run(t, on, p, cmd)
	if code != 0 || out != "hello-from-host" || notes != "" {
		t.Errorf("network on: exit %d output %q notes %q", code, out, notes)
	}
}

// A command's processes — a `setsid sleep` included — end when the cadre
// that ran it is killed with kill -9, in the middle of the command.
func TestNothingOutlivesKill9(t *testing.T) {
	t.Parallel()
	newSandbox(t, sandbox.Config{})
	work, _ := dirs(t)
	marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	cmd := exec.Command(os.Args[0])
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CADRE_SANDBOX_HELPER=setsid sleep "+marker+" >/dev/null 2>&1 & nohup sleep "+marker+"1 >/dev/null 2>&1 & sleep "+marker+"2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pids := waitForProcs(t, "sleep", []string{marker, marker + "1", marker + "2"})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pids)
}

// Without the sandbox, a Bash command still gets a parent-death signal:
// after kill -9 of its cadre, the command itself ends (what it started in
// turn only the sandbox's PID namespace can promise).
func TestCommandDiesWithUnsandboxedCadre(t *testing.T) {
	t.Parallel()
	work, _ := dirs(t)
	marker := fmt.Sprintf("%d.%d", 7000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	cmd := exec.Command(os.Args[0])
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CADRE_SANDBOX_HELPER=sleep "+marker, "CADRE_SANDBOX_HELPER_PLAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pids := waitForProcs(t, "sleep", []string{marker})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pids)
}

// procsWithArg returns the pids of live processes named name whose last
// argument is arg.
func procsWithArg(name, arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 2 && filepath.Base(args[0]) == name && args[1] == arg && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	i := strings.LastIndexByte(line, ')')
	return i >= 0 && len(line) > i+2 && line[i+2] != 'Z' && line[i+2] != 'X'
}

// waitForProcs waits (bounded; a safety net, not a timing assumption) for
// one live process per marker and returns their pids.
func waitForProcs(t *testing.T, name string, markers []string) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pids []int
		for _, m := range markers {
			pids = append(pids, procsWithArg(name, m)...)
		}
		if len(pids) >= len(markers) {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v never started (found %v)", markers, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits (bounded) until every pid is gone and fails naming the
// survivors.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived the kill -9 of their cadre", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDefaultWritable(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/home/u", "GOMODCACHE": "/mods", "CARGO_HOME": "/c"}
	got := sandbox.DefaultWritable(func(k string) string { return env[k] })
	want := []string{"/home/u/.cache/go-build", "/mods", "/home/u/.npm", "/home/u/.cache/pip", "/c/registry", "/c/git"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("DefaultWritable = %q, want %q", got, want)
	}
}

// Through the Bash tool: a refused write and a masked read are explained
// in the result, and a sandboxed background shell is killed whole.
func TestBashToolInSandbox(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, sandbox.Config{})
	work, outside := dirs(t)
	if err := os.MkdirAll(filepath.Join(work, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "secrets", "key.txt"), []byte("TOP-SECRET-91"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := builtin.Config{KillGrace: 500 * time.Millisecond, Sandbox: &sandbox.Bash{Sandbox: sb, Masks: func(string, []string) ([]string, []string, error) {
		return []string{filepath.Join(work, "secrets")}, nil, nil
	}}}
	shells := builtin.NewShells()
	defer shells.Close()
	env := &tool.Env{Cwd: work, Files: tool.NewFileState(), Shells: shells}
	call := func(tl tool.Tool, in string) tool.Output {
		t.Helper()
		out, err := tl.Run(context.Background(), env, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	bash := builtin.NewBash(cfg)
	out := call(bash, fmt.Sprintf(`{"command":"cat secrets/key.txt; touch %s/x"}`, outside))
	for _, w := range []string{"Exit code: 1", "Sandbox: " + filepath.Join(work, "secrets", "key.txt") + " is masked", "Sandbox: the write to " + filepath.Join(outside, "x") + " was refused"} {
		if !strings.Contains(out.Text, w) {
			t.Errorf("result lacks %q:\n%s", w, out.Text)
		}
	}
	if strings.Contains(out.Text, "TOP-SECRET-91") {
		t.Errorf("the secret leaked: %s", out.Text)
	}
	marker := fmt.Sprintf("%d.%d", 6000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	out = call(bash, `{"command":"setsid sleep `+marker+` & sleep `+marker+`1","run_in_background":true}`)
	id := "bash_1"
	if !strings.Contains(out.Text, id) {
		t.Fatalf("background start: %s", out.Text)
	}
	pids := waitForProcs(t, "sleep", []string{marker, marker + "1"})
	if out := call(builtin.NewKillShell(cfg), `{"shell_id":"`+id+`"}`); out.IsError {
		t.Fatalf("KillShell: %s", out.Text)
	}
	waitGone(t, pids)
}
