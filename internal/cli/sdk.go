package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/sdkproto"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/google/uuid"
)

// errInterrupted cancels a turn the program interrupted; the session goes
// on with the next message.
var errInterrupted = errors.New("interrupted by the program")

// sdkSession is a session driven over --input-format stream-json by a
// program (the Claude Agent SDKs): it answers the program's control
// requests, queues its user messages and runs them one turn at a time,
// until the program's input ends.
type sdkSession struct {
	p    procIO
	o    *options
	conn *sdkproto.Conn

	mu       sync.Mutex
	rt       *cadre.Runtime
	cfg      cadre.Config
	buildErr error
	ready    chan struct{} // closed once the runtime exists (or failed)
	queue    []sdkproto.UserMessage
	wake     chan struct{}
	inputEnd bool
	// serveErr is why reading the input stopped (nil: it ended).
	serveErr error
	cancel   context.CancelCauseFunc // the running turn's
	// idleCancel ends the wait for background tasks when a message
	// arrives or the input ends (sdkidle.go).
	idleCancel context.CancelFunc
	// state is the last session_state_changed sent (sdkidle.go).
	state string
	// tasks follows sub-agents across the session's turns (each turn's
	// tally shares its maps, tasksjson.go).
	tasks *tally
	// hooksApplied is set once the program's hook callbacks are
	// registered with the session (sdkhooks.go).
	hooksApplied bool
	// inProcessMCP is set when the program serves MCP servers of its
	// own: a turn waits until they have connected, so their tools are
	// there from the first request (they answer at once).
	inProcessMCP bool
}

// runSDK serves the Claude Agent SDK protocol on stdin and stdout.
func runSDK(ctx context.Context, p procIO, sigs *signals, o *options) error {
	s := &sdkSession{p: p, o: o, conn: sdkproto.NewConn(p.stdin, p.stdout), ready: make(chan struct{}), wake: make(chan struct{}, 1),
		tasks: newTally(nil, nil)}
	serveCtx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	served := make(chan error, 1)
	go func() {
		err := s.conn.Serve(serveCtx, s)
		s.mu.Lock()
		s.inputEnd, s.serveErr = true, err
		s.mu.Unlock()
		s.kick(err != nil)
		served <- err
	}()
	code, err := s.loop(ctx, sigs)
	if s.rt != nil {
		closeRuntime(p, s.rt)
	}
	stopServe()
	if serr := <-served; serr != nil && err == nil && code == ExitOK && ctx.Err() == nil {
		return &exitError{ExitUsage, serr}
	}
	if code == ExitOK && err == nil {
		return nil
	}
	return &exitError{code, err}
}

// loop runs the queued messages one turn at a time, and between them the
// main agent on what its background tasks report (sdkidle.go). A turn
// that fails or is interrupted does not end the session: the program
// reads how it ended from its result. The session ends when the input
// has ended and nothing runs any more; the process then exits 0.
func (s *sdkSession) loop(ctx context.Context, sigs *signals) (int, error) {
	for {
		if ctx.Err() != nil {
			c, _ := sigs.exitCode()
			return c, nil
		}
		s.mu.Lock()
		var msg *sdkproto.UserMessage
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue = s.queue[1:]
			msg = &m
		}
		end, serveErr, rt := s.inputEnd, s.serveErr, s.rt
		s.mu.Unlock()
		switch {
		case msg != nil:
			if err := s.build(ctx, nil); err != nil {
				return ExitUsage, err
			}
			if c, err := s.turn(ctx, sigs, msg); err != nil {
				return c, err
			}
		case serveErr != nil:
			// A malformed input ends the session once what came before
			// it has run: the program reads why from an error event and
			// a result, as from any session that ends.
			if err := s.inputFailed(rt, serveErr); err != nil {
				return ExitFailed, err
			}
			return ExitUsage, serveErr
		case rt != nil && rt.PendingNotifications():
			// Background tasks reported while no turn ran: the main
			// agent answers them now, not at the next message.
			if c, err := s.turn(ctx, sigs, nil); err != nil {
				return c, err
			}
		case rt != nil && rt.RunningTasks() > 0:
			if err := s.idle(ctx, rt); err != nil {
				return ExitFailed, err
			}
		case end:
			return ExitOK, s.setState(stateIdle)
		default:
			if err := s.setState(stateIdle); err != nil {
				return ExitFailed, err
			}
			select {
			case <-s.wake:
			case <-ctx.Done():
			}
		}
	}
}

