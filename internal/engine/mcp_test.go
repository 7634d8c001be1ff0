package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/openai"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// The test binary doubles as a stdio MCP server (the go-sdk's) when
// testMCPServerEnv is set: tools named by CADRE_TEST_MCP_TOOLS (default
// echo) echo their text; crash exits mid-call; block waits until the
// process is killed; image returns a PNG. CADRE_TEST_MCP_PIDFILE receives
// its pid, CADRE_TEST_MCP_DELAY delays the start, CADRE_TEST_MCP_HANG
// never answers.
const testMCPServerEnv = "CADRE_TEST_MCP_SERVER"

// onePixelPNG is a 1×1 PNG.
var onePixelPNG = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0, 0x05, 0, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82}

type testEchoIn struct {
	Text string `json:"text"`
}

func serveTestMCP() {
	if f := os.Getenv("CADRE_TEST_MCP_PIDFILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if d, err := time.ParseDuration(os.Getenv("CADRE_TEST_MCP_DELAY")); err == nil {
		time.Sleep(d)
	}
	if os.Getenv("CADRE_TEST_MCP_HANG") != "" {
		select {} // never answers initialize; killed by its client
	}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "cadre-test", Version: "1"}, nil)
	names := strings.Split(cmpOr(os.Getenv("CADRE_TEST_MCP_TOOLS"), "echo"), ",")
	for _, n := range names {
		sdkmcp.AddTool(s, &sdkmcp.Tool{Name: n, Description: "echoes its text"}, func(_ context.Context, _ *sdkmcp.CallToolRequest, in testEchoIn) (*sdkmcp.CallToolResult, any, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: n + ": " + in.Text}}}, nil, nil
		})
	}
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "crash", Description: "crashes"}, func(context.Context, *sdkmcp.CallToolRequest, struct{}) (*sdkmcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "cadre-test: falling over")
		os.Exit(3)
		return nil, nil, nil
	})
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "block", Description: "blocks"}, func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "image", Description: "an image"}, func(context.Context, *sdkmcp.CallToolRequest, struct{}) (*sdkmcp.CallToolResult, any, error) {
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "a red dot"}, &sdkmcp.ImageContent{MIMEType: "image/png", Data: onePixelPNG}}}, nil, nil
	})
	if os.Getenv("CADRE_TEST_MCP_DYNAMIC") != "" {
		addDynamicTools(s)
	}
	_ = s.Run(context.Background(), &sdkmcp.StdioTransport{})
	os.Exit(0)
}

// addDynamicTools gives the test server (with CADRE_TEST_MCP_DYNAMIC set)
// two more tools. grow adds a tool "grown", which sends
// notifications/tools/list_changed, and answers only once the client has
// asked for the tool list again, so the answer proves the client acted on
// the notification before its next turn. chatty sends a log message and a
// progress notification before it answers.
func addDynamicTools(s *sdkmcp.Server) {
	relisted := make(chan struct{})
	var armed atomic.Bool
	var once sync.Once
	s.AddReceivingMiddleware(func(next sdkmcp.MethodHandler) sdkmcp.MethodHandler {
		return func(ctx context.Context, method string, req sdkmcp.Request) (sdkmcp.Result, error) {
			if method == "tools/list" && armed.Load() {
				once.Do(func() { close(relisted) })
			}
			return next(ctx, method, req)
		}
	})
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "grow", Description: "adds a tool"}, func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
		armed.Store(true)
		sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "grown", Description: "a tool added mid-run"}, func(_ context.Context, _ *sdkmcp.CallToolRequest, in testEchoIn) (*sdkmcp.CallToolResult, any, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "grown: " + in.Text}}}, nil, nil
		})
		guard := time.NewTimer(2 * time.Minute) // a safety net: the client never asked
		defer guard.Stop()
		select {
		case <-relisted:
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "grew"}}}, nil, nil
		case <-guard.C:
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "the client never listed the tools again"}}}, nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "chatty", Description: "logs and reports progress"}, func(ctx context.Context, req *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
		//lint:ignore SA1019 the test server logs as MCP servers still do during the deprecation window (SEP-2577)
		_ = req.Session.Log(ctx, &sdkmcp.LoggingMessageParams{Level: "info", Logger: "cadre-test", Data: "warming up the flux"})
		//lint:ignore SA1019 the test server logs as MCP servers still do during the deprecation window (SEP-2577)
		_ = req.Session.Log(ctx, &sdkmcp.LoggingMessageParams{Level: "debug", Data: "below the level asked for"})
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &sdkmcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
		}
		return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "chatted"}}}, nil, nil
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// testServer configures the test binary as a stdio MCP server; env adds
// to the server's settings (see serveTestMCP).
func testServer(t *testing.T, name string, env map[string]string) mcp.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{testMCPServerEnv: "1"}
	for k, v := range env {
		e[k] = v
	}
	return mcp.Server{Name: name, Transport: mcp.Stdio, Command: exe, Env: e}
}

