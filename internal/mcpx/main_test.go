package mcpx

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// TestMain doubles as a stdio MCP server (the go-sdk's) when the test
// binary is started with MCPX_TEST_SERVER set: tests use it where they
// need a server that crashes on cue.
func TestMain(m *testing.M) {
	if os.Getenv("MCPX_TEST_SERVER") != "" {
		serveStdio()
		return
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text"`
}

// serveStdio runs the crash server: tools echo and crash (writes to
// stderr, then exits with status 3 in the middle of the call).
func serveStdio() {
	s := mcp.NewServer(&mcp.Implementation{Name: "crashy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "crashy: about to fall over")
		os.Exit(3)
		return nil, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

// crashServer configures the test binary as a stdio server.
func crashServer(t *testing.T, name string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Transport: Stdio, Command: exe, Env: map[string]string{"MCPX_TEST_SERVER": "1"}}
}

// npmBin returns the path of an MCP server installed by .ci/run from
// .ci/mcp-servers (or $CADRE_MCP_SERVERS). A fresh clone without them
// skips in one line; .ci/run installs them, so CI always runs these tests.
func npmBin(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("CADRE_MCP_SERVERS")
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".ci", "mcp-servers")
				break
			}
			if filepath.Dir(d) == d {
				t.Fatalf("no go.mod above %s", wd)
			}
		}
	}
	p := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the MCP server %s from npm (.ci/run installs it, or `npm ci --prefix .ci/mcp-servers` from the repository root): %v", name, err)
	}
	return p
}

func everything(t testing.TB, name string) ServerConfig {
	return ServerConfig{Name: name, Transport: Stdio, Command: npmBin(t, "mcp-server-everything")}
}

// goServer starts a go-sdk MCP server over streamable HTTP or SSE and
// returns its URL. The handler checks the X-Test header when want is set.
func goServer(t *testing.T, tr Transport, s *mcp.Server, wantHeader string) string {
	t.Helper()
	var h http.Handler
	if tr == SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wantHeader != "" && r.Header.Get("X-Test") != wantHeader {
			http.Error(w, "missing X-Test header", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

func newManager(t *testing.T, servers []ServerConfig, o Options) *Manager {
	t.Helper()
	if o.LogDir == "" {
		o.LogDir = t.TempDir()
	}
	if o.ConnectTimeout == 0 {
		// Node.js servers start slowly on a loaded 2-core machine; the
		// timeout is a safety net, not what a test measures.
		o.ConnectTimeout = 2 * time.Minute
	}
	m, err := New(servers, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func waitConnected(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("servers still connecting: %v", err)
	}
	for _, st := range m.Status() {
		if st.State != StateConnected {
			t.Fatalf("server %s: %s %s", st.Name, st.State, st.Error)
		}
	}
}

// groupAlive lists the processes still in process group pgid.
func groupAlive(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}