// User queues a message from the program.
func (s *sdkSession) User(m sdkproto.UserMessage) {
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	s.kick(true)
}

// Request answers one control request of the program.
func (s *sdkSession) Request(ctx context.Context, subtype string, raw json.RawMessage) (any, error) {
	switch subtype {
	case sdkproto.SubtypeInitialize:
		var in sdkproto.Initialize
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("initialize: %w", err)
		}
		if err := s.build(ctx, &in); err != nil {
			return nil, err
		}
		return s.initResponse(&in), nil
	case sdkproto.SubtypeInterrupt:
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel(errInterrupted)
		}
		queued := []string{}
		for _, m := range s.queue {
			if m.UUID != "" {
				queued = append(queued, m.UUID)
			}
		}
		s.mu.Unlock()
		return sdkproto.InterruptResponse{StillQueued: queued}, nil
	case sdkproto.SubtypeSetPermissionMode:
		var r sdkproto.SetPermissionMode
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("set_permission_mode: %w", err)
		}
		return nil, s.setMode(ctx, r.Mode)
	case sdkproto.SubtypeSetModel:
		var r sdkproto.SetModel
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("set_model: %w", err)
		}
		return nil, s.setModel(ctx, r.Model)
	case sdkproto.SubtypeMCPMessage:
		// A message an in-process MCP server sends on its own (a
		// notification such as tools/list_changed): the pipe to those
		// servers carries replies only, so it is acknowledged and
		// dropped; a changed tool list is seen when the server is next
		// asked.
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("cadre does not support the %q control request", subtype)
}

// build makes the session's runtime once: from the flags, and from the
// initialize request when the program sent one first.
func (s *sdkSession) build(ctx context.Context, in *sdkproto.Initialize) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt != nil || s.buildErr != nil {
		return s.buildErr
	}
	defer close(s.ready)
	o := *s.o
	if in != nil {
		if text := in.SystemPrompt.Text(); text != "" {
			o.systemPrompt = text
		}
		if in.AppendSystemPrompt != "" {
			o.appendSystemPrompt = strings.TrimSpace(o.appendSystemPrompt + "\n\n" + in.AppendSystemPrompt)
		}
		agents, err := mergeAgents(o.agents, in.Agents)
		if err != nil {
			s.buildErr = err
			return err
		}
		o.agents = agents
	}
	cfg, err := configure(ctx, s.p, &o)
	if err == nil {
		err = applyFlags(s.p, &o, &cfg)
	}
	// MCP servers that live in the program's process: a turn waits for
	// them to connect (mcp.go connects them).
	s.inProcessMCP = in != nil && len(in.SDKMCPServers) > 0
	if err == nil && s.o.permissionPromptTool == "stdio" && !s.o.sdk.noPrompts() && cfg.Permissions != nil {
		cfg.Permissions.Prompter = &sdkproto.Prompter{Conn: s.conn, Interrupt: s.interruptTurn}
	}
	if err == nil {
		s.sdkMCP(&cfg, in) // mcp.go: --mcp-config type sdk and initialize's sdkMcpServers
		s.rt, err = cadre.New(cfg)
		if err == nil {
			warnSandbox(s.p.stderr, s.rt) // sandbox.go (issue 9)
		}
	}
	if err == nil && in != nil {
		// The program's hook callbacks (sdkhooks.go).
		s.hooksApplied, err = s.sdkHooks(s.rt, in)
	}
	if err != nil {
		s.buildErr = fmt.Errorf("configure the session: %s", trimPrefix(err.Error()))
		return s.buildErr
	}
	s.cfg = cfg
	return nil
}

