package mcpx

import (
	"context"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

// awaitTool returns the tool called name (a model-facing mcp__ name) of
// one of conns. A server the name points to that is still connecting is
// awaited (bounded by ctx and its connect timeout), so a call made before
// the server is up runs once it is, instead of failing. nil when none
// offers the tool.
func awaitTool(ctx context.Context, conns []*conn, name string) tool.Tool {
	for _, c := range conns {
		if !strings.HasPrefix(name, tool.MCPPrefix+Normalize(c.cfg.Name)+"__") {
			continue
		}
		c.mu.Lock()
		pending, ready := c.state == StatePending, c.ready
		c.mu.Unlock()
		if pending {
			select {
			case <-ready:
			case <-ctx.Done():
				return nil
			}
		}
		for _, t := range c.snapshot(ctx) {
			if t.Spec().Name == name {
				return t
			}
		}
	}
	return nil
}

// AwaitTool returns the started shared servers' tool called name, waiting
// for its server while it connects; nil when no server offers it.
func (m *Manager) AwaitTool(ctx context.Context, name string) tool.Tool {
	m.mu.Lock()
	var conns []*conn
	if m.started {
		for _, n := range m.names {
			conns = append(conns, m.shared[n].c)
		}
	}
	m.mu.Unlock()
	return awaitTool(ctx, conns, name)
}

// AwaitTool returns the tool called name of the lease's servers, waiting
// for its server while it connects; nil when none offers it.
func (l *Lease) AwaitTool(ctx context.Context, name string) tool.Tool {
	return awaitTool(ctx, l.conns(), name)
}
