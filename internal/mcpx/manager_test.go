package mcpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cadre-dev/cadre/llm"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cadre-dev/cadre/tool"
)

func toolByName(tools []tool.Tool, name string) tool.Tool {
	for _, t := range tools {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func names(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

func run(t *testing.T, tools []tool.Tool, name, input string) tool.Output {
	t.Helper()
	tl := toolByName(tools, name)
	if tl == nil {
		t.Fatalf("no tool %s in %v", name, names(tools))
	}
	out, err := tl.Run(context.Background(), &tool.Env{}, json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func TestEverythingOverStdio(t *testing.T) {
	t.Parallel()
	m := newManager(t, []ServerConfig{everything(t, "every thing")}, Options{})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	// The server name is normalised; so are tool names (get-sum keeps its
	// dash).
	for _, want := range []string{"mcp__every_thing__echo", "mcp__every_thing__get-sum", tool.ListMcpResources, tool.ReadMcpResource} {
		if toolByName(tools, want) == nil {
			t.Fatalf("missing %s in %v", want, names(tools))
		}
	}
	echo := toolByName(tools, "mcp__every_thing__echo")
	if d := echo.Spec().Description; d != "Echoes back the input string" {
		t.Errorf("description = %q", d)
	}
	var schema map[string]any
	if err := json.Unmarshal(echo.Spec().InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema = %s (%v)", echo.Spec().InputSchema, err)
	}
	if !echo.ReadOnly() {
		t.Error("echo carries readOnlyHint; want ReadOnly")
	}
	if out := run(t, tools, "mcp__every_thing__echo", `{"message":"hi there"}`); out.IsError || !strings.Contains(out.Text, "hi there") {
		t.Errorf("echo = %+v", out)
	}
	if out := run(t, tools, "mcp__every_thing__get-sum", `{"a":2,"b":40}`); out.IsError || !strings.Contains(out.Text, "42") {
		t.Errorf("get-sum = %+v", out)
	}
	// The image itself goes to the model (llm.BlockImage), beside the text.
	if out := run(t, tools, "mcp__every_thing__get-tiny-image", `{}`); out.IsError || len(out.Blocks) != 1 || out.Blocks[0].Type != llm.BlockImage ||
		out.Blocks[0].MediaType != "image/png" || !strings.Contains(out.Text, "image") {
		t.Errorf("get-tiny-image = %+v", out)
	}
	if out := run(t, tools, "mcp__every_thing__get-structured-content", `{"location":"Chicago"}`); out.IsError || !strings.Contains(out.Text, "temperature") {
		t.Errorf("get-structured-content = %+v", out)
	}
	// A bad argument is the server's error, given back as an error result.
	if out := run(t, tools, "mcp__every_thing__get-sum", `{"a":"x"}`); !out.IsError {
		t.Errorf("get-sum with a bad argument = %+v, want an error result", out)
	}
	list := run(t, tools, tool.ListMcpResources, `{}`)
	var entries []resourceEntry
	if err := json.Unmarshal([]byte(list.Text), &entries); err != nil || len(entries) == 0 {
		t.Fatalf("ListMcpResources = %q (%v)", list.Text, err)
	}
	if entries[0].Server != "every thing" || entries[0].URI == "" {
		t.Errorf("first resource = %+v", entries[0])
	}
	in, _ := json.Marshal(readResourceIn{Server: "every thing", URI: entries[0].URI})
	if out := run(t, tools, tool.ReadMcpResource, string(in)); out.IsError || len(out.Text) < 20 {
		t.Errorf("ReadMcpResource = %+v", out)
	}
	if out := run(t, tools, tool.ReadMcpResource, `{"server":"nope","uri":"x"}`); !out.IsError || !strings.Contains(out.Text, `"every thing"`) {
		t.Errorf("ReadMcpResource of an unknown server = %+v", out)
	}
	st := m.Status()[0]
	if st.Transport != Stdio || st.State != StateConnected || !st.Resources || len(st.Tools) < 10 {
		t.Errorf("status = %+v", st)
	}
}

func TestFilesystemAndMemoryServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the test"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, []ServerConfig{
		{Name: "fs", Transport: Stdio, Command: npmBin(t, "mcp-server-filesystem"), Args: []string{dir}},
		{Name: "memory", Transport: Stdio, Command: npmBin(t, "mcp-server-memory"),
			Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}, Options{})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	in, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "hello.txt")})
	if out := run(t, tools, "mcp__fs__read_text_file", string(in)); out.IsError || !strings.Contains(out.Text, "hello from the test") {
		t.Errorf("read_text_file = %+v", out)
	}
	if out := run(t, tools, "mcp__memory__create_entities", `{"entities":[{"name":"cadre","entityType":"project","observations":["written in Go"]}]}`); out.IsError {
		t.Errorf("create_entities = %+v", out)
	}
	if out := run(t, tools, "mcp__memory__read_graph", `{}`); out.IsError || !strings.Contains(out.Text, "written in Go") {
		t.Errorf("read_graph = %+v", out)
	}
}