// interruptTurn cancels the running turn (a deny that asked for it).
func (s *sdkSession) interruptTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(errInterrupted)
	}
}

// mergeAgents joins the --agents value (JSON or a file) with the agents of
// initialize, which win on a name both define.
func mergeAgents(flag string, sdk map[string]json.RawMessage) (string, error) {
	if len(sdk) == 0 {
		return flag, nil
	}
	all := map[string]json.RawMessage{}
	if strings.TrimSpace(flag) != "" {
		text := flag
		if !strings.HasPrefix(strings.TrimSpace(flag), "{") {
			b, err := os.ReadFile(flag)
			if err != nil {
				return "", fmt.Errorf("--agents: %w", err)
			}
			text = string(b)
		}
		if err := json.Unmarshal([]byte(text), &all); err != nil {
			return "", fmt.Errorf("--agents: %w", err)
		}
	}
	for k, v := range sdk {
		all[k] = v
	}
	b, err := json.Marshal(all)
	return string(b), err
}

// initResponse describes the session to the program.
func (s *sdkSession) initResponse(in *sdkproto.Initialize) sdkproto.InitializeResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := runInfoOf(s.p, s.cfg)
	out := sdkproto.InitializeResponse{
		Commands: []sdkproto.Command{}, OutputStyle: "default", AvailableOutputStyles: []string{"default"},
		Account: sdkproto.Account{APIKeySource: info.APIKeySource, APIProvider: info.Provider},
		PID:     os.Getpid(), ClaudeCodeVersion: protocolVersion, CurrentPermissionMode: info.PermissionMode,
		Models: []sdkproto.ModelInfo{{Value: "default", ResolvedModel: s.cfg.ModelID, DisplayName: "Default", Description: "the session's model, " + s.cfg.ModelID}},
	}
	for _, alias := range []string{"opus", "sonnet", "haiku"} {
		if s.cfg.ResolveModel == nil {
			break
		}
		if id, ok := s.cfg.ResolveModel(alias); ok {
			out.Models = append(out.Models, sdkproto.ModelInfo{Value: alias, ResolvedModel: id, DisplayName: alias, Description: id})
		}
	}
	for _, d := range s.rtAgents() {
		out.Agents = append(out.Agents, sdkproto.AgentInfo{Name: d.name, Description: d.description, Model: d.model})
	}
	if len(in.Hooks) > 0 {
		applied := s.hooksApplied
		out.HooksApplied = &applied
	}
	return out
}

type agentSummary struct{ name, description, model string }

func (s *sdkSession) rtAgents() []agentSummary {
	var out []agentSummary
	for _, d := range s.cfg.Agents {
		out = append(out, agentSummary{d.Name, d.Description, d.Model})
	}
	return out
}

// setMode changes the permission mode from the next turn on (a turn in
// progress keeps its mode).
func (s *sdkSession) setMode(ctx context.Context, mode permission.Mode) error {
	<-s.readyOrBuild(ctx)
	s.mu.Lock()
	rt, err := s.rt, s.buildErr
	s.mu.Unlock()
	if rt == nil {
		return err
	}
	if err := rt.SetPermissionMode(mode); err != nil {
		return errors.New(trimPrefix(err.Error()))
	}
	return nil
}

// setModel switches the main agent's model from the next turn on; nil or
// "default" goes back to the session's model.
func (s *sdkSession) setModel(ctx context.Context, model *string) error {
	<-s.readyOrBuild(ctx)
	s.mu.Lock()
	rt, err := s.rt, s.buildErr
	s.mu.Unlock()
	if rt == nil {
		return err
	}
	m := ""
	if model != nil {
		m = *model
	}
	if err := rt.SetModel(m); err != nil {
		return errors.New(trimPrefix(err.Error()))
	}
	return nil
}