// inlineServer is an agent definition's inline mcpServers entry for the
// test binary.
func inlineServer(t *testing.T, name string, env map[string]string) json.RawMessage {
	t.Helper()
	s := testServer(t, name, env)
	b, err := json.Marshal(map[string]any{name: map[string]any{"command": s.Command, "env": s.Env}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// npmServer returns the bin of a real MCP server from .ci/mcp-servers
// (installed by .ci/run, which always runs these tests; a fresh clone
// without them skips in one line).
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	p := filepath.Join("..", "..", ".ci", "mcp-servers", "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the MCP server %s from npm (.ci/run installs it, or `npm ci --prefix .ci/mcp-servers`): %v", bin, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// mcpConfig is a harness config whose MCP connections wait as long as a
// loaded machine needs (the timeout is a safety net, not what is tested).
func (h *harness) mcpConfig(servers ...mcp.Server) Config {
	cfg := h.config()
	cfg.MCPServers = servers
	cfg.MCPOptions = mcp.Options{ConnectTimeout: 2 * time.Minute, RefreshWait: 2 * time.Minute, LogDir: h.t.TempDir()}
	return cfg
}

func newRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func waitMCP(t *testing.T, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := rt.WaitMCP(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range rt.MCPStatus() {
		if st.State != mcp.StateConnected {
			t.Fatalf("server %s: %s %s", st.Name, st.State, st.Error)
		}
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the server wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func runMCP(t *testing.T, rt *Runtime, prompt string) ([]run.Event, *run.Result) {
	t.Helper()
	evs, res, err := runAll(t, context.Background(), rt, prompt)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	return evs, res
}

// The model calls a tool of a real shared server (server-everything from
// npm, over stdio); the init event lists the server; the tool's name,
// description and schema reach the model.
func TestMCPSharedServerTool(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "hi there"}), llmtest.Text("done"))
	rt := newRuntime(t, h.mcpConfig(mcp.Server{Name: "everything", Transport: mcp.Stdio, Command: npmServer(t, "mcp-server-everything")}))
	waitMCP(t, rt)
	evs, res := runMCP(t, rt, "MAIN: echo")
	if res.Text != "done" {
		t.Fatalf("result %q", res.Text)
	}
	contains(t, h.toolResults("MAIN")[0], "hi there")
	init := evs[0].Init
	if len(init.MCPServers) != 1 || init.MCPServers[0] != (mcp.InitServer{Name: "everything", Status: "connected", Source: ""}) {
		t.Fatalf("init mcp_servers %+v", init.MCPServers)
	}
	req := h.srv.RequestsFor("MAIN")[0]
	i := slices.Index(req.ToolNames(), "mcp__everything__echo")
	if i < 0 {
		t.Fatalf("tools %v", req.ToolNames())
	}
	if !strings.Contains(req.Tools[i].Description, "cho") || !strings.Contains(string(req.Tools[i].InputSchema), "message") {
		t.Fatalf("spec %+v", req.Tools[i])
	}
	// Both requests offer the same tools in the same order: the prefix
	// holds.
	reqs := h.srv.RequestsFor("MAIN")
	if !slices.Equal(reqs[0].ToolNames(), reqs[1].ToolNames()) {
		t.Fatal("tool list changed between turns")
	}
}

// A server that never answers does not delay the run: the first request
// goes out, the init event says pending, and Close kills the server.
func TestMCPServerConnectsInTheBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.Text("answered"))
	// A FIFO: reading it waits for the server to have started.
	pidfile := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(pidfile, 0o600); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, h.mcpConfig(testServer(t, "slow", map[string]string{"CADRE_TEST_MCP_HANG": "1", "CADRE_TEST_MCP_PIDFILE": pidfile})))
	evs, res := runMCP(t, rt, "MAIN")
	if res.Text != "answered" {
		t.Fatal(res.Text)
	}
	if st := evs[0].Init.MCPServers; len(st) != 1 || st[0].Status != "pending" {
		t.Fatalf("init %+v", st)
	}
	if slices.ContainsFunc(h.srv.RequestsFor("MAIN")[0].ToolNames(), func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Fatal("a pending server's tools were offered")
	}
	if st := rt.MCPStatus(); st[0].State != mcp.StatePending {
		t.Fatalf("status %+v", st)
	}
	pid := readPid(t, pidfile)
	if !alive(pid) {
		t.Fatal("the server is not running")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("server %d still running after Close", pid)
	}
}

// defineAgent parses an agent file's text (frontmatter and body).
func defineAgent(t *testing.T, name, frontmatter string) *agentdef.Definition {
	t.Helper()
	src := "---\nname: " + name + "\ndescription: test agent " + name + "\n" + frontmatter + "\n---\nYou are " + name + ".\n"
	def, diags := agentdef.ParseFile(filepath.Join(t.TempDir(), name+".md"), []byte(src), agentdef.SourceProject)
	if def == nil {
		t.Fatalf("agent %s: %v", name, diags)
	}
	for _, d := range diags {
		if d.Severity == agentdef.SeverityError {
			t.Fatalf("agent %s: %v", name, d)
		}
	}
	return def
}

// panicModel panics on any request whose system prompt holds marker, the
// way a broken adapter would.
type panicModel struct {
	llm.Model
	marker string
}

func (m panicModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if strings.Contains(req.System, m.marker) {
		panic("adapter fell over")
	}
	return m.Model.Stream(ctx, req)
}

// An agent's inline server starts with the agent, serves its calls, and
// its process is gone once the agent has ended, however it ended.
func TestMCPInlineServerEndsWithTheAgent(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"success", "error", "cancel", "panic"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			pidfile := filepath.Join(t.TempDir(), "pid")
			raw, err := json.Marshal([]json.RawMessage{inlineServer(t, "own", map[string]string{"CADRE_TEST_MCP_PIDFILE": pidfile})})
			if err != nil {
				t.Fatal(err)
			}
			def := defineAgent(t, "helper", "mcpServers: "+string(raw))
			if how == "panic" {
				def.Body += "\nPANICKY"
			}
			cfg := h.mcpConfig()
			cfg.Agents = []*agentdef.Definition{def}
			if how == "panic" {
				cfg.Model = panicModel{Model: cfg.Model, marker: "PANICKY"}
			}
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("helper", "CHILD: use your server")), llmtest.Text("main done"))
			switch how {
			case "success":
				h.srv.Script("CHILD", llmtest.ToolUse("mcp__own__echo", map[string]any{"text": "ping"}), llmtest.Text("child done"))
			case "error":
				h.srv.Script("CHILD", llmtest.ToolUse("mcp__own__echo", map[string]any{"text": "ping"}), llmtest.HTTPError(400, "bad request"))
			case "cancel":
				h.srv.Script("CHILD", llmtest.ToolUse("mcp__own__block", map[string]any{}))
				h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("helper", "CHILD: use your server")))
			}
			rt := newRuntime(t, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var res *run.Result
			var runErr error
			var receipt *run.Receipt
			for ev, err := range rt.Run(ctx, "MAIN: delegate") {
				if err != nil {
					runErr = err
					break
				}
				if ev.Type == run.EventTaskStarted {
					receipt = &ev.Task.Receipt
				}
				if ev.Type == run.EventToolStart && ev.Call.Name == "mcp__own__block" {
					cancel()
				}
				if ev.Type == run.EventResult {
					res = ev.Result
				}
			}
			pid := readPid(t, pidfile)
			if alive(pid) {
				t.Fatalf("the inline server %d outlived the agent (%s)", pid, how)
			}
			switch how {
			case "cancel":
				if !errors.Is(runErr, context.Canceled) {
					t.Fatalf("run error %v", runErr)
				}
			default:
				if runErr != nil || res == nil || res.Text != "main done" {
					t.Fatalf("run %v %+v", runErr, res)
				}
			}
			if how == "success" {
				contains(t, h.toolResults("CHILD")[0], "echo: ping")
				contains(t, h.toolResults("MAIN")[0], "child done")
				if receipt == nil || !slices.Equal(receipt.MCPServers, []string{"own"}) || !slices.Contains(receipt.Tools, "mcp__own__echo") || receipt.MCPStart <= 0 {
					t.Fatalf("receipt %+v", receipt)
				}
			}
			if how != "cancel" && len(h.srv.RequestsFor("MAIN")) != 2 {
				t.Fatal("the main agent did not go on")
			}
		})
	}
}

