package remotecmd

// A worker's own settings (`cadre-remote worker --settings FILE`): the
// hooks it runs around every tool call of the agents it works on (the
// files' `hooks` keys) and the MCP servers it connects for them (their
// `mcpServers`). Like the worker's permission ceiling they are the
// worker's, never the launcher's: no command, URL or credential travels
// in a spawn request (a definition's frontmatter hooks stay on the
// launcher; a definition's named MCP servers are matched by name here).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
)

// settingsFile is what a worker reads of a settings file.
type settingsFile struct {
	Hooks      json.RawMessage `json:"hooks"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

// mcpWait bounds how long a starting worker waits for its MCP servers to
// connect (one still connecting adds its tools at a later call).
const mcpWait = 30 * time.Second

// settings gives acts the hooks and MCP servers of the worker's
// --settings files; a file that cannot be read or whose hooks or servers
// cannot be used is an error naming it, diagnostics are printed. The
// returned function stops the MCP servers.
func (o *workerFlags) settings(acts *agentwf.Activities, stderr io.Writer) (func(), error) {
	var d *hooks.Dispatcher
	var servers []mcpx.ServerConfig
	for _, file := range o.settingsFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--settings: %w", err)
		}
		var s settingsFile
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("--settings %s: %w", file, err)
		}
		if len(s.MCPServers) > 0 {
			got, diags, err := mcpx.ParseServers(file, 0, s.MCPServers, mcpx.ScopeSettings, os.Getenv)
			if err != nil {
				return nil, fmt.Errorf("--settings %s: %w", file, err)
			}
			for _, dg := range diags {
				fmt.Fprintf(stderr, "cadre-remote worker: %s\n", dg)
			}
			servers = mcpx.Merge(servers, got)
		}
		if len(s.Hooks) == 0 {
			continue
		}
		cfg, diags, err := hooks.Parse(s.Hooks, file)
		if err != nil {
			return nil, fmt.Errorf("--settings %s: %w", file, err)
		}
		for _, dg := range diags {
			fmt.Fprintf(stderr, "cadre-remote worker: %s\n", dg)
		}
		if d == nil {
			d = hooks.New(nil, hooks.Options{})
		}
		d.Add(cfg)
	}
	acts.Hooks = d
	if len(servers) == 0 {
		return func() {}, nil
	}
	m, err := mcpx.New(servers, mcpx.OptionsFromEnv(os.Getenv))
	if err != nil {
		return nil, fmt.Errorf("--settings: %w", err)
	}
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "cadre-remote worker: MCP servers still connecting: %v\n", err)
	}
	for _, st := range m.Status() {
		fmt.Fprintf(stderr, "cadre-remote worker: MCP server %s: %s\n", st.Name, st.State)
	}
	acts.MCP = m
	return func() {
		if err := m.Close(); err != nil {
			fmt.Fprintf(stderr, "cadre-remote worker: stop the MCP servers: %v\n", err)
		}
	}, nil
}
