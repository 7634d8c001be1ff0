// Package mcp holds the public vocabulary of cadre's MCP support: how a
// server is configured (Server, with where it was configured), how the
// session's connections are tuned (Options), what is reported about a
// server (ServerStatus, InitServer), and the in-process servers an
// embedding program provides (MessagePipe, InProcessServer).
//
// The clients themselves live in cadre's internal packages; a program sets
// Config.MCPServers and Config.MCPOptions of package cadre and reads
// Runtime.MCPStatus.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Transport is how cadre talks to a server.
type Transport string

// Transports.
const (
	// Stdio runs the server as a child process speaking JSON-RPC over its
	// stdin and stdout.
	Stdio Transport = "stdio"
	// HTTP is the streamable HTTP transport.
	HTTP Transport = "http"
	// SSE is the older HTTP + server-sent events transport.
	SSE Transport = "sse"
	// InProcess is a server that lives in the embedding program, reached
	// through a MessagePipe (the Agent SDK's createSdkMcpServer).
	InProcess Transport = "sdk"
)

// Scope says where a server configuration came from. Later scopes
// override earlier ones; the constants below are in the usual precedence
// order, lowest first.
type Scope string

// Scopes.
const (
	ScopeUser     Scope = "user"     // ~/.config/cadre/settings.json
	ScopeProject  Scope = "project"  // .mcp.json at the project root
	ScopeSettings Scope = "settings" // .cadre/settings.json
	ScopeLocal    Scope = "local"    // .cadre/settings.local.json
	ScopeFlag     Scope = "flag"     // --mcp-config
	ScopeManaged  Scope = "managed"  // managed settings
	ScopeAgent    Scope = "agent"    // an agent definition's inline mcpServers entry
	ScopeSDK      Scope = "sdk"      // registered in process by an embedder
)

// Source is where one server configuration was read.
type Source struct {
	Scope Scope `json:"scope"`
	// File is the file it came from, or "--mcp-config" for inline JSON.
	File string `json:"file,omitempty"`
	// Line is the line of the server's name in File (0 when unknown).
	Line int `json:"line,omitempty"`
}

// String formats the source as "scope (file:line)".
func (s Source) String() string {
	switch {
	case s.File == "":
		return string(s.Scope)
	case s.Line > 0:
		return fmt.Sprintf("%s (%s:%d)", s.Scope, s.File, s.Line)
	default:
		return fmt.Sprintf("%s (%s)", s.Scope, s.File)
	}
}

// Server is one MCP server as configured (Claude Code's .mcp.json entry:
// a stdio command, or an http/sse URL), with ${VAR} references already
// expanded and where it was configured. Package config reads them from
// .mcp.json, --mcp-config and settings files.
type Server struct {
	// Name is the key the user gave the server.
	Name      string    `json:"name"`
	Transport Transport `json:"transport"`
	// Command, Args and Env start a stdio server. Env adds to cadre's own
	// environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an HTTP or SSE server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// CallTimeout bounds one tool call (the "timeout" key, milliseconds);
	// zero means the session's default.
	CallTimeout time.Duration `json:"callTimeout,omitempty"`
	Source      Source        `json:"source"`
	// Pipe reaches an in-process server (Transport InProcess); never read
	// from a file. See InProcessServer.
	Pipe MessagePipe `json:"-"`
}

// MessagePipe carries one JSON-RPC message (a request or a notification,
// as bytes) to an in-process server and returns the server's reply: the
// response to a request, nil for a notification. It may be called
// concurrently and must return when ctx ends (the connection closed).
// Messages the server sends on its own (notifications such as
// tools/list_changed) are not carried.
type MessagePipe func(ctx context.Context, msg json.RawMessage) (json.RawMessage, error)

// InProcessServer configures a server that lives in the embedding program
// (the Agent SDK's createSdkMcpServer): every JSON-RPC message goes
// through send.
func InProcessServer(name string, send MessagePipe) Server {
	return Server{Name: name, Transport: InProcess, Pipe: send, Source: Source{Scope: ScopeSDK}}
}

// State is where a server's connection stands. The values are the ones
// Claude Code reports in its init event.
type State string

// States.
const (
	// StateIdle: configured, not started (a shared server nobody holds).
	StateIdle State = "idle"
	// StatePending: connecting.
	StatePending State = "pending"
	// StateConnected: initialised; its tools are listed.
	StateConnected State = "connected"
	// StateFailed: the connection could not be made or was lost.
	StateFailed State = "failed"
	// StateUntrusted: configured by a workspace that is not trusted, so
	// never started; a session leaves such a server out, and `cadre mcp`
	// reports it with this state.
	StateUntrusted State = "untrusted"
)

// Options tune the session's MCP connections. The zero value is usable.
type Options struct {
	// Dir is the working directory of stdio servers ("" = the session's).
	Dir string
	// LogDir receives one <server>.log per stdio server with its stderr
	// and the log and progress notifications it sends; "" puts them
	// beside the session's transcripts (or discards them when transcripts
	// are off; the last lines of stderr still appear in errors).
	LogDir string
	// ConnectTimeout bounds connecting to one server (MCP_TIMEOUT);
	// default 30 s.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call unless the server's configuration
	// sets its own (MCP_TOOL_TIMEOUT); default 10 minutes.
	CallTimeout time.Duration
	// MaxOutputChars caps the text of one tool result; longer results are
	// cut with a note. Default 100,000 (about Claude Code's 25,000 tokens).
	MaxOutputChars int
	// RequiredWait and RequiredPoll bound how long a required server that
	// is still connecting is awaited and how often it is checked;
	// defaults 30 s and 500 ms (S-4.6).
	RequiredWait, RequiredPoll time.Duration
	// StopGrace is how long a stdio server gets to exit after its stdin
	// closes, and again after SIGTERM, before its group is killed;
	// default 500 ms.
	StopGrace time.Duration
	// RefreshWait bounds how long a turn waits for the tool list that a
	// server's tools/list_changed asked for; a slower server's change
	// shows a turn later. Default 5 s.
	RefreshWait time.Duration
	// ClientName and ClientVersion identify cadre to servers.
	ClientName, ClientVersion string
}

// ServerStatus is what `cadre mcp list`, the init event and
// Runtime.MCPStatus report about a server: its source, transport, state
// (pending, connected, failed, idle), error and tools.
type ServerStatus struct {
	Name      string    `json:"name"`
	Source    Source    `json:"source"`
	Transport Transport `json:"transport"`
	State     State     `json:"status"`
	Error     string    `json:"error,omitempty"`
	// Tools are the model-facing names of its tools.
	Tools []string `json:"tools"`
	// Resources reports whether the server offers resources.
	Resources bool `json:"resources,omitempty"`
}

// InitServer is one entry of the init event's mcp_servers list, shaped
// like Claude Code's: the server's name, its status (pending, connected,
// failed) and where it was configured in Claude Code's words (user,
// project, local, dynamic for --mcp-config, managed, agent, sdk).
type InitServer struct {
	Name   string `json:"name"`
	Status State  `json:"status"`
	Source string `json:"source"`
}