// requiredMcpServers: a shared server that connects after 2 s is awaited
// and the child gets its tools; one that cannot start refuses the spawn,
// naming it.
func TestMCPRequiredServers(t *testing.T) {
	t.Parallel()
	t.Run("slow server is awaited", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		cfg := h.mcpConfig(testServer(t, "slow", map[string]string{"CADRE_TEST_MCP_DELAY": "2s"}))
		cfg.Agents = []*agentdef.Definition{defineAgent(t, "needy", "requiredMcpServers: [slow]")}
		h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("needy", "CHILD: go")), llmtest.Text("main done"))
		h.srv.Script("CHILD", llmtest.ToolUse("mcp__slow__echo", map[string]any{"text": "x"}), llmtest.Text("child done"))
		rt := newRuntime(t, cfg)
		_, res := runMCP(t, rt, "MAIN")
		if res.Subagents.Completed != 1 {
			t.Fatalf("stats %+v", res.Subagents)
		}
		if !slices.Contains(h.srv.RequestsFor("CHILD")[0].ToolNames(), "mcp__slow__echo") {
			t.Fatalf("child tools %v", h.srv.RequestsFor("CHILD")[0].ToolNames())
		}
		contains(t, h.toolResults("CHILD")[0], "echo: x")
	})
	t.Run("failed server refuses the spawn", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		broken := mcp.Server{Name: "broken", Transport: mcp.Stdio, Command: filepath.Join(t.TempDir(), "no-such-server")}
		cfg := h.mcpConfig(broken)
		cfg.Agents = []*agentdef.Definition{defineAgent(t, "needy", "requiredMcpServers: [broken]")}
		h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("needy", "CHILD: go")), llmtest.Text("main done"))
		rt := newRuntime(t, cfg)
		_, res := runMCP(t, rt, "MAIN")
		if res.Subagents.Refused[run.RefusedMCP] != 1 || res.Subagents.Spawned != 0 {
			t.Fatalf("stats %+v", res.Subagents)
		}
		contains(t, h.toolResults("MAIN")[0], `required MCP server "broken"`)
	})
}

