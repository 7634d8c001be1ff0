package mcpx

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// withDefaults fills in the defaults of o's zero fields.
func withDefaults(o Options) Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Minute
	}
	if o.MaxOutputChars <= 0 {
		o.MaxOutputChars = 100_000
	}
	if o.RequiredWait <= 0 {
		o.RequiredWait = 30 * time.Second
	}
	if o.RequiredPoll <= 0 {
		o.RequiredPoll = 500 * time.Millisecond
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 500 * time.Millisecond
	}
	if o.RefreshWait <= 0 {
		o.RefreshWait = 5 * time.Second
	}
	if o.ClientName == "" {
		o.ClientName = "cadre"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "0"
	}
	return o
}

// logPath is the log file of server under o.LogDir ("" when none).
func logPath(o *Options, server string) string {
	if o.LogDir == "" {
		return ""
	}
	return filepath.Join(o.LogDir, Normalize(server)+".log")
}

var (
	errConnectTimeout = errors.New("connect timed out")
	errCallTimeout    = errors.New("call timed out")
	errClosed         = errors.New("closed")
)

// conn is one server's connection: its state, session, process and the
// current snapshot of its tools. Its goroutines (connect, watch, refresh)
// end when close returns.
type conn struct {
	cfg      ServerConfig
	opts     *Options
	onChange func() // tells the manager a state or tool list changed

	mu        sync.Mutex
	state     State
	err       error
	session   *mcp.ClientSession
	proc      *process
	tools     []tool.Tool
	resources bool          // the server offers resources
	ready     chan struct{} // closed when the current connect attempt ends
	cancel    context.CancelCauseFunc
	dirty     bool // a tools/list_changed arrived and is not listed yet
	listing   bool
	listed    chan struct{} // closed and replaced after every refresh
	refresh   chan struct{}
	wg        sync.WaitGroup
	calls     atomic.Int64 // numbers the progress tokens of calls
}

func newConn(cfg ServerConfig, opts *Options, onChange func()) *conn {
	c := &conn{cfg: cfg, opts: opts, onChange: onChange, state: StateIdle, listed: make(chan struct{})}
	c.ready = make(chan struct{})
	return c
}

// start begins connecting in the background; it returns at once. A
// connection that is pending or connected is left alone.
func (c *conn) start(parent context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StatePending || c.state == StateConnected {
		return
	}
	life, cancel := context.WithCancelCause(parent)
	c.state, c.err, c.cancel = StatePending, nil, cancel
	c.ready = make(chan struct{})
	c.refresh = make(chan struct{}, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// Whatever ends this attempt ends its life too, so the refresher
		// of a lost session does not outlive it.
		defer cancel(errClosed)
		c.connect(life)
	}()
}

