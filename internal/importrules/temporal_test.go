package importrules

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The cadre binary links no Temporal package: importing the SDK costs
// thousands of allocations and milliseconds at every start (issue 24), so
// everything of Temporal lives in the companion binary cadre-remote,
// which `cadre worker` and the remote executor's bridge start.
func TestCadreBinaryLinksNoTemporal(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", module+"/cmd/cadre")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps found only %d packages", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "go.temporal.io/") || strings.HasPrefix(d, module+"/internal/remote/agentwf") || strings.HasPrefix(d, module+"/internal/remote/temporalexec") {
			t.Errorf("cmd/cadre depends on %s: Temporal code belongs to cmd/cadre-remote alone", d)
		}
	}
	found := false
	for _, d := range deps {
		found = found || d == "github.com/spf13/cobra"
	}
	if !found {
		t.Fatal("the dependency list lacks cobra: the check would pass on any list")
	}
}
