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
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/tool"
)

// options are the flags shared by the subcommands.
type options struct {
	cwd          string
	configs      []string
	strict       bool
	json         bool
	trustProject bool
	pluginDirs   []string
}

// New returns the `mcp` command with `list` and `get`.
func New() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List the MCP servers of this project and their tools",
		Long: `List the MCP servers this project configures (.mcp.json at the project root,
the settings files' mcpServers, and --mcp-config files or JSON), connect to
each, and show its status and tools.

As in a session, the servers of a workspace that is not trusted (its
.mcp.json and project settings) are never started: they are listed with
status "untrusted". Trust it with ` + "`cadre trust`" + `, or pass --trust-project.`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.cwd, "cwd", "", "project root (default: current directory)")
	pf.StringArrayVar(&o.configs, "mcp-config", nil, "MCP servers from a JSON file or a JSON string (repeatable)")
	pf.BoolVar(&o.strict, "strict-mcp-config", false, "only use the servers of --mcp-config")
	pf.BoolVar(&o.json, "json", false, "print JSON")
	pf.StringArrayVar(&o.pluginDirs, "plugin-dir", nil, "also the MCP servers of the Claude Code plugin in this directory (repeatable)")
	pf.BoolVar(&o.trustProject, "trust-project", false, "start the workspace's own servers as if it were trusted (as the root command's --trust-project)")
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

// mcpConfig is what `cadre mcp` reads: the servers a session would start,
// those workspace trust keeps out, and the project root.
type mcpConfig struct {
	servers, untrusted []mcpx.ServerConfig
	cwd                string
	root               string // the workspace trust was decided for
}

// configured reads the configuration as a session does, workspace trust
// included, and prints its diagnostics.
func configured(stderr io.Writer, o options) (*mcpConfig, error) {
	cwd := o.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, &agentscmd.ExitError{Code: 2, Err: err}
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, &agentscmd.ExitError{Code: 2, Err: fmt.Errorf("--cwd: %w", err)}
	}
	// The settings files' mcpServers count too, as in a run, under the
	// same workspace trust.
	settings, _, err := config.LoadSettings(config.SettingsOptions{Cwd: cwd, Home: os.Getenv("HOME"), TrustProject: o.trustProject,
		ConfigHome: os.Getenv("XDG_CONFIG_HOME"), ClaudeManagedDir: os.Getenv("CADRE_CLAUDE_MANAGED_DIR")})
	if err != nil {
		return nil, &agentscmd.ExitError{Code: 2, Err: err}
	}
	getenv := os.Getenv
	if len(settings.Env) > 0 {
		// Settings env values fill ${VAR} as in a run.
		getenv = func(k string) string {
			if v, ok := settings.Env[k]; ok {
				return v
			}
			return os.Getenv(k)
		}
	}
	// Claude Code plugins' servers: the installed, enabled ones and
	// --plugin-dir, as in a session.
	var dirs []plugin.Dir
	for _, d := range o.pluginDirs {
		dirs = append(dirs, plugin.Dir{Path: d})
	}
	for _, d := range settings.AddPlugins(os.Getenv("HOME"), dirs) {
		fmt.Fprintln(stderr, d.String())
	}
	servers, untrusted, diags, err := config.MCPServers(cwd, settings, o.configs, o.strict, getenv)
	for _, d := range diags {
		fmt.Fprintln(stderr, d.String())
	}
	if err != nil {
		return nil, &agentscmd.ExitError{Code: 2, Err: err}
	}
	c := &mcpConfig{servers: servers, untrusted: untrusted, cwd: cwd}
	if settings.Trust != nil {
		c.root = settings.Trust.Root
	}
	return c, nil
}

// untrustedStatus reports a server workspace trust kept from starting.
func (c *mcpConfig) untrustedStatus(sv mcpx.ServerConfig) mcpx.ServerStatus {
	return mcpx.ServerStatus{Name: sv.Name, Source: sv.Source, Transport: sv.Transport, State: mcpx.StateUntrusted, Tools: []string{},
		Error: fmt.Sprintf("not started: the workspace %s is not trusted (run `cadre trust %s`, or pass --trust-project)", c.root, c.root)}
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
	c, err := configured(stderr, o)
	if err != nil {
		return err
	}
	m, err := connect(ctx, c.servers, c.cwd)
	if err != nil {
		return err
	}
	defer m.Close()
	st := m.Status()
	for _, sv := range c.untrusted {
		st = append(st, c.untrustedStatus(sv))
	}
	slices.SortFunc(st, func(a, b mcpx.ServerStatus) int { return strings.Compare(a.Name, b.Name) })
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
	c, err := configured(stderr, o)
	if err != nil {
		return err
	}
	servers := c.servers
	i := slices.IndexFunc(servers, func(s mcpx.ServerConfig) bool { return s.Name == name })
	if j := slices.IndexFunc(c.untrusted, func(s mcpx.ServerConfig) bool { return s.Name == name }); i < 0 && j >= 0 {
		// Shown, never started.
		return printGet(stdout, o, c.untrustedStatus(c.untrusted[j]), nil)
	}
	if i < 0 {
		var names []string
		for _, s := range slices.SortedFunc(slices.Values(append(slices.Clone(servers), c.untrusted...)), func(a, b mcpx.ServerConfig) int { return strings.Compare(a.Name, b.Name) }) {
			names = append(names, fmt.Sprintf("%q", s.Name))
		}
		have := "none is configured"
		if len(names) > 0 {
			have = "configured: " + strings.Join(names, ", ")
		}
		return &agentscmd.ExitError{Code: 1, Err: fmt.Errorf("no MCP server named %q (%s)", name, have)}
	}
	m, err := connect(ctx, servers[i:i+1], c.cwd)
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
	return printGet(stdout, o, st[0], tools)
}

// printGet prints one server and its tools.
func printGet(stdout io.Writer, o options, s mcpx.ServerStatus, tools []toolInfo) error {
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			mcpx.ServerStatus
			Tools []toolInfo `json:"tools"`
		}{s, append([]toolInfo{}, tools...)})
	}
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