// connect runs one connection attempt and, once connected, watches the
// session until it ends.
func (c *conn) connect(life context.Context) {
	tr, proc := transportFor(c.cfg, c.opts)
	c.mu.Lock()
	c.proc = proc
	ready := c.ready
	c.mu.Unlock()
	client := mcp.NewClient(&mcp.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.markDirty() },
		// Log and progress notifications go to the server's log
		// (serverlog.go) rather than nowhere.
		//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
		LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { c.noteLog(r.Params) },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { c.noteProgress(r.Params) },
	})
	// The connect context lives as long as the session (the SSE stream is
	// read under it); the timeout cancels it only while connecting.
	cctx, ccancel := context.WithCancelCause(life)
	timer := time.AfterFunc(c.opts.ConnectTimeout, func() { ccancel(errConnectTimeout) })
	var sopts *mcp.ClientSessionOptions
	if c.cfg.Transport == InProcess {
		// An in-process server answers one message at a time and cannot
		// hold the long-lived subscriptions/listen request of newer
		// protocol versions: speak the last version without it.
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: inProcessProtocol}
	}
	session, err := client.Connect(cctx, tr, sopts)
	var tools []tool.Tool
	var resources bool
	if err == nil {
		tools, resources, err = c.list(cctx, session)
	}
	timedOut := !timer.Stop()
	if err == nil && timedOut {
		// The timeout cancelled cctx, which the session's stream may read
		// under: this connection cannot be trusted.
		err = errConnectTimeout
		_ = session.Close()
		session = nil
	}
	if err != nil {
		if timedOut || errors.Is(context.Cause(cctx), errConnectTimeout) {
			err = fmt.Errorf("no answer within %s", c.opts.ConnectTimeout)
		} else if life.Err() != nil {
			err = errClosed
		}
		if session != nil {
			_ = session.Close()
		}
		if proc != nil {
			proc.stop()
			err = withStderr(err, proc)
		}
		ccancel(nil)
		c.finish(StateFailed, err, nil, false, nil, ready)
		return
	}
	c.finish(StateConnected, nil, session, resources, tools, ready)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.refresher(life, session)
	}()
	// Watch: the session ends when the server goes away or its life ends
	// (close, or the runtime's session context).
	stop := context.AfterFunc(life, func() { _ = session.Close() })
	defer stop()
	if proc != nil {
		watched := make(chan struct{})
		defer close(watched)
		c.wg.Add(1)
		go func() { // owned by the connection: ends with this watch
			defer c.wg.Done()
			c.watchExit(proc, watched)
		}()
	}
	waitErr := session.Wait()
	ccancel(nil)
	if life.Err() != nil {
		if proc != nil {
			proc.stop()
		}
		return
	}
	err = errors.New("connection lost")
	if waitErr != nil && !errors.Is(waitErr, io.EOF) {
		err = fmt.Errorf("connection lost: %w", waitErr)
	}
	if proc != nil {
		if exited, perr := proc.exitState(); exited {
			err = fmt.Errorf("server process exited (%v)", exitText(perr))
		}
		proc.stop()
		err = withStderr(err, proc)
	}
	c.fail(err)
}

// watchExit ends the session of a stdio server whose process has exited
// (crashed, or quit on its own): the rest of its process group is killed,
// since a helper it left behind may hold its stdout open and the session
// would wait for an end of file that never comes; if a descendant that
// left the group still holds it after the grace period, cadre's end of
// the pipe is closed, which fails the calls in flight as a lost server.
// done closes when the session has ended anyway.
func (c *conn) watchExit(proc *process, done <-chan struct{}) {
	select {
	case <-proc.exitedChan():
	case <-done:
		return
	}
	proc.killGroup()
	t := time.NewTimer(c.opts.StopGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		proc.closeStdout()
	}
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func withStderr(err error, p *process) error {
	if s := strings.TrimSpace(p.stderrTail()); s != "" {
		if len(s) > 500 {
			s = "…" + s[len(s)-500:]
		}
		return fmt.Errorf("%w; stderr: %s", err, s)
	}
	return err
}

func (c *conn) finish(st State, err error, s *mcp.ClientSession, resources bool, tools []tool.Tool, ready chan struct{}) {
	c.mu.Lock()
	c.state, c.err, c.session, c.resources, c.tools = st, err, s, resources, tools
	close(ready)
	c.mu.Unlock()
	c.onChange()
}

// fail marks a connected server failed (its process died or its
// connection dropped): its tools leave the next snapshot.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.state != StateConnected {
		c.mu.Unlock()
		return
	}
	c.state, c.err, c.tools = StateFailed, err, nil
	c.mu.Unlock()
	c.onChange()
}

// list fetches the server's tools and whether it has resources.
func (c *conn) list(ctx context.Context, s *mcp.ClientSession) ([]tool.Tool, bool, error) {
	init := s.InitializeResult()
	resources := init != nil && init.Capabilities != nil && init.Capabilities.Resources != nil
	if init != nil && init.Capabilities != nil && init.Capabilities.Tools == nil {
		return nil, resources, nil
	}
	var out []tool.Tool
	seen := map[string]bool{}
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, false, fmt.Errorf("list tools: %w", err)
		}
		st, err := newServerTool(c, t)
		if err != nil || seen[st.spec.Name] {
			continue // a tool without a usable schema or a duplicate name is left out
		}
		seen[st.spec.Name] = true
		out = append(out, st)
	}
	return out, resources, nil
}

