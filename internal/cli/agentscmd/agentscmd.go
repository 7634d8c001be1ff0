// Package agentscmd is the `cadre agents` command: list the agent
// definitions cadre finds (with their source and what shadows what), show
// one, and check agent files like a compiler.
package agentscmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/internal/textdist"
)

// ExitError is returned from a command's RunE when the command must end
// the process with a specific exit code: Code 1 when `agents check` found
// errors or `agents show` was given an unknown name, Code 2 for a --cwd
// that is not a directory. Err holds the message; the caller prints it and
// exits with Code.
type ExitError struct {
	Code int
	Err  error
}

// Error returns the message.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// options are the flags shared by every agents subcommand.
type options struct {
	cwd        string
	agents     string
	home       string
	managedDir string
	pluginDirs []string
	json       bool
	// stderr receives the plugins' diagnostics.
	stderr io.Writer
}

// New returns the `agents` command tree: `agents` (a table), `agents
// --json`, `agents show NAME` and `agents check [PATH…]`. Every form takes
// --cwd and --agents.
func New() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List agent definitions, show one, or check agent files",
		Long: `List the agents cadre finds: built-in, plugin, user (~/.config/cadre/agents,
~/.claude/agents), project (.cadre/agents and .claude/agents from the working
directory up to the git root), --agents, and managed (/etc/cadre/agents).
A later source replaces an earlier agent of the same name; the table shows
which definition shadows which.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.stderr = cmd.ErrOrStderr()
			set, err := load(cmd.Context(), o)
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), set)
			}
			writeTable(cmd.OutOrStdout(), set)
			summarize(cmd.ErrOrStderr(), set.Diagnostics())
			return nil
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.cwd, "cwd", "", "working directory to look for project agents from (default: the current directory)")
	pf.StringVar(&o.agents, "agents", "", "agent definitions as a JSON object, or a path to a JSON file")
	pf.StringVar(&o.home, "home", "", "home directory for user agents (default: $HOME)")
	pf.StringArrayVar(&o.pluginDirs, "plugin-dir", nil, "also load the Claude Code plugin in this directory (repeatable); its agents are named plugin:agent")
	pf.StringVar(&o.managedDir, "managed-dir", "", "managed agents directory (default: "+agentdef.DefaultManagedDir+")")
	_ = pf.MarkHidden("home")
	_ = pf.MarkHidden("managed-dir")
	cmd.Flags().BoolVar(&o.json, "json", false, `print {"agents": [...], "diagnostics": [...]} as JSON`)
	cmd.AddCommand(newShow(o), newCheck(o))
	return cmd
}

func load(ctx context.Context, o *options) (*agentdef.Set, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	home := o.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if o.cwd != "" {
		if st, err := os.Stat(o.cwd); err != nil || !st.IsDir() {
			return nil, &ExitError{Code: 2, Err: fmt.Errorf("--cwd %s: not a directory", o.cwd)}
		}
	}
	// Claude Code plugins: the installed ones enabledPlugins turns on, and
	// --plugin-dir.
	var dirs []plugin.Dir
	for _, d := range o.pluginDirs {
		dirs = append(dirs, plugin.Dir{Path: d})
	}
	plugins, pdiags := config.SessionPluginAgents(cmp.Or(o.cwd, "."), home, dirs, os.Getenv)
	if o.stderr != nil {
		for _, d := range pdiags {
			fmt.Fprintln(o.stderr, "cadre: "+d.String())
		}
	}
	set, err := agentdef.Load(ctx, agentdef.LoadOptions{Cwd: o.cwd, Home: home, ManagedDir: o.managedDir, FlagAgents: o.agents, Plugins: plugins})
	if err != nil {
		return nil, &ExitError{Code: 1, Err: err}
	}
	return set, nil
}

// ordered returns every definition, grouped by name in listing order, the
// active one first and then those it shadows, latest first.
func ordered(set *agentdef.Set) []*agentdef.Definition {
	var out []*agentdef.Definition
	for _, a := range set.Active() {
		out = append(out, a)
		all := set.All()
		for i := len(all) - 1; i >= 0; i-- {
			if d := all[i]; d.Name == a.Name && d != a {
				out = append(out, d)
			}
		}
	}
	return out
}

func writeTable(w io.Writer, set *agentdef.Set) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTOOLS\tSHADOWED BY")
	for _, d := range ordered(set) {
		model := d.Model
		if model == "" {
			model = "default"
		}
		shadow := "-"
		if d.ShadowedBy != "" {
			shadow = d.ShadowedBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneLine(d.Name), d.Source, oneLine(model), clip(agentdef.ToolsNote(d), 60), shadow)
	}
	tw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	s = oneLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func summarize(w io.Writer, ds []agentdef.Diagnostic) {
	errs, warns := count(ds)
	if errs+warns > 0 {
		fmt.Fprintf(w, "%d error(s), %d warning(s) in agent files; run `cadre agents check` for details\n", errs, warns)
	}
}

func count(ds []agentdef.Diagnostic) (errs, warns int) {
	for _, d := range ds {
		if d.Severity == agentdef.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	return errs, warns
}

// jsonAgent is one agent in `agents --json`: every field of the
// definition plus whether it is active and its listing tools note.
type jsonAgent struct {
	*agentdef.Definition
	ShadowedBy *string `json:"shadowedBy"`
	Active     bool    `json:"active"`
	ToolsNote  string  `json:"toolsNote"`
	// EffectiveTools are the tools the agent runs with when the main
	// agent spawns it (tools.go).
	EffectiveTools []string `json:"effectiveTools"`
}

func writeJSON(w io.Writer, set *agentdef.Set) error {
	out := struct {
		Agents      []jsonAgent           `json:"agents"`
		Diagnostics []agentdef.Diagnostic `json:"diagnostics"`
	}{Agents: []jsonAgent{}, Diagnostics: set.Diagnostics()}
	if out.Diagnostics == nil {
		out.Diagnostics = []agentdef.Diagnostic{}
	}
	for _, d := range ordered(set) {
		a := jsonAgent{Definition: d, Active: d.ShadowedBy == "", ToolsNote: agentdef.ToolsNote(d), EffectiveTools: toolsOf(d).effective}
		if a.EffectiveTools == nil {
			a.EffectiveTools = []string{}
		}
		if d.ShadowedBy != "" {
			s := d.ShadowedBy
			a.ShadowedBy = &s
		}
		out.Agents = append(out.Agents, a)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write agents JSON: %w", err)
	}
	return nil
}

func newShow(o *options) *cobra.Command {
	return &cobra.Command{
		Use:          "show NAME",
		Short:        "Show every field of one agent and its system prompt",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := load(cmd.Context(), o)
			if err != nil {
				return err
			}
			d := set.Get(args[0])
			if d == nil {
				var names []string
				for _, a := range set.Active() {
					names = append(names, a.Name)
				}
				msg := fmt.Sprintf("unknown agent %q", args[0])
				if near := closest(args[0], names, 3); len(near) > 0 {
					msg += "; did you mean " + strings.Join(quoteAll(near), ", ") + "?"
				}
				// Issue 29: name every agent there is, not only the close ones.
				slices.Sort(names)
				if len(names) == 0 {
					msg += " (no agents are defined)"
				} else {
					msg += " (agents: " + strings.Join(names, ", ") + ")"
				}
				return &ExitError{Code: 1, Err: errors.New(msg)}
			}
			writeShow(cmd.OutOrStdout(), d)
			return nil
		},
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func writeShow(w io.Writer, d *agentdef.Definition) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-19s %s\n", k+":", v)
		}
	}
	entries := func(es []agentdef.ToolEntry) string {
		if es == nil {
			return "(not set)"
		}
		if len(es) == 0 {
			return "(empty: none)"
		}
		var s []string
		for _, e := range es {
			s = append(s, e.Raw)
		}
		return strings.Join(s, ", ")
	}
	line("name", d.Name)
	line("source", string(d.Source))
	line("path", d.Path)
	line("plugin", d.Plugin)
	line("description", strings.ReplaceAll(d.Description, "\n", "\n                    "))
	line("tools", entries(d.Tools))
	line("disallowedTools", entries(d.DisallowedTools))
	toolsOf(d).write(line) // tools.go
	line("model", d.Model)
	line("effort", string(d.Effort))
	line("permissionMode", string(d.PermissionMode))
	for _, m := range d.MCPServers {
		line("mcpServers", string(m))
	}
	line("requiredMcpServers", strings.Join(d.RequiredMCPServers, ", "))
	if d.Hooks != nil {
		line("hooks", string(d.Hooks))
	}
	if d.MaxTurns > 0 {
		line("maxTurns", fmt.Sprint(d.MaxTurns))
	}
	if !d.Budget.IsZero() {
		line("budget", d.Budget.String())
	}
	line("skills", strings.Join(d.Skills, ", "))
	line("memory", string(d.Memory))
	if d.Background {
		line("background", "true")
	}
	line("isolation", string(d.Isolation))
	line("color", d.Color)
	line("initialPrompt", d.InitialPrompt)
	if d.OmitInstructions {
		line("omitInstructions", "true")
	}
	if d.OneShot {
		line("oneShot", "true")
	}
	line("shadowedBy", d.ShadowedBy)
	for _, s := range d.Shadows {
		line("shadows", s)
	}
	for _, diag := range d.Diagnostics {
		line("diagnostic", diag.String())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, d.Body)
}

func newCheck(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Validate agent files and print problems as file:line: severity: message",
		Long: `Validate agent files or directories (recursively) and print every problem as
