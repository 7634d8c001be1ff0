package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Startup benchmarks. The exec ones run the real cadre binary: the one
// named by CADRE_BIN, or one built into a temporary directory (go build,
// cached by the Go build cache) when CADRE_BIN is unset.

// cadreBinary returns the binary to measure.
func cadreBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("CADRE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "cadre")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cadre-dev/cadre/cmd/cadre")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// firstArrival is an llmtest script that answers "ok" to every request and
// remembers when the first request of the current round arrived.
type firstArrival struct {
	mu    sync.Mutex
	first time.Time
}

func (f *firstArrival) script(r *llmtest.Request) llmtest.Turn {
	f.mu.Lock()
	if f.first.IsZero() {
		f.first = r.Arrived
	}
	f.mu.Unlock()
	return llmtest.Text("ok")
}

// take returns the first arrival of the round and starts a new round.
func (f *firstArrival) take() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.first
	f.first = time.Time{}
	return t
}

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchEnv is a clean environment pointing cadre at srv, with HOME and
// the state directory under home.
func benchEnv(home, url string) []string {
	return []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-ant-bench",
	}
}

// BenchmarkExecVersion measures `cadre --version` as a process: fork/exec,
// runtime and package initialisation, flag parsing, exit.
func BenchmarkExecVersion(b *testing.B) {
	bin := cadreBinary(b)
	home := b.TempDir()
	for b.Loop() {
		cmd := exec.Command(bin, "--version")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		if err != nil || !strings.HasPrefix(string(out), "cadre ") {
			b.Fatalf("cadre --version: %v %q", err, out)
		}
	}
}

// BenchmarkExecFirstRequest runs `cadre -p hi` against an llmtest server
// that answers at once. first-req-ns is the median time from just before
// the process is started to the arrival of its first model request at the
// server; ns/op is the whole process (start to exit).
func BenchmarkExecFirstRequest(b *testing.B) {
	bin := cadreBinary(b)
	srv := llmtest.NewServer(llmtest.WithMaxRequests(1 << 30))
	defer srv.Close()
	var fa firstArrival
	srv.ScriptFunc("", fa.script)
	home, work := b.TempDir(), b.TempDir()
	var firsts []time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "-p", "hi", "--model", "claude-sonnet-4-5")
		cmd.Dir = work
		cmd.Env = benchEnv(home, srv.URL())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("cadre -p: %v\n%s", err, out.String())
		}
		first := fa.take()
		if first.IsZero() {
			b.Fatal("no request arrived")
		}
		firsts = append(firsts, first.Sub(start))
	}
	b.ReportMetric(float64(medianOf(firsts).Nanoseconds()), "first-req-ns")
}

// BenchmarkMainFirstRequest runs Main in this process, as `cadre -p hi`
// against an llmtest server: configuration, settings, agent definitions,
// runtime creation and the first request — without process start and
// package initialisation. first-req-ns is the median time from the call of
// Main to the first request's arrival. Profile it with -cpuprofile.
func BenchmarkMainFirstRequest(b *testing.B) {
	srv := llmtest.NewServer(llmtest.WithMaxRequests(1 << 30))
	defer srv.Close()
	var fa firstArrival
	srv.ScriptFunc("", fa.script)
	home, work := b.TempDir(), b.TempDir()
	b.Chdir(work)
	env := map[string]string{}
	for _, kv := range benchEnv(home, srv.URL()) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	var firsts []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		var errb bytes.Buffer
		start := time.Now()
		code := Main([]string{"-p", "hi", "--model", "claude-sonnet-4-5"}, strings.NewReader(""), io.Discard, &errb, getenv)
		if code != ExitOK {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		first := fa.take()
		if first.IsZero() {
			b.Fatal("no request arrived")
		}
		firsts = append(firsts, first.Sub(start))
	}
	b.ReportMetric(float64(medianOf(firsts).Nanoseconds()), "first-req-ns")
}

// fanoutScript answers the peerbench scenario from the request alone: the
// main agent (first user text holding BENCH-MAIN) starts n sub-agents in one
// message, each child (BENCH-CHILD-i) reads file once and answers.
func fanoutScript(n int, file string) func(*llmtest.Request) llmtest.Turn {
	return func(r *llmtest.Request) llmtest.Turn {
		first := r.FirstUserText()
		results := len(r.LastToolResults()) > 0
		if at := strings.Index(first, "BENCH-CHILD-"); at >= 0 {
			if !results {
				return llmtest.ToolUse("Read", map[string]string{"file_path": file})
			}
			id, _, _ := strings.Cut(first[at+len("BENCH-CHILD-"):], ":")
			return llmtest.Text("done " + id)
		}
		if strings.Contains(first, "BENCH-MAIN") && !results {
			calls := make([]llmtest.Call, n)
			for i := range calls {
				calls[i] = llmtest.Call{Name: "Agent", Input: map[string]any{
					"description":   "bench task",
					"prompt":        "BENCH-CHILD-" + strconv.Itoa(i) + ": read the file " + file + " with your read tool, then reply exactly 'done " + strconv.Itoa(i) + "'.",
					"subagent_type": "general-purpose",
				}}
			}
			return llmtest.ToolUses(calls...)
		}
		return llmtest.Text("BENCH-FINAL: all sub-agents reported done.")
	}
}

// BenchmarkMainFanout16 runs Main in this process on the peerbench
// scenario at fan-out 16 (`cadre -p PROMPT`, default permission mode,
// transcripts on, in a one-commit git repository) against an llmtest
// server: the CLI's whole path without process start. The server shares
// the process; leave it out of a profile with
// `go tool pprof -ignore llmtest`.
func BenchmarkMainFanout16(b *testing.B) { benchFanout16(b, "") }

// benchFanout16 is BenchmarkMainFanout16 with settings, when not "", as
// the project's .cadre/settings.json (the hooks benchmark adds a hook).
func benchFanout16(b *testing.B, settings string) {
	const n = 16
	home, work := b.TempDir(), b.TempDir()
	file := filepath.Join(work, "bench-input.txt")
	if err := os.WriteFile(file, []byte(strings.Repeat("benchmark input line\n", 20)), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "bench-input.txt"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench input"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if settings != "" {
		if err := os.MkdirAll(filepath.Join(work, ".cadre"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, ".cadre", "settings.json"), []byte(settings), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	srv := llmtest.NewServer(llmtest.WithMaxRequests(1 << 30))
	defer srv.Close()
	srv.ScriptFunc("", fanoutScript(n, file))
	b.Chdir(work)
	env := map[string]string{}
	for _, kv := range benchEnv(home, srv.URL()) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	prompt := "BENCH-MAIN-FANOUT-16: use your sub-agent tool to run 16 tiny tasks in parallel, one sub-agent each, then report."
	args := []string{"-p", prompt, "--model", "claude-sonnet-4-5"}
	if settings != "" {
		args = append(args, "--trust-project") // the project's settings hold the hooks
	}
	b.ReportAllocs()
	for b.Loop() {
		var out, errb bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errb, getenv)
		if code != ExitOK || !strings.Contains(out.String(), "BENCH-FINAL") {
			b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		b.Fatalf("protocol violations: %v", v)
	}
	if got, want := len(srv.Requests()), b.N*(2+2*n); got != want {
		b.Fatalf("model requests %d, want %d", got, want)
	}
}
