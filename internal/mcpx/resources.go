package mcpx

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

type listResourcesIn struct {
	Server string `json:"server,omitempty" jsonschema:"description=Only list the resources of this MCP server"`
}

type readResourceIn struct {
	Server string `json:"server" jsonschema:"description=The name of the MCP server"`
	URI    string `json:"uri" jsonschema:"description=The URI of the resource to read"`
}

// resourceEntry is one line of ListMcpResources' answer.
type resourceEntry struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// resourceTools returns ListMcpResources and ReadMcpResource over conns.
func resourceTools(conns []*conn) []tool.Tool {
	rs := resourceSet(conns)
	return []tool.Tool{
		tool.Func(tool.FuncConfig{Name: tool.ListMcpResources, Description: prompts.ListMcpResources(), ReadOnly: true}, rs.list),
		tool.Func(tool.FuncConfig{Name: tool.ReadMcpResource, Description: prompts.ReadMcpResource(), ReadOnly: true}, rs.read),
	}
}

// resourceSet is the servers the resource tools reach.
type resourceSet []*conn

// find returns the server called name, or the quoted names of all.
func (rs resourceSet) find(name string) (*conn, []string) {
	var names []string
	for _, c := range rs {
		if c.cfg.Name == name {
			return c, nil
		}
		names = append(names, fmt.Sprintf("%q", c.cfg.Name))
	}
	return nil, names
}

func (rs resourceSet) list(ctx context.Context, _ *tool.Env, in listResourcesIn) (tool.Output, error) {
	targets := rs
	if in.Server != "" {
		c, names := rs.find(in.Server)
		if c == nil {
			return tool.Errorf("no MCP server named %q (servers: %s)", in.Server, strings.Join(names, ", ")), nil
		}
		targets = resourceSet{c}
	}
	entries := []resourceEntry{}
	var problems []string
	for _, c := range targets {
		c.mu.Lock()
		has := c.resources
		c.mu.Unlock()
		if !has {
			continue
		}
		s, unavailable := c.live()
		if unavailable != nil {
			problems = append(problems, unavailable.Text)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
		for r, err := range s.Resources(cctx, nil) {
			if err != nil {
				if ctx.Err() != nil {
					cancel()
					return tool.Output{}, ctx.Err()
				}
				problems = append(problems, prompts.MCPCallFailed(c.cfg.Name, "resources/list", err.Error()))
				break
			}
			entries = append(entries, resourceEntry{Server: c.cfg.Name, URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
		}
		cancel()
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return tool.Output{}, fmt.Errorf("list mcp resources: %w", err)
	}
	text := string(b)
	if len(problems) > 0 {
		text += "\n" + strings.Join(problems, "\n")
	}
	if len(rs) > 0 { // one Options per Manager
		text = truncate(text, rs[0].opts.MaxOutputChars)
	}
	return tool.Output{Text: text}, nil
}

func (rs resourceSet) read(ctx context.Context, _ *tool.Env, in readResourceIn) (tool.Output, error) {
	c, names := rs.find(in.Server)
	if c == nil {
		return tool.Errorf("no MCP server named %q (servers: %s)", in.Server, strings.Join(names, ", ")), nil
	}
	s, unavailable := c.live()
	if unavailable != nil {
		return *unavailable, nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	res, err := s.ReadResource(cctx, &mcp.ReadResourceParams{URI: in.URI})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Output{}, ctx.Err()
		}
		return tool.Errorf("%s", prompts.MCPCallFailed(c.cfg.Name, "resources/read "+in.URI, err.Error())), nil
	}
	var parts []string
	for _, rc := range res.Contents {
		if rc.Text != "" || len(rc.Blob) == 0 {
			parts = append(parts, rc.Text)
		} else {
			parts = append(parts, prompts.MCPBinaryContent("resource "+rc.URI, rc.MIMEType, len(rc.Blob)))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = prompts.MCPEmptyResult()
	}
	return tool.Output{Text: truncate(text, c.opts.MaxOutputChars)}, nil
}