func TestCrashMidCallIsAnErrorResult(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	m := newManager(t, []ServerConfig{crashServer(t, "crashy")}, Options{LogDir: logs})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	out := run(t, tools, "mcp__crashy__crash", `{}`)
	if !out.IsError || !strings.Contains(out.Text, `"crashy"`) || !strings.Contains(out.Text, "crash") {
		t.Fatalf("crash = %+v, want an error result naming the server", out)
	}
	// The run goes on: the server is failed, its tools say so.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for m.Status()[0].State != StateFailed {
		select {
		case <-m.Changed():
		case <-ctx.Done():
			t.Fatalf("server still %s", m.Status()[0].State)
		}
	}
	st := m.Status()[0]
	if !strings.Contains(st.Error, "about to fall over") {
		t.Errorf("status error = %q, want the server's stderr", st.Error)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "crashy.log")); err != nil || !strings.Contains(string(b), "about to fall over") {
		t.Errorf("stderr log = %q (%v)", b, err)
	}
	if out := run(t, tools, "mcp__crashy__echo", `{"text":"x"}`); !out.IsError || !strings.Contains(out.Text, `"crashy"`) {
		t.Errorf("echo after the crash = %+v", out)
	}
	if got := m.Tools(context.Background()); len(got) != 0 {
		t.Errorf("tools of a failed server still offered: %v", names(got))
	}
}

func TestHangingCallTimesOutNamingTheServer(t *testing.T) {
	t.Parallel()
	cfg := everything(t, "slow")
	cfg.CallTimeout = time.Second
	m := newManager(t, []ServerConfig{cfg}, Options{})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	out := run(t, tools, "mcp__slow__trigger-long-running-operation", `{"duration":600,"steps":2}`)
	if !out.IsError || !strings.Contains(out.Text, `"slow"`) || !strings.Contains(out.Text, "within 1s") {
		t.Fatalf("hanging call = %+v, want a timeout naming the server", out)
	}
	// The server is still usable.
	if out := run(t, tools, "mcp__slow__echo", `{"message":"still here"}`); out.IsError || !strings.Contains(out.Text, "still here") {
		t.Errorf("echo after the timeout = %+v", out)
	}
}

