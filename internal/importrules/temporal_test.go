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

// The cadre binary links neither grpc-go nor grpc-gateway, nor the
// generated OTLP packages: their init costs about 1,800 allocations at
// every start (issue 24), and the OTLP exporters (package otlpexport)
// speak OTLP over HTTP and gRPC without them, nor any of the protobuf
// module (its internal/detrand reads the executable at init; otlpexport
// writes the wire format itself). Tests may use them (the
// OTLP receiver of otlptest is a grpc-go server): `go list -deps` without
// -test is what the binary links.
func TestCadreBinaryLinksNoGRPC(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", module+"/cmd/cadre")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	found := false
	for _, d := range deps {
		found = found || d == module+"/internal/telemetry/otlpexport"
		for _, banned := range []string{"google.golang.org/grpc", "github.com/grpc-ecosystem/", "go.opentelemetry.io/proto/", "go.opentelemetry.io/otel/exporters/", "google.golang.org/protobuf/"} {
			if d == banned || strings.HasPrefix(d, strings.TrimSuffix(banned, "/")+"/") {
				t.Errorf("cmd/cadre depends on %s: its init runs in every process; OTLP goes through internal/telemetry/otlpexport", d)
			}
		}
	}
	if !found {
		t.Fatal("the dependency list lacks internal/telemetry/otlpexport: the check would pass on any list")
	}
}
