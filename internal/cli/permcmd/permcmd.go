// Package permcmd is the `cadre permissions` command and the helpers the
// root command uses for its permission flags.
package permcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/permission"
)

// New returns the `permissions` command with its `check` subcommand.
func New() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "Inspect permission decisions",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCheck())
	return cmd
}

type checkOptions struct {
	tool, input, mode, cwd, home, settingsFile, managedDir string
	allow, deny, ask, addDirs                              []string
	readOnly, sandbox, trustProject                        bool
}

func newCheck() *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check --tool NAME --input JSON",
		Short: "Print the decision for one tool call as JSON",
		Long: `Decide one tool call with the settings files of --cwd and the given flags,
and print {"decision","rule","source","reason"} as JSON. Exits 0 whatever the decision.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, warnings, err := runCheck(o)
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			return enc.Encode(struct {
				Decision permission.Behavior `json:"decision"`
				Rule     string              `json:"rule"`
				Source   string              `json:"source"`
				Reason   string              `json:"reason"`
			}{d.Behavior, d.Rule, d.Source, d.Reason})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tool, "tool", "", "tool name (Bash, Read, Edit, mcp__server__tool, ...)")
	f.StringVar(&o.input, "input", "{}", "the call's JSON input")
	f.StringVar(&o.mode, "mode", "", "permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions)")
	f.StringVar(&o.cwd, "cwd", "", "working directory and project root (default: current directory)")
	f.StringArrayVar(&o.allow, "allow", nil, "allow rule (repeatable)")
	f.StringArrayVar(&o.deny, "deny", nil, "deny rule (repeatable)")
	f.StringArrayVar(&o.ask, "ask", nil, "ask rule (repeatable)")
	f.StringArrayVar(&o.addDirs, "add-dir", nil, "additional working directory (repeatable)")
	f.StringVar(&o.settingsFile, "settings", "", "extra settings file")
	f.BoolVar(&o.readOnly, "read-only", false, "the tool claims to be read-only (for tools other than the built-ins)")
	f.BoolVar(&o.trustProject, "trust-project", false, "decide as in a trusted workspace: the project's allow rules and mode apply (see cadre trust)")
	f.BoolVar(&o.sandbox, "sandbox", false, "decide as if Bash ran in the OS sandbox, with the paths deny rules protect masked")
	f.StringVar(&o.home, "home", "", "home directory (default: $HOME)")
	f.StringVar(&o.managedDir, "managed-dir", "", "directory of managed settings (default: /etc/cadre)")
	_ = f.MarkHidden("home")
	_ = f.MarkHidden("managed-dir")
	_ = cmd.MarkFlagRequired("tool")
	return cmd
}

func runCheck(o checkOptions) (permission.Decision, []string, error) {
	var d permission.Decision
	if !json.Valid([]byte(o.input)) {
		return d, nil, fmt.Errorf("--input is not valid JSON: %s", o.input)
	}
	cwd := o.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return d, nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return d, nil, fmt.Errorf("--cwd: %w", err)
	}
	home := o.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	var mode permission.Mode
	if o.mode != "" {
		if mode, err = permission.ParseMode(o.mode); err != nil {
			return d, nil, fmt.Errorf("--mode: %w", err)
		}
	}
	var rules []permission.Rule
	for _, set := range []struct {
		b    permission.Behavior
		flag string
		list []string
	}{{permission.Allow, "--allow", o.allow}, {permission.Deny, "--deny", o.deny}, {permission.Ask, "--ask", o.ask}} {
		rs, err := permission.ParseRules(set.b, set.flag, cwd, set.list)
		if err != nil {
			return d, nil, fmt.Errorf("%s: %w (rules look like Bash, Bash(npm test:*), Read(./src/**), mcp__server__tool, Agent(Explore))", set.flag, err)
		}
		rules = append(rules, rs...)
	}
	s, diags, err := config.LoadSettings(config.SettingsOptions{
		Cwd: cwd, Home: home, SettingsFile: o.settingsFile, ManagedDir: o.managedDir, TrustProject: o.trustProject,
		Flags:      config.Flags{Rules: rules, Mode: mode, AddDirs: o.addDirs},
		ConfigHome: os.Getenv("XDG_CONFIG_HOME"), ClaudeManagedDir: os.Getenv("CADRE_CLAUDE_MANAGED_DIR"),
	})
	if err != nil {
		return d, nil, err
	}
	var warnings []string
	for _, dg := range diags {
		warnings = append(warnings, dg.String())
	}
	cfg := s.PermissionConfig(cwd, home, "")
	// Decide as the session would: sandboxed with --sandbox, or when the
	// settings confine every agent (issue 9).
	if sb := s.SandboxConfig(o.sandbox, os.Getenv); sb != nil && !sb.BackgroundOnly {
		cfg.Sandbox = &permission.Sandbox{Writable: sb.Writable}
	}
	c, err := permission.NewChecker(cfg)
	if err != nil {
		return d, warnings, err
	}
	warnings = append(warnings, c.Warnings()...)
	return c.Check(permission.Request{Tool: o.tool, Input: json.RawMessage(o.input), ReadOnly: o.readOnly, Cwd: cwd, Dirs: cfg.Dirs}), warnings, nil
}

// FlagRules turns --allowedTools and --disallowedTools values into rules.
// Each value may hold several rules separated by commas or spaces outside
// parentheses, as in Claude Code. A rule naming no known tool is an error
// with a did-you-mean (permission.CheckRuleNames): it was typed just now,
// and a denial that protects nothing must not pass silently.
func FlagRules(allowed, disallowed []string) ([]permission.Rule, error) {
	var out []permission.Rule
	for _, set := range []struct {
		b    permission.Behavior
		src  string
		vals []string
	}{{permission.Allow, permission.SourceAllowedTools, allowed}, {permission.Deny, permission.SourceDisallowedTools, disallowed}} {
		for _, v := range set.vals {
			rs, err := permission.ParseRules(set.b, set.src, "", permission.SplitToolList(v))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", set.src, err)
			}
			out = append(out, rs...)
		}
	}
	if errs := permission.CheckRuleNames(out, nil); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// SplitFlagList splits repeated flag values on commas and spaces outside
// parentheses (for --allowedTools "Bash(git log:*) Read").
func SplitFlagList(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, permission.SplitToolList(v)...)
	}
	return out
}

// Describe renders a decision for logs: "allow (Bash(npm test:*) from
// .cadre/settings.json)".
func Describe(d permission.Decision) string {
	if d.Rule == "" {
		return fmt.Sprintf("%s: %s", d.Behavior, d.Reason)
	}
	return fmt.Sprintf("%s (%s from %s): %s", d.Behavior, d.Rule, strings.TrimSpace(d.Source), d.Reason)
}