// disallowedTools: mcp__a removes exactly server a's tools; the receipt
// says why each was dropped.
func TestMCPDisallowedServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.mcpConfig(testServer(t, "a", nil), testServer(t, "b", nil))
	cfg.Agents = []*agentdef.Definition{defineAgent(t, "picky", "disallowedTools: mcp__a")}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("picky", "CHILD: go")), llmtest.Text("main done"))
	h.srv.Script("CHILD", llmtest.ToolUse("mcp__a__echo", map[string]any{"text": "x"}), llmtest.Text("child done"))
	rt := newRuntime(t, cfg)
	waitMCP(t, rt)
	evs, _ := runMCP(t, rt, "MAIN")
	main := h.srv.RequestsFor("MAIN")[0].ToolNames()
	child := h.srv.RequestsFor("CHILD")[0].ToolNames()
	var mainA, childMCP []string
	for _, n := range main {
		if strings.HasPrefix(n, "mcp__a__") {
			mainA = append(mainA, n)
		}
	}
	for _, n := range child {
		if strings.HasPrefix(n, "mcp__") {
			childMCP = append(childMCP, n)
		}
	}
	want := []string{"mcp__b__block", "mcp__b__crash", "mcp__b__echo", "mcp__b__image"}
	slices.Sort(childMCP)
	if len(mainA) != 4 || !slices.Equal(childMCP, want) {
		t.Fatalf("main a tools %v; child MCP tools %v", mainA, childMCP)
	}
	contains(t, h.toolResults("CHILD")[0], "disallowedTools (mcp__a)")
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			r := ev.Task.Receipt
			var dropped []string
			for _, d := range r.Dropped {
				if strings.HasPrefix(d.Name, "mcp__") {
					dropped = append(dropped, d.Name)
					contains(t, d.Reason, "disallowedTools")
				}
			}
			slices.Sort(dropped)
			if !slices.Equal(dropped, mainA) {
				t.Fatalf("dropped %v", dropped)
			}
			// The receipt's servers: b, whose tools the child got; not a.
			if !slices.Equal(r.MCPServers, []string{"b"}) {
				t.Fatalf("receipt servers %v", r.MCPServers)
			}
		}
	}
}

