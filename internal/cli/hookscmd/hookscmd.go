// Package hookscmd is the `cadre hooks` command: it lists the hooks a
// session in a directory would run, from every settings file and agent
// definition, with where each came from and which agents it applies to.
package hookscmd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/plugin"
)

// New returns the `hooks` command with its `list` subcommand.
func New() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Inspect the hooks a session runs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newList())
	return cmd
}

type listOptions struct {
	cwd, home, settingsFile, managedDir string
	json, trustProject                  bool
	pluginDirs                          []string
}

// Hook is one row of the listing.
type Hook struct {
	Event   hooks.Event `json:"event"`
	Matcher string      `json:"matcher"`
	Command string      `json:"command"`
	// Timeout is in seconds; 0 means the default (60).
	Timeout float64 `json:"timeout"`
	// Source is the settings or agent file.
	Source string `json:"source"`
	// AppliesTo says which agents the hook fires for.
	AppliesTo string `json:"applies_to"`
}

func newList() *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every hook: event, matcher, command, source file and the agents it applies to",
		Long: `List the hooks a session started in --cwd would run: those of every settings
file (user, project, project local, --settings, managed; allowManagedHooksOnly
and disableAllHooks applied) and those of agent definitions, which run only
while their agent runs. A repository's own hooks are listed only when the
workspace is trusted (cadre trust, --trust-project); what is left out and
problems with the files are warnings on stderr.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, warnings, err := list(cmd.Context(), o)
			for _, w := range warnings {
				// Each warning says its severity once (issue 29: the
				// settings' diagnostics already carried "warning:").
				fmt.Fprintln(cmd.ErrOrStderr(), "cadre: "+w)
			}
			if err != nil {
				return err
			}
			if o.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if rows == nil {
					rows = []Hook{}
				}
				return enc.Encode(rows)
			}
			return printTable(cmd.OutOrStdout(), rows)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cwd, "cwd", "", "project directory (default: current directory)")
	f.StringVar(&o.settingsFile, "settings", "", "extra settings file, as with the root command's --settings")
	f.BoolVar(&o.json, "json", false, "print the hooks as a JSON array")
	f.BoolVar(&o.trustProject, "trust-project", false, "list as if the workspace were trusted (as the root command's --trust-project)")
	f.StringVar(&o.home, "home", "", "home directory (default: $HOME)")
	f.StringArrayVar(&o.pluginDirs, "plugin-dir", nil, "also list the hooks of the Claude Code plugin in this directory (repeatable)")
	f.StringVar(&o.managedDir, "managed-dir", "", "directory of managed settings (default: /etc/cadre)")
	_ = f.MarkHidden("home")
	_ = f.MarkHidden("managed-dir")
	return cmd
}

// list gathers the hooks of the settings files and agent definitions.
func list(ctx context.Context, o listOptions) ([]Hook, []string, error) {
	cwd := o.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, nil, fmt.Errorf("--cwd: %w", err)
	}
	home := o.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	opts := config.SettingsOptions{Cwd: cwd, Home: home, ManagedDir: o.managedDir, SettingsFile: o.settingsFile, TrustProject: o.trustProject,
		ConfigHome: os.Getenv("XDG_CONFIG_HOME"), ClaudeManagedDir: os.Getenv("CADRE_CLAUDE_MANAGED_DIR")}
	if v := strings.TrimSpace(o.settingsFile); strings.HasPrefix(v, "{") {
		opts.SettingsJSON, opts.SettingsFile = v, ""
	}
	s, diags, err := config.LoadSettings(opts)
	var warnings []string
	for _, d := range diags {
		warnings = append(warnings, d.String())
	}
	if err != nil {
		return nil, warnings, err
	}
	// Claude Code plugins' hooks: the installed, enabled ones and
	// --plugin-dir, as in a session.
	var dirs []plugin.Dir
	for _, d := range o.pluginDirs {
		dirs = append(dirs, plugin.Dir{Path: d})
	}
	for _, d := range s.AddPlugins(home, dirs) {
		warnings = append(warnings, d.String())
	}
	// Workspace trust gates the project's hooks, as config.Load does.
	cfg, hdiags, err := s.GatedHooksConfig(nil)
	for _, d := range hdiags {
		warnings = append(warnings, d.String())
	}
	if err != nil {
		return nil, warnings, err
	}
	var rows []Hook
	for _, e := range cfg.Entries() {
		rows = append(rows, row(e, settingsScope(e)))
	}
	managed := cmp.Or(o.managedDir, config.DefaultManagedDir)
	defs, err := agentdef.Load(ctx, agentdef.LoadOptions{Cwd: cwd, Home: home, ManagedDir: filepath.Join(managed, "agents")})
	if err != nil {
		return rows, warnings, fmt.Errorf("agent definitions: %w", err)
	}
	for _, d := range defs.Diagnostics() {
		if strings.Contains(d.Message, "hooks") {
			warnings = append(warnings, fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message))
		}
	}
	for _, def := range defs.Active() {
		// A workspace's agent files run their hooks only when it is
		// trusted (issue 9), as in a session.
		if len(def.Hooks) == 0 || !s.Trust.Allow(def.Path, "hooks") {
			continue
		}
		c, hd, err := hooks.ParseAgent(def.Hooks, def.Path)
		for _, d := range hd {
			warnings = append(warnings, "warning: "+d.String())
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("warning: %v; agent %s runs without its hooks", err, def.Name))
			continue
		}
		for _, e := range c.Entries() {
			rows = append(rows, row(e, "agent "+def.Name+", while it runs"))
		}
	}
	// What workspace trust kept out (hooks of an untrusted repository).
	for _, d := range s.Trust.Report() {
		warnings = append(warnings, d.String())
	}
	return rows, warnings, nil
}

func row(e hooks.Entry, scope string) Hook {
	return Hook{Event: e.Event, Matcher: e.Matcher, Command: e.Command, Timeout: e.Timeout.Seconds(), Source: e.Source, AppliesTo: scope}
}

// settingsScope says which agents a settings hook fires for: Stop and
// UserPromptSubmit are the main agent's, SubagentStart and SubagentStop
// sub-agents' (those of the matcher's types), the session events the
// session's, the rest every agent's.
func settingsScope(e hooks.Entry) string {
	switch e.Event {
	case hooks.Stop, hooks.UserPromptSubmit:
		return "main agent"
	case hooks.SubagentStart, hooks.SubagentStop:
		if e.Matcher == "" || e.Matcher == "*" {
			return "every sub-agent"
		}
		return "sub-agents matching " + e.Matcher
	case hooks.SessionStart, hooks.SessionEnd, hooks.WorktreeCreate, hooks.WorktreeRemove:
		return "the session"
	}
	return "every agent"
}

func printTable(w io.Writer, rows []Hook) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No hooks configured.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tMATCHER\tCOMMAND\tSOURCE\tAPPLIES TO")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Event, cmp.Or(r.Matcher, "*"), oneLine(r.Command), r.Source, r.AppliesTo)
	}
	return tw.Flush()
}

// oneLine keeps a multi-line command on its row.
func oneLine(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return string(r)
}