file:line: severity: message. Without paths, check everything cadre would load
for --cwd. Exits 1 when there is an error, 0 otherwise (warnings included).`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ds []agentdef.Diagnostic
			files, agents := 0, 0
			if len(args) == 0 {
				set, err := load(cmd.Context(), o)
				if err != nil {
					return err
				}
				ds = set.Diagnostics()
				for _, d := range set.All() {
					if d.Source != agentdef.SourceBuiltin {
						agents++
					}
				}
			} else {
				ctx := cmd.Context()
				if ctx == nil {
					ctx = context.Background()
				}
				res, err := agentdef.ParsePaths(ctx, args, agentdef.SourceProject)
				if err != nil {
					return &ExitError{Code: 1, Err: err}
				}
				ds, files, agents = res.Diagnostics, res.Files, len(res.Definitions)
			}
			sortDiagnostics(ds)
			for _, d := range ds {
				fmt.Fprintln(cmd.OutOrStdout(), d.String())
			}
			errs, warns := count(ds)
			if files > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d file(s), %d agent(s): %d error(s), %d warning(s)\n", files, agents, errs, warns)
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d agent(s): %d error(s), %d warning(s)\n", agents, errs, warns)
			}
			if errs > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("agent files have %d error(s)", errs)}
			}
			return nil
		},
	}
}

// closest returns up to n names nearest to name (case-insensitive edit
// distance, prefix and substring matches first), nearest first.
func closest(name string, names []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	ln := strings.ToLower(name)
	var cs []cand
	for _, c := range names {
		lc := strings.ToLower(c)
		d := textdist.Distance(ln, lc)
		if strings.Contains(lc, ln) || strings.Contains(ln, lc) {
			d = min(d, 1)
		}
		if d <= max(2, len(ln)/3) {
			cs = append(cs, cand{c, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}
