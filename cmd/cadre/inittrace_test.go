package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Package initialisation is what every cadre process pays before main, the
// headless ones included. The Go runtime reports it with
// GODEBUG=inittrace=1: per package, the bytes and the allocations of its
// init. Those two are deterministic (the times next to them are not), so
// this test bounds them without being noisy.

// Bounds of the whole binary's package init: the measured floor plus
// about 5 % (the sums move by a few dozen allocations from one build or
// run to the next). History (go1.26.8, --version): 79,986 allocations and
// 6.8 MB while the terminal UI's Markdown renderer pulled glamour,
// chroma, goldmark and bluemonday in; 4,955 and 885,216 bytes without
// them (issue 24); 6,523 and 1,148,224 with the OpenTelemetry SDK and its
// official OTLP exporters, which link grpc-go, grpc-gateway and the
// generated OTLP packages (issue 28); 4,560-4,590 and 817-824 KB with
// the project's own OTLP exporters (internal/telemetry/otlpexport, no
// grpc-go) and permission's, sandbox's, hooks' and the TUI's lookup maps
// and regular expressions built on first use (sync.OnceValue) instead of
// at init; 4,545-4,551 and 815-816 KB once otlpexport wrote the
// protobuf wire format itself (no google.golang.org/protobuf, whose
// internal/detrand read the executable at init). See BENCHMARKS.md.
const (
	maxInitAllocs = 4750
	maxInitBytes  = 857_000
)

// heavyInit are packages that must not be linked into cadre at all: their
// init registers hundreds of lexers, styles or sanitiser rules.
var heavyInit = []string{
	"github.com/alecthomas/chroma",
	"charm.land/glamour",
	"github.com/yuin/goldmark",
	"github.com/microcosm-cc/bluemonday",
}

// initStats sums the inittrace lines of one run.
type initStats struct {
	allocs, bytes int64
	pkgs          map[string][2]int64 // bytes, allocs
}

// parseInitTrace reads "init pkg @t ms, c ms clock, B bytes, A allocs"
// lines; other lines are ignored.
func parseInitTrace(stderr []byte) (initStats, error) {
	st := initStats{pkgs: map[string][2]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.ParseInt(f[7], 10, 64)
		a, err2 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil {
			return st, fmt.Errorf("inittrace line %q: bad numbers", sc.Text())
		}
		st.bytes += b
		st.allocs += a
		st.pkgs[f[1]] = [2]int64{b, a}
	}
	if len(st.pkgs) == 0 {
		return st, fmt.Errorf("no inittrace lines in stderr:\n%s", stderr)
	}
	return st, nil
}

func buildCadre(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cadre")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestInitAllocationsBounded runs the built binary's --version and a
// headless -p run against the scripted model with GODEBUG=inittrace=1 and
// bounds the sum of the package inits' allocations and bytes.
func TestInitAllocationsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cadre binary")
	}
	bin := buildCadre(t)
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("", llmtest.Text("ok"))
	home, work := t.TempDir(), t.TempDir()
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-ant-test", "GODEBUG=inittrace=1",
	}
	for _, args := range [][]string{{"--version"}, {"-p", "hi", "--model", "claude-sonnet-4-5"}} {
		t.Run(args[0], func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = work, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("cadre %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
			}
			want := "cadre "
			if args[0] == "-p" {
				want = "ok"
			}
			if !strings.HasPrefix(stdout.String(), want) {
				t.Fatalf("cadre %v printed %q, want it to start with %q", args, stdout.String(), want)
			}
			st, err := parseInitTrace(stderr.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("package init: %d allocations, %d bytes, %d packages", st.allocs, st.bytes, len(st.pkgs))
			for pkg := range st.pkgs {
				for _, h := range heavyInit {
					if strings.HasPrefix(pkg, h) {
						t.Errorf("package %s is linked into cadre; its init runs in every process", pkg)
					}
				}
			}
			if st.allocs > maxInitAllocs || st.bytes > maxInitBytes {
				t.Errorf("package init allocates %d times, %d bytes; bounds %d and %d (largest: %s)",
					st.allocs, st.bytes, maxInitAllocs, maxInitBytes, largest(st, 8))
			}
		})
	}
}

// largest names the n packages whose init allocates the most bytes.
func largest(st initStats, n int) string {
	type pb struct {
		pkg  string
		b, a int64
	}
	var all []pb
	for p, v := range st.pkgs {
		all = append(all, pb{p, v[0], v[1]})
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[j].b > all[i].b || all[j].b == all[i].b && all[j].pkg < all[i].pkg {
				all[i], all[j] = all[j], all[i]
			}
		}
	}
	var parts []string
	for i := 0; i < len(all) && i < n; i++ {
		parts = append(parts, fmt.Sprintf("%s %d B %d allocs", all[i].pkg, all[i].b, all[i].a))
	}
	return strings.Join(parts, "; ")
}

func TestParseInitTrace(t *testing.T) {
	in := "init runtime @0.024 ms, 0.11 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/x/y @1.5 ms, 0.2 ms clock, 1200 bytes, 30 allocs\n" +
		"something else\n" +
		"init github.com/x/z @1.7 ms, 0.01 ms clock, 48 bytes, 2 allocs\n"
	st, err := parseInitTrace([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if st.allocs != 32 || st.bytes != 1248 || len(st.pkgs) != 3 {
		t.Errorf("got %d allocs, %d bytes, %d packages; want 32, 1248, 3", st.allocs, st.bytes, len(st.pkgs))
	}
	if _, err := parseInitTrace([]byte("no trace\n")); err == nil {
		t.Error("want an error when stderr has no inittrace lines")
	}
}