// Permission rules on MCP names go through the permission path: a deny
// rule on mcp__a__echo blocks exactly that tool, a server-level allow rule
// mcp__a allows its other tools, and a tool no rule allows is asked for
// (denied headless).
func TestMCPPermissionRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.mcpConfig(testServer(t, "a", map[string]string{"CADRE_TEST_MCP_TOOLS": "echo,ping"}), testServer(t, "b", nil))
	var rules []permission.Rule
	for _, r := range []struct {
		b    permission.Behavior
		rule string
	}{{permission.Allow, "mcp__a"}, {permission.Deny, "mcp__a__echo"}} {
		pr, err := permission.ParseRule(r.rule)
		if err != nil {
			t.Fatal(err)
		}
		pr.Behavior, pr.Source = r.b, "test"
		rules = append(rules, pr)
	}
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Rules: rules}
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "mcp__a__echo", Input: map[string]any{"text": "1"}},
		llmtest.Call{Name: "mcp__a__ping", Input: map[string]any{"text": "2"}},
		llmtest.Call{Name: "mcp__b__echo", Input: map[string]any{"text": "3"}},
	), llmtest.Text("done"))
	rt := newRuntime(t, cfg)
	waitMCP(t, rt)
	_, res := runMCP(t, rt, "MAIN")
	names := h.srv.RequestsFor("MAIN")[0].ToolNames()
	if slices.Contains(names, "mcp__a__echo") || !slices.Contains(names, "mcp__a__ping") {
		t.Fatalf("offered %v", names)
	}
	out := h.toolResults("MAIN")
	contains(t, out[0], "denied by rule")
	contains(t, out[1], "ping: 2")
	if strings.Contains(out[2], "echo: 3") {
		t.Fatalf("a tool no rule allows ran headless: %s", out[2])
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "mcp__b__echo" {
		t.Fatalf("denials %+v", res.PermissionDenials)
	}
}

// A server that crashes in the middle of a call gives the model an error
// naming the server; its tools say so afterwards; the run goes on.
func TestMCPServerCrashMidCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	rt := newRuntime(t, h.mcpConfig(testServer(t, "fragile", map[string]string{"CADRE_TEST_MCP_PIDFILE": pidfile})))
	waitMCP(t, rt)
	h.srv.Script("MAIN",
		llmtest.ToolUse("mcp__fragile__crash", map[string]any{}),
		llmtest.ToolUse("mcp__fragile__echo", map[string]any{"text": "again"}),
		llmtest.Text("carried on"))
	_, res := runMCP(t, rt, "MAIN")
	if res.Text != "carried on" {
		t.Fatal(res.Text)
	}
	reqs := h.srv.RequestsFor("MAIN")
	first := reqs[1].LastToolResults()[0]
	if !first.IsError || !strings.Contains(first.ResultText(), `MCP server "fragile"`) || !strings.Contains(first.ResultText(), "falling over") {
		t.Fatalf("crash result %+v", first)
	}
	// The next turn no longer offers the dead server's tools; a call
	// anyway is an error naming it.
	if slices.Contains(reqs[2].ToolNames(), "mcp__fragile__echo") {
		t.Fatal("a dead server's tools are still offered")
	}
	second := reqs[2].LastToolResults()[0]
	if !second.IsError {
		t.Fatalf("second %+v", second)
	}
	if alive(readPid(t, pidfile)) {
		t.Fatal("the crashed server is still running")
	}
	if st := rt.MCPStatus(); st[0].State != mcp.StateFailed || !strings.Contains(st[0].Error, "falling over") {
		t.Fatalf("status %+v", st)
	}
}

