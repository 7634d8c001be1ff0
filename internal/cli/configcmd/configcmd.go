// Package configcmd is the `cadre config` command: it prints every
// effective settings entry of a session in a directory — from cadre's and
// Claude Code's settings files alike — with the file it came from.
package configcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
)

type options struct {
	cwd, home, settings, managedDir string
	json, trustProject              bool
}

// Output is what --json prints.
type Output struct {
	// Entries are the effective entries, by key.
	Entries []config.Entry `json:"entries"`
	// Diagnostics are the loaders' warnings (also on stderr).
	Diagnostics []string `json:"diagnostics"`
}

// New returns the `config` command.
func New() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print every effective setting with the file it came from",
		Long: `Print the settings a session started in --cwd would use: every effective entry of
every settings file — cadre's (~/.config/cadre or $XDG_CONFIG_HOME/cadre,
.cadre/) and Claude Code's (~/.claude/settings.json, .claude/settings.json,
.claude/settings.local.json, /etc/claude-code/managed-settings.json) — merged
with their precedence (managed > --settings > project local > project > user;
at one level cadre's file wins a clash), with the file each came from.

A list (permission rules, additional directories) shows one entry per item; an
object such as env or hooks one per member. What an untrusted workspace may not
set is left out and reported on stderr; an entry cadre reads but does not act
on says why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print JSON: {entries: [{key, value, source, note}], diagnostics: [...]}")
	f.StringVar(&o.cwd, "cwd", "", "directory of the session (default: the current directory)")
	f.StringVar(&o.settings, "settings", "", "a further settings file, or inline JSON, as the root command's --settings")
	f.BoolVar(&o.trustProject, "trust-project", false, "show the settings as if the workspace were trusted (as the root command's --trust-project)")
	f.StringVar(&o.home, "home", "", "home directory (default: $HOME)")
	f.StringVar(&o.managedDir, "managed-dir", "", "directory of cadre's managed settings (default: /etc/cadre)")
	_ = f.MarkHidden("home")
	_ = f.MarkHidden("managed-dir")
	return cmd
}

func run(cmd *cobra.Command, o options) error {
	opts := config.Options{Getenv: os.Getenv, Home: o.home, ManagedDir: o.managedDir, TrustProject: o.trustProject, SettingsFile: o.settings}
	if v := strings.TrimSpace(o.settings); strings.HasPrefix(v, "{") {
		opts.SettingsJSON, opts.SettingsFile = v, ""
	}
	entries, diags, err := config.Effective(cmd.Context(), o.cwd, opts)
	out := Output{Entries: entries, Diagnostics: []string{}}
	for _, d := range diags {
		fmt.Fprintln(cmd.ErrOrStderr(), "cadre: "+d.String())
		out.Diagnostics = append(out.Diagnostics, d.String())
	}
	if err != nil {
		return &agentscmd.ExitError{Code: 2, Err: err}
	}
	if out.Entries == nil {
		out.Entries = []config.Entry{}
	}
	w := cmd.OutOrStdout()
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printText(w, entries)
}

// printText prints one entry a line: key = value, then its file, and why
// it has no effect when it has none.
func printText(w io.Writer, entries []config.Entry) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "No settings: no settings file sets anything.")
		return err
	}
	for _, e := range entries {
		line := fmt.Sprintf("%s = %s\t(%s)", e.Key, e.Value, e.Source)
		if e.Note != "" {
			line += "\tno effect: " + e.Note
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