func (c *conn) markDirty() {
	c.mu.Lock()
	c.dirty = true
	ch := c.refresh
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// refresher lists the tools again after each tools/list_changed. It first
// asks a server of an older protocol version that logs to log at
// logLevel (newer versions take the level with each request).
func (c *conn) refresher(life context.Context, s *mcp.ClientSession) {
	//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
	if init := s.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Logging != nil && !perRequestLogLevel(init) {
		ctx, cancel := context.WithTimeout(life, c.opts.ConnectTimeout)
		//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
		if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: logLevel}); err != nil && life.Err() == nil {
			c.note("logging/setLevel failed: " + err.Error())
		}
		cancel()
	}
	c.mu.Lock()
	ch := c.refresh
	c.mu.Unlock()
	for {
		select {
		case <-life.Done():
			return
		case <-ch:
		}
		c.mu.Lock()
		c.dirty, c.listing = false, true
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(life, c.opts.CallTimeout)
		tools, _, err := c.list(ctx, s)
		cancel()
		c.mu.Lock()
		c.listing = false
		if err == nil && c.state == StateConnected {
			c.tools = tools
		}
		close(c.listed)
		c.listed = make(chan struct{})
		c.mu.Unlock()
		c.onChange()
	}
}

// snapshot returns the server's current tools, first waiting (bounded by
// ctx and Options.RefreshWait) for a refresh that a tools/list_changed asked for,
// so a change is seen at the next turn.
func (c *conn) snapshot(ctx context.Context) []tool.Tool {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RefreshWait)
	defer cancel()
	for {
		c.mu.Lock()
		if (!c.dirty && !c.listing) || c.state != StateConnected {
			t := c.tools
			c.mu.Unlock()
			return t
		}
		ch := c.listed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.tools
		}
	}
}

// close ends the connection and waits for its goroutines; the server can
// be started again afterwards.
func (c *conn) close() {
	c.mu.Lock()
	cancel, session, proc := c.cancel, c.session, c.proc
	wasIdle := c.state == StateIdle
	c.mu.Unlock()
	if cancel != nil {
		cancel(errClosed)
	}
	if session != nil {
		_ = session.Close()
	}
	if proc != nil {
		proc.stop()
	}
	c.wg.Wait()
	c.mu.Lock()
	c.state, c.err, c.session, c.proc, c.tools, c.cancel, c.dirty = StateIdle, nil, nil, nil, nil, nil, false
	c.mu.Unlock()
	if !wasIdle {
		c.onChange()
	}
}

// live returns the session of a connected server, or an error result
// that names the server and says why it cannot be used.
func (c *conn) live() (*mcp.ClientSession, *tool.Output) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateConnected && c.session != nil {
		return c.session, nil
	}
	reason := string(c.state)
	if c.err != nil {
		reason += ": " + c.err.Error()
	}
	out := tool.Output{Text: prompts.MCPServerUnavailable(c.cfg.Name, reason), IsError: true}
	return nil, &out
}

// call runs one tool call under the server's call timeout. A server that
// fails, hangs or dies gives an error result naming it; only the caller's
// own cancellation is a Go error.
func (c *conn) call(ctx context.Context, remote string, args json.RawMessage) (tool.Output, error) {
	s, unavailable := c.live()
	if unavailable != nil {
		return *unavailable, nil
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	timeout := c.opts.CallTimeout
	if c.cfg.CallTimeout > 0 {
		timeout = c.cfg.CallTimeout
	}
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: remote, Arguments: args}
	// A progress token, so the server may report progress (to its log).
	params.SetProgressToken(fmt.Sprintf("cadre-%d", c.calls.Add(1)))
	if init := s.InitializeResult(); perRequestLogLevel(init) {
		//lint:ignore SA1019 MCP logging (deprecated by SEP-2577, still served in its deprecation window) is how servers' logs reach the log file
		params.Meta[mcp.MetaKeyLogLevel] = logLevel
	}
	res, err := s.CallTool(cctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Output{}, context.Cause(ctx)
		}
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return tool.Errorf("%s", prompts.MCPCallTimeout(c.cfg.Name, remote, timeout)), nil
		}
		// os.ErrClosed: watchExit closed the pipe of a server that exited.
		if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return tool.Errorf("%s", prompts.MCPServerLost(c.cfg.Name, remote, c.lostReason(err))), nil
		}
		return tool.Errorf("%s", prompts.MCPCallFailed(c.cfg.Name, remote, err.Error())), nil
	}
	return render(res, c.opts.MaxOutputChars), nil
}

