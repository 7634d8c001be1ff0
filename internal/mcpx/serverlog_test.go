package mcpx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real server (server-everything, an older protocol version than the
// go-sdk's) reports progress on a call that carries cadre's progress
// token; the notifications land in the server's log, and the server took
// the logging/setLevel cadre sent it.
func TestProgressGoesToTheServersLog(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	m := newManager(t, []ServerConfig{everything(t, "every")}, Options{LogDir: filepath.Join(logs, "made", "here")})
	m.Start()
	waitConnected(t, m)
	out := run(t, m.Tools(t.Context()), "mcp__every__trigger-long-running-operation", `{"duration":0,"steps":2}`)
	if out.IsError || !strings.Contains(out.Text, "Steps: 2") {
		t.Fatalf("call = %+v", out)
	}
	// Close waits until the notifications read before the answer are
	// handled.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(logs, "made", "here", "every.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{"[progress cadre-1] 1/2\n", "[progress cadre-1] 2/2\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "setLevel failed") {
		t.Errorf("logging/setLevel was refused:\n%s", log)
	}
}