// A real agent from the shared corpus lists mcp__context7__ tools: with a
// server of that name it gets exactly those; without, a warning names the
// server.
func TestMCPCorpusAgent(t *testing.T) {
	t.Parallel()
	path := "../../../shared/corpus/claude-agents/vanzan01__claude-code-sub-agent-collective/templates__agents__research-agent.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("needs the agent corpus (../shared/corpus beside the repository, which .ci/run requires): %v", err)
	}
	for _, configured := range []bool{true, false} {
		t.Run(fmt.Sprint("configured=", configured), func(t *testing.T) {
			t.Parallel()
			def, _ := agentdef.ParseFile(path, data, agentdef.SourceProject)
			h := newHarness(t)
			var servers []mcp.Server
			if configured {
				servers = append(servers, testServer(t, "context7", map[string]string{"CADRE_TEST_MCP_TOOLS": "resolve-library-id,get-library-docs,other"}))
			}
			cfg := h.mcpConfig(servers...)
			cfg.Agents = []*agentdef.Definition{def}
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("research-agent", "CHILD: research")), llmtest.Text("main done"))
			h.srv.Script("CHILD", llmtest.Text("child done"))
			rt := newRuntime(t, cfg)
			waitMCP(t, rt)
			evs, _ := runMCP(t, rt, "MAIN")
			var got []string
			for _, n := range h.srv.RequestsFor("CHILD")[0].ToolNames() {
				if strings.HasPrefix(n, "mcp__") {
					got = append(got, n)
				}
			}
			var warnings, gotServers []string
			for _, ev := range evs {
				if ev.Type == run.EventTaskStarted {
					warnings, gotServers = ev.Task.Receipt.Warnings, ev.Task.Receipt.MCPServers
				}
			}
			if configured {
				slices.Sort(got)
				if !slices.Equal(got, []string{"mcp__context7__get-library-docs", "mcp__context7__resolve-library-id"}) {
					t.Fatalf("child MCP tools %v", got)
				}
				if !slices.Equal(gotServers, []string{"context7"}) {
					t.Fatalf("receipt servers %v", gotServers)
				}
				return
			}
			if len(got) != 0 || len(gotServers) != 0 || !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, `"context7"`) }) {
				t.Fatalf("tools %v servers %v warnings %q", got, gotServers, warnings)
			}
		})
	}
}

// An MCP tool's image reaches the model as an image through both
// providers' official SDK clients: in the tool_result (Anthropic), or in a
// user message after the tool message (Chat Completions).
func TestMCPImageResult(t *testing.T) {
	t.Parallel()
	want := base64.StdEncoding.EncodeToString(onePixelPNG)
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			cfg := h.mcpConfig(testServer(t, "pics", nil))
			if provider == "openai" {
				tr := &http.Transport{}
				t.Cleanup(tr.CloseIdleConnections)
				m, err := openai.New(openai.Config{APIKey: "test", BaseURL: h.srv.URL() + "/v1", HTTPClient: &http.Client{Transport: tr}, RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Model, cfg.ModelID = m, "gpt-5"
			}
			h.srv.Script("MAIN", llmtest.ToolUse("mcp__pics__image", map[string]any{}), llmtest.Text("a red dot"))
			rt := newRuntime(t, cfg)
			waitMCP(t, rt)
			runMCP(t, rt, "MAIN: look")
			req := h.srv.RequestsFor("MAIN")[1]
			var images []llm.Block
			var resultText string
			for _, m := range req.Messages {
				for _, b := range m.Content {
					if b.Type == llm.BlockImage {
						images = append(images, b)
					}
					if b.Type == llm.BlockToolResult {
						resultText = b.ResultText()
						for _, c := range b.Content {
							if c.Type == llm.BlockImage {
								images = append(images, c)
							}
						}
					}
				}
			}
			if len(images) != 1 || images[0].MediaType != "image/png" || images[0].Data != want {
				t.Fatalf("images %+v", images)
			}
			contains(t, resultText, "a red dot")
		})
	}
}
