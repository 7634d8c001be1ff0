// Package trustcmd is the `cadre trust` command: record that a workspace
// is trusted, so that its own settings may widen what cadre does (allow
// rules, a mode above default, env entries, hooks, MCP servers), list the
// trusted workspaces, and take trust back (S-10.4).
package trustcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
)

type options struct {
	list, remove bool
}

// New returns the `trust` command.
func New() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "trust [dir]",
		Short: "Trust a workspace: let its own settings widen what cadre may do",
		Long: `A repository's own settings (.cadre/settings.json, .cadre/settings.local.json,
.mcp.json, agent files) can always narrow what cadre does: deny and ask rules,
a stricter mode. What widens it — allow rules, a permission mode above default,
directories outside the repository, env entries that change the provider's
endpoint or credentials, hooks and MCP servers that run commands — applies only
in a workspace you trust. Untrusted, each such entry is ignored and reported.

cadre trust [dir] trusts dir (default: the current directory) and everything
below it, recorded in ~/.config/cadre/` + config.TrustFileName + ` (in
$XDG_CONFIG_HOME/cadre when XDG_CONFIG_HOME is set, unless only
~/.config/cadre exists).
--trust-project trusts the workspace for one run; trustedWorkspaces in your
user or managed settings trusts the directories it lists.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := os.UserHomeDir()
			if err != nil {
				return fail(fmt.Errorf("home directory: %w", err))
			}
			file := config.TrustFileIn(home, os.Getenv("XDG_CONFIG_HOME"))
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			out := cmd.OutOrStdout()
			switch {
			case o.list && o.remove:
				return fail(errors.New("--list and --remove cannot be used together"))
			case o.list:
				if len(args) > 0 {
					return fail(errors.New("--list takes no directory"))
				}
				dirs, err := config.TrustedWorkspacesIn(file)
				if err != nil {
					return fail(err)
				}
				if len(dirs) == 0 {
					// On stderr: stdout stays a list of directories.
					fmt.Fprintf(cmd.ErrOrStderr(), "No workspace is trusted (cadre trust DIR trusts one; they are recorded in %s).\n", file)
				}
				for _, d := range dirs {
					fmt.Fprintln(out, d)
				}
				return nil
			case o.remove:
				abs, err := filepath.Abs(dir)
				if err != nil {
					return fail(fmt.Errorf("untrust %s: %w", dir, err))
				}
				ok, err := config.UntrustWorkspaceIn(file, abs)
				if err != nil {
					return fail(err)
				}
				if !ok {
					return fail(fmt.Errorf("%s is not in %s (cadre trust --list shows what is)", abs, file))
				}
				fmt.Fprintf(out, "no longer trusted: %s\n", abs)
				return nil
			}
			abs, err := config.TrustWorkspaceIn(file, dir)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(out, "trusted: %s (recorded in %s)\nIts settings may now widen what cadre does: allow rules, a mode above default, env, hooks, MCP servers.\n", abs, file)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.list, "list", false, "list the trusted workspaces")
	cmd.Flags().BoolVar(&o.remove, "remove", false, "take trust back from dir")
	return cmd
}

// fail wraps an error so that cadre exits 1 with its message.
func fail(err error) error { return &agentscmd.ExitError{Code: 1, Err: err} }
