// Package remotecmd is the command line of cadre-remote, the companion
// binary that holds everything of Temporal: `worker` (runs agents for a
// task queue) and `bridge` (the launcher's Temporal client, spoken to
// over stdio by the cadre binary's remote executor).
package remotecmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/telemetry/otelsetup"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// Main runs cadre-remote with args and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "worker":
		err = worker(args[1:], stderr)
	case "bridge":
		err = bridgeCmd(args[1:], stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cadre-remote: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "cadre-remote %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

const usage = `usage: cadre-remote worker [flags]   run remote agents for a Temporal task queue
       cadre-remote bridge [flags]   the launcher's Temporal client, over stdio (cadre starts it)
Run "cadre-remote worker -h" for the worker's flags.`

// connFlags are the flags of a Temporal connection, shared by worker and
// bridge.
type connFlags struct {
	address, namespace, queue         string
	tlsOn                             bool
	tlsCert, tlsKey, tlsCA, tlsServer string
	apiKey                            string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.address, "address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (env TEMPORAL_ADDRESS)")
	fs.StringVar(&c.namespace, "namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (env TEMPORAL_NAMESPACE)")
	fs.StringVar(&c.queue, "task-queue", envOr("CADRE_TASK_QUEUE", "cadre"), "task queue of the agents (env CADRE_TASK_QUEUE)")
	fs.BoolVar(&c.tlsOn, "tls", false, "connect with TLS (implied by the other --tls-* flags and by an API key)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "client certificate file (mTLS)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "client key file (mTLS)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA certificate file the server's certificate is checked against")
	fs.StringVar(&c.tlsServer, "tls-server-name", "", "server name the certificate must carry")
	fs.StringVar(&c.apiKey, "api-key", "", "Temporal API key (prefer env TEMPORAL_API_KEY: flags show in ps)")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// options builds the client options.
func (c *connFlags) options(logger log.Logger) (client.Options, error) {
	o := client.Options{HostPort: c.address, Namespace: c.namespace, Logger: logger}
	key := c.apiKey
	if key == "" {
		key = os.Getenv("TEMPORAL_API_KEY")
	}
	if key != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	if c.tlsOn || c.tlsCert != "" || c.tlsKey != "" || c.tlsCA != "" || c.tlsServer != "" || key != "" {
		cfg := &tls.Config{ServerName: c.tlsServer, MinVersion: tls.VersionTLS12}
		if (c.tlsCert == "") != (c.tlsKey == "") {
			return o, errors.New("--tls-cert and --tls-key go together")
		}
		if c.tlsCert != "" {
			cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
			if err != nil {
				return o, fmt.Errorf("load the TLS client certificate: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		if c.tlsCA != "" {
			pem, err := os.ReadFile(c.tlsCA)
			if err != nil {
				return o, fmt.Errorf("read the TLS CA: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return o, fmt.Errorf("the TLS CA file %s holds no PEM certificate", c.tlsCA)
			}
			cfg.RootCAs = pool
		}
		o.ConnectionOptions.TLS = cfg
	}
	return o, nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// workerFlags are the flags of `cadre-remote worker`.
type workerFlags struct {
	conn      connFlags
	maxAgents int
	maxMode   string
	deny, ask listFlag
	repos     listFlag
	id        string
	wait      time.Duration
	// settingsFiles are the worker's own settings (settings.go).
	settingsFiles listFlag
}

// WorkerFlags returns the flag set of `cadre-remote worker` (its names
// are those `cadre worker --help` lists).
func WorkerFlags() *flag.FlagSet {
	fs, _ := newWorkerFlags()
	return fs
}

func newWorkerFlags() (*flag.FlagSet, *workerFlags) {
	fs := flag.NewFlagSet("cadre-remote worker", flag.ContinueOnError)
	o := &workerFlags{}
	o.conn.register(fs)
	fs.IntVar(&o.maxAgents, "max-agents", 0, "agents this worker works on at once, over its shared queue and its own (0: the SDK's default)")
	fs.StringVar(&o.maxMode, "max-permission-mode", "", "the most permissive mode any agent gets on this worker (default, acceptEdits, plan, dontAsk, bypassPermissions)")
	fs.Var(&o.deny, "deny", "a permission rule denied to every agent on this worker, e.g. 'Bash(rm:*)' (repeatable)")
	fs.Var(&o.repos, "repo", "a clone (or a directory of clones) remote agents may work in, in fresh worktrees; without one the worker refuses agents that work in the launcher's repository (repeatable)")
	fs.StringVar(&o.id, "worker-id", "", "this worker's name, unique on the task queue; its own queue is <task-queue>/<worker-id> (default host-pid)")
	fs.DurationVar(&o.wait, "workspace-wait", agentwf.DefaultPlacementWait, "how long a call of an agent whose tree this worker holds may wait for it before the agent fails taking it for gone")
	fs.Var(&o.ask, "ask", "a permission rule every agent must ask for — on a worker nobody can answer, so a deny (repeatable)")
	fs.Var(&o.settingsFiles, "settings", "a settings file of this worker's own: its hooks run around every tool call of its agents, its mcpServers are the MCP servers agents get by name (repeatable; the launcher's never travel)")
	return fs, o
}

// worker runs `cadre-remote worker`.
func worker(args []string, stderr io.Writer) error {
	fs, o := newWorkerFlags()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	conn, maxAgents, maxMode, deny, ask := o.conn, &o.maxAgents, &o.maxMode, o.deny, o.ask
	if *maxAgents < 0 {
		return fmt.Errorf("--max-agents %d: must be 0 (no cap) or more", *maxAgents)
	}
	acts := &agentwf.Activities{Tools: builtin.Tools(builtin.Config{})}
	if *maxMode != "" {
		m, err := permission.ParseMode(*maxMode)
		if err != nil {
			return fmt.Errorf("--max-permission-mode: %w", err)
		}
		acts.MaxMode = m
	}
	for _, set := range []struct {
		b     permission.Behavior
		rules []string
	}{{permission.Deny, deny}, {permission.Deny, ask}} {
		rules, err := permission.ParseRules(set.b, "worker", "", set.rules)
		if err != nil {
			return fmt.Errorf("worker permission rule: %w", err)
		}
		acts.Rules = append(acts.Rules, rules...)
	}
	m, err := anthropic.New(anthropic.Config{APIKey: os.Getenv("ANTHROPIC_API_KEY"), AuthToken: os.Getenv("ANTHROPIC_AUTH_TOKEN"), BaseURL: os.Getenv("ANTHROPIC_BASE_URL")})
	if err != nil {
		return fmt.Errorf("the worker's model provider: %w", err)
	}
	acts.Model = m
	if err := o.workspaces(acts); err != nil {
		return err
	}
	stopMCP, err := o.settings(acts, stderr) // settings.go
	if err != nil {
		return err
	}
	defer stopMCP()
	// Telemetry from the worker's own OTEL_* variables: its spans join
	// the trace each agent's spawn request carries (agentwf/telemetry.go).
	set, flush, terr := otelsetup.Setup(context.Background(), os.Getenv, "cadre-remote", sdktrace.WithIDGenerator(telemetry.RemoteIDs{}))
	if terr != nil {
		fmt.Fprintf(stderr, "cadre-remote worker: telemetry: %v\n", terr)
	}
	set.Provider = "anthropic"
	acts.Tel = telemetry.New(set, "", nil)
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := flush(fctx); err != nil {
			fmt.Fprintf(stderr, "cadre-remote worker: telemetry: %v\n", err)
		}
	}()
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	opts, err := conn.options(logger)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", conn.address, err)
	}
	defer c.Close()
	w := agentwf.NewWorker(c, agentwf.WorkerOptions{TaskQueue: conn.queue, MaxAgents: *maxAgents, Activities: acts})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start the worker on %s: %w", conn.queue, err)
	}
	fmt.Fprintf(stderr, "cadre-remote worker: serving task queue %q of namespace %q at %s\n", conn.queue, conn.namespace, conn.address)
	if acts.OwnQueue != "" {
		fmt.Fprintf(stderr, "cadre-remote worker %s: workspaces in %s; own queue %q\n", acts.WorkerID, strings.Join(o.repos, ", "), acts.OwnQueue)
	}
	<-ctx.Done()
	// Stop hands the calls in flight back: their contexts end and the
	// server gives them to another worker; completed calls stay recorded.
	w.Stop()
	fmt.Fprintln(stderr, "cadre-remote worker: stopped")
	return nil
}

// workspaces gives acts the worker's clones (--repo), its name and own
// queue.
func (o *workerFlags) workspaces(acts *agentwf.Activities) error {
	acts.WorkerID = o.id
	if acts.WorkerID == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "worker"
		}
		acts.WorkerID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if strings.ContainsAny(acts.WorkerID, "/ \t\n") {
		return fmt.Errorf("--worker-id %q: no slash or space", acts.WorkerID)
	}
	if len(o.repos) == 0 {
		return nil
	}
	if o.wait <= 0 {
		return fmt.Errorf("--workspace-wait %s: must be positive", o.wait)
	}
	p, err := workspace.NewPool(workspace.Config{Roots: o.repos})
	if err != nil {
		return fmt.Errorf("--repo: %w", err)
	}
	acts.Pool, acts.Wait = p, o.wait
	acts.OwnQueue = agentwf.OwnQueue(o.conn.queue, acts.WorkerID)
	return nil
}

// bridgeCmd is in bridge.go.
