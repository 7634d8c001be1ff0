// Package trustcmd is the `cadre trust` command: record that a workspace
// is trusted, so that its own settings may widen what cadre does (allow
// rules, a mode above default, env entries, hooks, MCP servers), list the
// trusted workspaces, and take trust back (S-10.4).
package trustcmd

import (
	"errors"
	"fmt"
	"os"

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
below it, recorded in ~/.config/cadre/` + config.TrustFileName + `.
--trust-project trusts the workspace for one run; trustedWorkspaces in your
user or managed settings trusts the directories it lists.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := os.UserHomeDir()
			if err != nil {
				return fail(fmt.Errorf("home directory: %w", err))
			}
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
				dirs, err := config.TrustedWorkspaces(home)
				if err != nil {
					return fail(err)
				}
				for _, d := range dirs {
					fmt.Fprintln(out, d)
				}
				return nil
			case o.remove:
				ok, err := config.UntrustWorkspace(home, dir)
				if err != nil {
					return fail(err)
				}
				if !ok {
					return fail(fmt.Errorf("%s is not in %s (cadre trust --list shows what is)", dir, config.TrustFile(home)))
				}
				fmt.Fprintf(out, "no longer trusted: %s\n", dir)
				return nil
			}
			abs, err := config.TrustWorkspace(home, dir)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(out, "trusted: %s (recorded in %s)\nIts settings may now widen what cadre does: allow rules, a mode above default, env, hooks, MCP servers.\n", abs, config.TrustFile(home))
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.list, "list", false, "list the trusted workspaces")
	cmd.Flags().BoolVar(&o.remove, "remove", false, "take trust back from dir")
	return cmd
}

// fail wraps an error so that cadre exits 1 with its message.
func fail(err error) error { return &agentscmd.ExitError{Code: 1, Err: err} }
