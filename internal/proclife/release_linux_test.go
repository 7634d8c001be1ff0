package proclife

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile reads RssFile (KiB) of a process from /proc/<pid>/status.
func rssFile(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("read status of %d: %v", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("RssFile of %d: %q: %v", pid, v, err)
			}
			return n
		}
	}
	t.Fatalf("no RssFile in /proc/%d/status", pid)
	return 0
}

// Dropping the executable's clean pages is safe in whatever way this test
// binary was built (cgo or not, -race or not): the process carries on, and
// its resident file pages shrink.
func TestReleaseFilePagesIsSafeAndShrinks(t *testing.T) {
	before := rssFile(t, os.Getpid())
	if n := releaseFilePages(); n == 0 {
		t.Fatal("releaseFilePages dropped nothing: it did not find the executable's code in /proc/self/maps")
	}
	after := rssFile(t, os.Getpid())
	// Everything still runs: code and read-only data fault back in.
	if got := strings.Repeat("ab", 3) + strconv.Itoa(after); !strings.HasPrefix(got, "ababab") {
		t.Fatalf("after release: %q", got)
	}
	if after >= before {
		t.Fatalf("RssFile %d KiB before, %d KiB after: nothing released", before, after)
	}
	t.Logf("RssFile %d KiB -> %d KiB", before, after)
}

func TestPositionDependent(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := func(etype byte) []byte {
		h := make([]byte, 64)
		copy(h, "\x7fELF")
		h[4], h[5], h[16] = 2, 1, etype
		return h
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{write("exec", header(2)), true},
		{write("pie", header(3)), false},
		{write("short", []byte("\x7fEL")), false},
		{write("text", []byte("#!/bin/sh\necho hello world\n")), false},
		{dir + "/missing", false},
	} {
		if got := positionDependent(c.path); got != c.want {
			t.Errorf("positionDependent(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