// lostReason describes a lost connection, with the process's exit and
// stderr when it was a stdio server.
func (c *conn) lostReason(err error) string {
	c.mu.Lock()
	proc := c.proc
	c.mu.Unlock()
	if proc == nil {
		return err.Error()
	}
	// The watcher stops the process once the session ends; wait for the
	// exit so the message can say how it ended.
	t := time.NewTimer(c.opts.StopGrace)
	defer t.Stop()
	select {
	case <-proc.exitedChan():
		// And for its stderr to be drained, so the message carries its
		// last words (the group is killed on exit, which closes it).
		select {
		case <-proc.copiedChan():
		case <-t.C:
		}
	case <-t.C:
	}
	if exited, perr := proc.exitState(); exited {
		err = fmt.Errorf("server process exited (%v)", exitText(perr))
	}
	return withStderr(err, proc).Error()
}

// render maps a tool result to the model's text: text content as is,
// other content as short notes, structured content as JSON when there is
// no text; the whole cut to max characters with a note.
func render(res *mcp.CallToolResult, max int) tool.Output {
	var parts []string
	var blocks []llm.Block
	hasText := false
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			hasText = true
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			if slices.Contains(imageTypes, v.MIMEType) && len(v.Data) > 0 {
				// The model sees the picture itself (both providers).
				blocks = append(blocks, llm.ImageBlock(v.MIMEType, base64.StdEncoding.EncodeToString(v.Data)))
				continue
			}
			parts = append(parts, prompts.MCPBinaryContent("image", v.MIMEType, len(v.Data)))
		case *mcp.AudioContent:
			parts = append(parts, prompts.MCPBinaryContent("audio", v.MIMEType, len(v.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, prompts.MCPResourceLink(v.Name, v.URI, v.MIMEType))
		case *mcp.EmbeddedResource:
			if v.Resource == nil {
				continue
			}
			if v.Resource.Text != "" || len(v.Resource.Blob) == 0 {
				hasText = true
				parts = append(parts, v.Resource.Text)
			} else {
				parts = append(parts, prompts.MCPBinaryContent("resource "+v.Resource.URI, v.Resource.MIMEType, len(v.Resource.Blob)))
			}
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append([]string{string(b)}, parts...)
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" && len(blocks) == 0 {
		text = prompts.MCPEmptyResult()
	}
	return tool.Output{Text: truncate(text, max), IsError: res.IsError, Blocks: blocks}
}

// imageTypes are the image types the model providers take.
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// truncate cuts s to at most max bytes on a rune boundary, with a note.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "\n\n" + prompts.MCPTruncated(cut, len(s))
}

// serverTool is one server tool offered to the model.
type serverTool struct {
	c        *conn
	remote   string
	spec     llm.ToolSpec
	readOnly bool
}

func newServerTool(c *conn, t *mcp.Tool) (*serverTool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	st := &serverTool{
		c:      c,
		remote: t.Name,
		spec: llm.ToolSpec{
			Name:        ToolName(c.cfg.Name, t.Name),
			Description: t.Description,
			InputSchema: schema,
		},
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}
	return st, nil
}

func (t *serverTool) Spec() llm.ToolSpec { return t.spec }

// ReadOnly follows the server's readOnlyHint annotation.
func (t *serverTool) ReadOnly() bool { return t.readOnly }

func (t *serverTool) Server() string { return Normalize(t.c.cfg.Name) }

// Subject implements tool.SubjectDeclarer: the server the call goes to.
func (t *serverTool) Subject(json.RawMessage) (tool.Subject, error) {
	return tool.Subject{Server: t.Server()}, nil
}
func (t *serverTool) Remote() string { return t.remote }

func (t *serverTool) Run(ctx context.Context, _ *tool.Env, input json.RawMessage) (tool.Output, error) {
	return t.c.call(ctx, t.remote, input)
}
