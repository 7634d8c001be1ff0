package engine

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

func TestMain(m *testing.M) {
	if os.Getenv(testMCPServerEnv) != "" {
		serveTestMCP() // mcp_test.go: the binary doubles as an MCP server
		return
	}
	goleak.VerifyTestMain(m)
}

// harness is a scripted server and a runtime pointed at it.
type harness struct {
	t   *testing.T
	srv *llmtest.Server
	dir string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	return &harness{t: t, srv: srv, dir: t.TempDir()}
}

// config returns a runtime config against the scripted server, with
// transcripts in a temp state dir.
func (h *harness) config() Config {
	h.t.Helper()
	tr := &http.Transport{}
	h.t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: h.srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		h.t.Fatal(err)
	}
	return Config{
		Model: m, ModelID: "claude-sonnet-4-5", Cwd: h.dir, StateDir: h.t.TempDir(),
		Permissions: AllowAll(), // the runtime's mechanics, not its permissions, are under test
	}
}

// runAll runs prompt and returns every event, the result and the error
// that follows the result of a failed run.
func runAll(t *testing.T, ctx context.Context, rt *Runtime, prompt string) ([]run.Event, *run.Result, error) {
	t.Helper()
	var evs []run.Event
	var res *run.Result
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			return evs, res, err
		}
		evs = append(evs, ev)
		if ev.Type == run.EventResult {
			res = ev.Result
		}
	}
	return evs, res, nil
}

func mustRun(t *testing.T, cfg Config, prompt string) ([]run.Event, *run.Result, *Runtime) {
	t.Helper()
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs, res, err := runAll(t, context.Background(), rt, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	return evs, res, rt
}

// toolResults returns the tool_result texts of the last request of key.
func (h *harness) toolResults(key string) []string {
	h.t.Helper()
	reqs := h.srv.RequestsFor(key)
	if len(reqs) == 0 {
		h.t.Fatalf("no request for key %q", key)
	}
	var out []string
	for _, b := range reqs[len(reqs)-1].LastToolResults() {
		out = append(out, b.ResultText())
	}
	return out
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q\ndoes not contain %q", s, sub)
	}
}
