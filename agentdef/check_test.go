package agentdef

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ParsePaths (agents check) never blocks on a FIFO and never reads more
// than the size limit of a file: a FIFO is an error naming it, a file
// over 1 MiB a warning, and the regular agent beside them still loads.
func TestParsePathsRefusesFIFOsAndHugeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, []byte("---\nname: big\ndescription: big\n---\n"+strings.Repeat("x", 2*MaxFileSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.md")
	if err := os.WriteFile(ok, []byte("---\nname: ok\ndescription: fine\n---\nYou are fine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ParsePaths(context.Background(), []string{fifo, big, ok}, SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	var fifoErr, bigWarn bool
	for _, d := range res.Diagnostics {
		fifoErr = fifoErr || (d.File == fifo && d.Severity == SeverityError && strings.Contains(d.Message, "not a regular file"))
		bigWarn = bigWarn || (d.File == big && d.Severity == SeverityWarning && strings.Contains(d.Message, "over the 1 MiB limit"))
	}
	if !fifoErr || !bigWarn || len(res.Definitions) != 1 || res.Definitions[0].Name != "ok" {
		t.Fatalf("diagnostics %+v, %d definitions", res.Diagnostics, len(res.Definitions))
	}
}