// readyOrBuild builds the runtime from the flags if the program asks for a
// change before initialize or any message.
func (s *sdkSession) readyOrBuild(ctx context.Context) chan struct{} {
	_ = s.build(ctx, nil)
	return s.ready
}

// turn runs one message, or with msg nil the main agent on the
// notifications its background tasks sent, and writes its events; the
// session goes on after an interrupt or a failed turn. The turn's result
// is written when the main agent's turn ends: background tasks go on, and
// what they report is run as a turn of its own (sdkidle.go).
func (s *sdkSession) turn(ctx context.Context, sigs *signals, msg *sdkproto.UserMessage) (int, error) {
	if err := s.setState(stateRunning); err != nil {
		return ExitFailed, err
	}
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	s.cancel = cancel
	rt, cfg, waitMCP := s.rt, s.cfg, s.inProcessMCP
	s.mu.Unlock()
	if waitMCP {
		// A server that fails is reported in init's mcp_servers; the turn
		// goes on without it.
		_ = rt.WaitMCP(tctx)
	}
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	if msg != nil && s.o.replayUserMessages {
		if err := s.replay(rt, *msg); err != nil {
			return ExitFailed, err
		}
	}
	tl := s.turnTally(rt, cfg)
	info := runInfoOf(s.p, cfg)
	info.PermissionMode = rt.PermissionMode()
	pr := newStreamPrinter(s.conn, tl, info, s.o.includePartial)
	pr.hookEvents = s.o.includeHookEvents
	var out printer = pr
	if s.o.debug != "" {
		out = &debugPrinter{next: pr, out: s.o.debugWriter(s.p), filter: s.o.debug}
	}
	out = &warningPrinter{next: out, out: s.p.stderr}
	stream := rt.RunNotifications(tctx)
	if msg != nil {
		stream = rt.Run(tctx, msg.Text)
	} else {
		tl.notificationTurn()
	}
	return driveStream(tctx, cancel, sigs, rt, stream, false, out, tl, s.o.maxBudgetUSD)
}

// replay echoes a user message back, as --replay-user-messages asks.
func (s *sdkSession) replay(rt *cadre.Runtime, msg sdkproto.UserMessage) error {
	var m map[string]any
	if err := json.Unmarshal(msg.Raw, &m); err != nil {
		return err
	}
	m["session_id"] = rt.SessionID()
	m["isReplay"] = true
	if _, ok := m["uuid"]; !ok {
		m["uuid"] = uuid.NewString()
	}
	if _, ok := m["parent_tool_use_id"]; !ok {
		m["parent_tool_use_id"] = nil
	}
	line, err := marshalLine(m)
	if err != nil {
		return err
	}
	return s.conn.WriteLine(line)
}

// inputErrorJSON is the event that tells the program its input could not
// be read: which line, and why.
type inputErrorJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Error     string `json:"error"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

// inputFailed writes the error event and the result of a session ended
// by a malformed input line. rt is nil when no runtime was built yet.
func (s *sdkSession) inputFailed(rt *cadre.Runtime, err error) error {
	session := ""
	if rt != nil {
		session = rt.SessionID()
	}
	msg := "invalid input: " + err.Error()
	line, merr := marshalLine(inputErrorJSON{Type: "system", Subtype: "error", Error: msg, SessionID: session, UUID: uuid.NewString()})
	if merr != nil {
		return merr
	}
	if werr := s.conn.WriteLine(line); werr != nil {
		return werr
	}
	line, merr = marshalLine(newTally(nil, nil).failed(session, failure{msg: msg, subtype: run.ErrorDuringExecution}))
	if merr != nil {
		return merr
	}
	return s.conn.WriteLine(line)
}
