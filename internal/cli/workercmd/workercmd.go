// Package workercmd is the `cadre worker` command: it runs `cadre-remote
// worker` with the same arguments as its child (the Temporal SDK lives in
// that companion binary alone, so cadre's own start stays light), passes
// SIGTERM and SIGINT on as SIGTERM (the worker's clean stop), and exits
// with its exit code.
package workercmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/proclife"
	"github.com/cadre-dev/cadre/internal/remote/remotebin"
)

// New returns the `worker` command. Its flags are declared for --help
// only: cadre-remote parses them (remotecmd's test holds the two lists
// together).
func New() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker [flags]",
		Short: "Run remote agents for a Temporal task queue (runs cadre-remote worker)",
		Long: `cadre worker connects to a Temporal server and runs the remote agents of its
task queue with its own provider key (ANTHROPIC_API_KEY in its environment,
never sent through Temporal) and its own permission ceiling. It runs
cadre-remote worker, found in $CADRE_REMOTE_BIN, beside cadre, or on PATH.`,
		DisableFlagParsing: true,
		SilenceUsage:       true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
				return cmd.Help()
			}
			bin, err := remotebin.Find(nil)
			if err != nil {
				return err
			}
			// A child, not an exec: cadre's reaper (internal/proclife)
			// ends what cadre started if cadre is killed, the worker too.
			// SIGTERM and SIGINT reach the worker as SIGTERM, its clean
			// stop, however long that takes.
			c := exec.Command(bin, append([]string{"worker"}, args...)...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			c.SysProcAttr = &syscall.SysProcAttr{}
			proclife.SetParentDeathSignal(c.SysProcAttr)
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
			defer signal.Stop(sigs)
			if err := c.Start(); err != nil {
				return fmt.Errorf("run %s: %w", bin, err)
			}
			exited := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-sigs:
						_ = c.Process.Signal(syscall.SIGTERM)
					case <-exited:
						return
					}
				}
			})
			err = c.Wait()
			close(exited)
			wg.Wait()
			var ee *exec.ExitError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ee):
				return &agentscmd.ExitError{Code: max(ee.ExitCode(), 1)}
			}
			return fmt.Errorf("run %s: %w", bin, err)
		},
	}
	f := cmd.Flags()
	f.String("address", "127.0.0.1:7233", "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	f.String("namespace", "default", "Temporal namespace (env TEMPORAL_NAMESPACE)")
	f.String("task-queue", "cadre", "task queue of the agents (env CADRE_TASK_QUEUE)")
	f.Bool("tls", false, "connect with TLS (implied by the other --tls-* flags and by an API key)")
	f.String("tls-cert", "", "client certificate file (mTLS)")
	f.String("tls-key", "", "client key file (mTLS)")
	f.String("tls-ca", "", "CA certificate file the server's certificate is checked against")
	f.String("tls-server-name", "", "server name the certificate must carry")
	f.String("api-key", "", "Temporal API key (prefer env TEMPORAL_API_KEY: flags show in ps)")
	f.Int("max-agents", 0, "agents this worker works on at once (0: the SDK's default)")
	f.String("max-permission-mode", "", "the most permissive mode any agent gets on this worker")
	f.StringArray("deny", nil, "a permission rule denied to every agent on this worker (repeatable)")
	f.StringArray("ask", nil, "a rule every agent must ask for; nobody can answer on a worker, so a deny (repeatable)")
	f.StringArray("repo", nil, "a clone (or a directory of clones) remote agents may work in, in fresh worktrees; without one the worker refuses agents that work in the launcher's repository (repeatable)")
	f.String("worker-id", "", "this worker's name, unique on the task queue; its own queue is <task-queue>/<worker-id> (default host-pid)")
	f.StringArray("settings", nil, "a settings file of this worker's own: its hooks run around every tool call of its agents, its mcpServers are the MCP servers agents get by name (repeatable; the launcher's never travel)")
	f.Duration("workspace-wait", time.Minute, "how long a call of an agent whose tree this worker holds may wait for it before the agent fails taking it for gone")
	return cmd
}
