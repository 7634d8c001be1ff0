// Package mcpcmd is the `cadre mcp` command: the MCP servers this project
// configures, where each came from, whether it connects and what tools it
// offers.
package mcpcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/tool"
)

// options are the flags shared by the subcommands.
type options struct {
	cwd     string
	configs []string
	strict  bool
	json    bool
}

// New returns the `mcp` command with `list` and `get`.
func New() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List the MCP servers of this project and their tools",
		Long: `List the MCP servers this project configures (.mcp.json at the project root
and --mcp-config files or JSON), connect to each, and show its status and tools.`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.cwd, "cwd", "", "project root (default: current directory)")
	pf.StringArrayVar(&o.configs, "mcp-config", nil, "MCP servers from a JSON file or a JSON string (repeatable)")
	pf.BoolVar(&o.strict, "strict-mcp-config", false, "only use the servers of --mcp-config")
	pf.BoolVar(&o.json, "json", false, "print JSON")
	cmd.AddCommand(&cobra.Command{
		Use:          "list",
		Short:        "List servers: source, transport, status, tool count",
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:          "get NAME",
		Short:        "Show one server and its tools",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGet(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, args[0])
		},
	})
	return cmd
}

// configured reads the configuration and prints its diagnostics.
func configured(stderr io.Writer, o options) ([]mcpx.ServerConfig, string, error) {
	cwd := o.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, "", &agentscmd.ExitError{Code: 2, Err: err}
		}
		cwd = wd
	}
	// The settings files' mcpServers count too, as in a run.
	settings, _, err := config.LoadSettings(config.SettingsOptions{Cwd: cwd, Home: os.Getenv("HOME")})
	if err != nil {
		return nil, "", &agentscmd.ExitError{Code: 2, Err: err}
	}
	servers, diags, err := mcpx.Load(mcpx.LoadOptions{Cwd: cwd, Settings: settings.MCPServers, Flags: o.configs, Strict: o.strict, Getenv: os.Getenv})
	if err != nil {
		return nil, "", &agentscmd.ExitError{Code: 2, Err: err}
	}
	for _, d := range diags {
		fmt.Fprintln(stderr, d.String())
	}
	return servers, cwd, nil
}

// connect connects the servers, waiting for every one to connect or fail.
func connect(ctx context.Context, servers []mcpx.ServerConfig, cwd string) (*mcpx.Manager, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	opts := mcpx.OptionsFromEnv(os.Getenv)
	opts.Dir = cwd
	m, err := mcpx.New(servers, opts)
	if err != nil {
		return nil, &agentscmd.ExitError{Code: 2, Err: err}
	}
	m.Start()
	if err := m.Wait(ctx); err != nil {
		_ = m.Close()
		return nil, &agentscmd.ExitError{Code: 130, Err: err}
	}
	return m, nil
}

func runList(ctx context.Context, stdout, stderr io.Writer, o options) error {
	servers, cwd, err := configured(stderr, o)
	if err != nil {
		return err
	}
	m, err := connect(ctx, servers, cwd)
	if err != nil {
		return err
	}
	defer m.Close()
	st := m.Status()
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	if len(st) == 0 {
		fmt.Fprintln(stdout, "No MCP servers configured (add them to .mcp.json or pass --mcp-config).")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tTRANSPORT\tSTATUS\tTOOLS")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", s.Name, s.Source, s.Transport, s.State, len(s.Tools))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range st {
		if s.Error != "" {
			fmt.Fprintf(stdout, "\n%s: %s\n", s.Name, s.Error)
		}
	}
	return nil
}

// toolInfo is one tool in `mcp get`.
type toolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ReadOnly    bool            `json:"readOnly"`
}

func runGet(ctx context.Context, stdout, stderr io.Writer, o options, name string) error {
	servers, cwd, err := configured(stderr, o)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(servers, func(s mcpx.ServerConfig) bool { return s.Name == name })
	if i < 0 {
		var names []string
		for _, s := range servers {
			names = append(names, fmt.Sprintf("%q", s.Name))
		}
		have := "none is configured"
		if len(names) > 0 {
			have = "configured: " + strings.Join(names, ", ")
		}
		return &agentscmd.ExitError{Code: 1, Err: fmt.Errorf("no MCP server named %q (%s)", name, have)}
	}
	m, err := connect(ctx, servers[i:i+1], cwd)
	if err != nil {
		return err
	}
	defer m.Close()
	st := m.Status()
	var tools []toolInfo
	for _, t := range m.Tools(ctx) {
		if _, ok := t.(mcpx.Tool); !ok {
			continue
		}
		s := t.Spec()
		tools = append(tools, toolInfo{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema, ReadOnly: t.ReadOnly()})
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			mcpx.ServerStatus
			Tools []toolInfo `json:"tools"`
		}{st[0], append([]toolInfo{}, tools...)})
	}
	s := st[0]
	fmt.Fprintf(stdout, "%s\n  source:    %s\n  transport: %s\n  status:    %s\n", s.Name, s.Source, s.Transport, s.State)
	if s.Error != "" {
		fmt.Fprintf(stdout, "  error:     %s\n", s.Error)
	}
	if s.Resources {
		fmt.Fprintf(stdout, "  resources: yes (%s, %s)\n", tool.ListMcpResources, tool.ReadMcpResource)
	}
	fmt.Fprintf(stdout, "  tools:     %d\n", len(tools))
	for _, t := range tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(stdout, "    %s", t.Name)
		if desc != "" {
			fmt.Fprintf(stdout, " — %s", desc)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