func TestCallerCancellationIsAGoError(t *testing.T) {
	t.Parallel()
	m := newManager(t, []ServerConfig{everything(t, "e")}, Options{})
	m.Start()
	waitConnected(t, m)
	tl := toolByName(m.Tools(context.Background()), "mcp__e__trigger-long-running-operation")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tl.Run(ctx, &tool.Env{}, json.RawMessage(`{"duration":600,"steps":2}`))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestStartDoesNotWaitForServers(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "go")
	slow := ServerConfig{Name: "gated", Transport: Stdio, Command: "sh",
		Args: []string{"-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1"`, gate, npmBin(t, "mcp-server-memory")}}
	m := newManager(t, []ServerConfig{slow}, Options{})
	m.Start() // returns while the server cannot possibly be up
	if got := m.Tools(context.Background()); len(got) != 0 {
		t.Fatalf("tools before the server is up: %v", names(got))
	}
	if st := m.Status()[0]; st.State != StatePending {
		t.Fatalf("state = %s, want pending", st.State)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m)
	if toolByName(m.Tools(context.Background()), "mcp__gated__read_graph") == nil {
		t.Fatal("tools not offered once connected")
	}
}

func TestConnectFailureAndTimeout(t *testing.T) {
	t.Parallel()
	m := newManager(t, []ServerConfig{
		{Name: "missing", Transport: Stdio, Command: "/nonexistent/mcp-server"},
		{Name: "exits", Transport: Stdio, Command: "sh", Args: []string{"-c", "echo broken config >&2; exit 1"}},
		{Name: "silent", Transport: Stdio, Command: "sleep", Args: []string{"600"}},
	}, Options{ConnectTimeout: time.Second})
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"missing": "no such file", "exits": "broken config", "silent": "no answer within 1s"}
	for _, st := range m.Status() {
		if st.State != StateFailed || !strings.Contains(st.Error, want[st.Name]) {
			t.Errorf("%s: %s %q, want failed with %q", st.Name, st.State, st.Error, want[st.Name])
		}
	}
}

func newGoServer(tools ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "go", Version: "1"}, nil)
	for _, n := range tools {
		addEcho(s, n)
	}
	return s
}

func addEcho(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "says " + name}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + in.Text}}}, nil, nil
	})
}

func TestHTTPAndSSE(t *testing.T) {
	t.Parallel()
	for _, tr := range []Transport{HTTP, SSE} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			url := goServer(t, tr, newGoServer("hello.world"), "secret")
			m := newManager(t, []ServerConfig{{Name: "remote", Transport: tr, URL: url, Headers: map[string]string{"X-Test": "secret"}}}, Options{})
			m.Start()
			waitConnected(t, m)
			// "hello.world" becomes hello_world in the model-facing name;
			// the server still gets its own name.
			out := run(t, m.Tools(context.Background()), "mcp__remote__hello_world", `{"text":"over `+string(tr)+`"}`)
			if out.IsError || out.Text != "hello.world: over "+string(tr) {
				t.Errorf("call = %+v", out)
			}
		})
	}
	t.Run("missing header", func(t *testing.T) {
		t.Parallel()
		url := goServer(t, HTTP, newGoServer("x"), "secret")
		m := newManager(t, []ServerConfig{{Name: "remote", Transport: HTTP, URL: url}}, Options{})
		m.Start()
		_ = m.Wait(context.Background())
		if st := m.Status()[0]; st.State != StateFailed {
			t.Errorf("state = %s, want failed", st.State)
		}
	})
}

func TestToolListChangedIsSeenAtTheNextTurn(t *testing.T) {
	t.Parallel()
	s := newGoServer("first")
	url := goServer(t, HTTP, s, "")
	m := newManager(t, []ServerConfig{{Name: "dyn", Transport: HTTP, URL: url}}, Options{})
	m.Start()
	waitConnected(t, m)
	if got := names(m.Tools(context.Background())); !slices.Equal(got, []string{"mcp__dyn__first"}) {
		t.Fatalf("tools = %v", got)
	}
	changed := m.Changed()
	addEcho(s, "second") // the server sends notifications/tools/list_changed
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		// What the loop does at each turn: take the snapshot.
		if got := names(m.Tools(ctx)); slices.Contains(got, "mcp__dyn__second") {
			break
		}
		select {
		case <-changed:
			changed = m.Changed()
		case <-ctx.Done():
			t.Fatal("the new tool never appeared")
		}
	}
	if out := run(t, m.Tools(ctx), "mcp__dyn__second", `{"text":"new"}`); out.Text != "second: new" {
		t.Errorf("call = %+v", out)
	}
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	s := newGoServer()
	big := strings.Repeat("é", 1000) // 2000 bytes
	mcp.AddTool(s, &mcp.Tool{Name: "big"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil, nil
	})
	// A resource as big, and enough resources to make their list big.
	for i := range 5 {
		uri := fmt.Sprintf("file:///big/%d.txt", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("big-%d", i), MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: big}}}, nil
		})
	}
	m := newManager(t, []ServerConfig{{Name: "b", Transport: HTTP, URL: goServer(t, HTTP, s, "")}}, Options{MaxOutputChars: 101})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	for _, c := range []struct{ tool, in string }{
		{"mcp__b__big", `{}`},
		{tool.ReadMcpResource, `{"server":"b","uri":"file:///big/0.txt"}`},
	} {
		out := run(t, tools, c.tool, c.in)
		head, note, ok := strings.Cut(out.Text, "\n\n")
		if !ok || head != strings.Repeat("é", 50) || !strings.Contains(note, "first 100 of 2000 characters") {
			t.Errorf("%s truncated = %q", c.tool, out.Text)
		}
	}
	list := run(t, tools, tool.ListMcpResources, `{}`)
	if !strings.HasPrefix(list.Text, `[{"server":"b"`) || !strings.Contains(list.Text, "first 101 of") {
		t.Errorf("ListMcpResources truncated = %q", list.Text)
	}
}

// Structured results: a result with only structuredContent reaches the
// model as its JSON; one with text as well keeps the text (the server's own
// rendering of the same data); an error result stays an error.
func TestStructuredResults(t *testing.T) {
	t.Parallel()
	s := newGoServer()
	obj := map[string]any{"type": "object"}
	weather := map[string]any{"temperature": 21.5, "conditions": "sunny"}
	s.AddTool(&mcp.Tool{Name: "only-structured", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: weather}, nil
	})
	s.AddTool(&mcp.Tool{Name: "both", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "21.5 degrees and sunny"}}, StructuredContent: weather}, nil
	})
	s.AddTool(&mcp.Tool{Name: "failing", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{}, StructuredContent: map[string]any{"code": 7}}, nil
	})
	m := newManager(t, []ServerConfig{{Name: "wx", Transport: HTTP, URL: goServer(t, HTTP, s, "")}}, Options{})
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())

	out := run(t, tools, "mcp__wx__only-structured", `{}`)
	var got map[string]any
	if err := json.Unmarshal([]byte(out.Text), &got); err != nil || out.IsError || got["temperature"] != 21.5 || got["conditions"] != "sunny" {
		t.Errorf("only structured = %+v (%v)", out, err)
	}
	if out := run(t, tools, "mcp__wx__both", `{}`); out.IsError || out.Text != "21.5 degrees and sunny" {
		t.Errorf("text and structured = %+v", out)
	}
	if out := run(t, tools, "mcp__wx__failing", `{}`); !out.IsError || out.Text != `{"code":7}` {
		t.Errorf("structured error = %+v", out)
	}
}

// The session-wide call timeout (MCP_TOOL_TIMEOUT) bounds a call to a
// server that sets none; a server's own "timeout" wins over it.
func TestSessionCallTimeout(t *testing.T) {
	t.Parallel()
	s := newGoServer("echo")
	mcp.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	url := goServer(t, HTTP, s, "")
	own := ServerConfig{Name: "own", Transport: HTTP, URL: url, CallTimeout: 2 * time.Second}
	m := newManager(t, []ServerConfig{{Name: "plain", Transport: HTTP, URL: url}, own}, OptionsFromEnv(env(map[string]string{"MCP_TOOL_TIMEOUT": "1000"})))
	m.Start()
	waitConnected(t, m)
	tools := m.Tools(context.Background())
	if out := run(t, tools, "mcp__plain__block", `{}`); !out.IsError || !strings.Contains(out.Text, `"plain"`) || !strings.Contains(out.Text, "within 1s") {
		t.Errorf("plain = %+v", out)
	}
	if out := run(t, tools, "mcp__own__block", `{}`); !out.IsError || !strings.Contains(out.Text, "within 2s") {
		t.Errorf("own = %+v", out)
	}
	if out := run(t, tools, "mcp__plain__echo", `{"text":"still here"}`); out.IsError || out.Text != "echo: still here" {
		t.Errorf("echo after the timeout = %+v", out)
	}
}
