package mcpx

import "github.com/cadre-dev/cadre/mcp"

// The configuration and status types are public, in package mcp; these
// names keep this package's code short. Its own go-sdk import is also
// called mcp, so the public package is reached only here.
type (
	// ServerConfig is one configured server (mcp.Server).
	ServerConfig = mcp.Server
	// Transport is how cadre talks to a server (mcp.Transport).
	Transport = mcp.Transport
	// Scope says where a server was configured (mcp.Scope).
	Scope = mcp.Scope
	// Source is where one server configuration was read (mcp.Source).
	Source = mcp.Source
	// State is where a server's connection stands (mcp.State).
	State = mcp.State
	// Options tune a Manager (mcp.Options).
	Options = mcp.Options
	// ServerStatus is what is reported about a server (mcp.ServerStatus).
	ServerStatus = mcp.ServerStatus
	// InitServer is one entry of the init event's mcp_servers list.
	InitServer = mcp.InitServer
	// MessagePipe reaches an in-process server (mcp.MessagePipe).
	MessagePipe = mcp.MessagePipe
)

// Transports, scopes and states (see package mcp).
const (
	Stdio     = mcp.Stdio
	HTTP      = mcp.HTTP
	SSE       = mcp.SSE
	InProcess = mcp.InProcess

	ScopeUser     = mcp.ScopeUser
	ScopeProject  = mcp.ScopeProject
	ScopeSettings = mcp.ScopeSettings
	ScopeLocal    = mcp.ScopeLocal
	ScopeFlag     = mcp.ScopeFlag
	ScopeManaged  = mcp.ScopeManaged
	ScopeAgent    = mcp.ScopeAgent
	ScopeSDK      = mcp.ScopeSDK

	StateIdle      = mcp.StateIdle
	StatePending   = mcp.StatePending
	StateConnected = mcp.StateConnected
	StateFailed    = mcp.StateFailed
	StateUntrusted = mcp.StateUntrusted
)

// InProcessServer configures an in-process server reached through send.
func InProcessServer(name string, send MessagePipe) ServerConfig {
	return mcp.InProcessServer(name, send)
}
