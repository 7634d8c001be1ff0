package config

import (
	"cmp"
	"context"
	"fmt"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
)

// Options says where Load looks and what the command line asked for. The
// zero value reads the settings and agent files of the working directory
// and nothing else: no home directory, no environment.
type Options struct {
	// Getenv is the environment Load reads: HOME, XDG_STATE_HOME,
	// XDG_CONFIG_HOME, CADRE_CLAUDE_MANAGED_DIR, the
	// provider's keys and base URLs (ANTHROPIC_*, OPENAI_*), CADRE_PROVIDER,
	// CADRE_MODEL, CADRE_SUBAGENT_MODEL, CADRE_SUBAGENT_MODEL_FORCE and
	// CADRE_FORK_SUBAGENT, CADRE_COORDINATOR_MODE, CADRE_AGENT_TEAMS,
	// CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS, CADRE_TEAM_SHUTDOWN_GRACE_MS, and for the web tools CADRE_SMALL_MODEL,
	// CADRE_SEARXNG_URL and BRAVE_SEARCH_API_KEY.
	// Settings files' env values are read over it. Nil means an empty
	// environment; the cadre command passes os.Getenv.
	Getenv func(string) string
	// Home is the user's home directory; "" means Getenv("HOME").
	Home string
	// SettingsFile is a settings file loaded above the project's
	// (--settings); relative to the working directory.
	SettingsFile string
	// SettingsJSON is --settings given as inline JSON instead of a path.
	SettingsJSON string
	// ManagedDir holds managed settings and managed agents (agents/);
	// "" means DefaultManagedDir.
	ManagedDir string
	// ClaudeManagedDir holds Claude Code's managed settings; "" means
	// Getenv("CADRE_CLAUDE_MANAGED_DIR"), then DefaultClaudeManagedDir.
	ClaudeManagedDir string
	// SettingSources limits the settings files read to these levels
	// (--setting-sources; see SettingsOptions.Sources); nil reads all.
	SettingSources []string
	// Model (--model) wins over CADRE_MODEL and the settings' model.
	Model string
	// PermissionMode (--permission-mode) and SkipPermissions
	// (--dangerously-skip-permissions) win over the settings' defaultMode.
	PermissionMode  string
	SkipPermissions bool
	// AllowBypass is --allow-dangerously-skip-permissions: the session
	// allows bypassPermissions, so an agent definition's declared
	// bypassPermissions applies under a default or dontAsk parent (S-10.3;
	// starting in bypassPermissions allows it too).
	AllowBypass bool
	// Rules are permission rules from flags (--allowedTools,
	// --disallowedTools), with behaviour and source set.
	Rules []permission.Rule
	// AddDirs are further working directories (--add-dir).
	AddDirs []string
	// Agents is the --agents value: an inline JSON object of agent
	// definitions, or a path to a file holding one.
	Agents string
	// TrustProject is --trust-project: the workspace's own settings may
	// widen this run (see Trust).
	TrustProject bool
	// TrustProjectHooks further limits which hooks of the project's
	// settings files run, in a workspace trust lets them (see Trust); nil
	// adds no limit.
	TrustProjectHooks TrustProject

	// MCP servers (issue 14, mcp.go).

	// MCPConfigs are the --mcp-config values (a JSON file, or inline
	// JSON), in order; StrictMCPConfig (--strict-mcp-config) uses only
	// their servers, not .mcp.json's or the settings files'.
	MCPConfigs      []string
	StrictMCPConfig bool

	// The Bash sandbox (issue 9, sandbox.go).

	// PluginDirs are Claude Code plugin directories (--plugin-dir,
	// --plugin-dir-no-mcp), loaded after the installed plugins
	// (plugins.go).
	PluginDirs []plugin.Dir

	// Sandbox is --sandbox: Bash runs in the sandbox for every agent,
	// whatever the settings' sandbox.enabled and backgroundOnly say (their
	// other sandbox keys apply).
	Sandbox bool

	// Remote is --remote: every sub-agent of the session runs remotely
	// (Config.Remote.All), through the Temporal server remote.temporal
	// names; without one, Load refuses.
	Remote bool
	// NewRemote, when set, makes the remote executor from remote.temporal
	// (Config.Remote.Executor) when the settings name a server; the CLI's
	// starts the cadre-remote bridge on first use. Without it, or without
	// remote.temporal, remote isolation is refused when asked for.
	NewRemote func(*Temporal) (cadre.RemoteExecutor, error)
}

// Load builds the configuration of a session in cwd ("" means the
// process's working directory): settings files, the provider and its
// model, aliases, the permission mode and rules, sub-agent limits and
// models, the agent definitions and the state directory. Problems with
// what the user wrote are errors that name the file or flag; the
// diagnostics are warnings (and agent definitions that did not load).
// Load does no network I/O.
//
// The caller sets what Load does not: the system prompt, turn limits,
// session id, transcripts off, a permission prompter.
func Load(ctx context.Context, cwd string, opts Options) (cadre.Config, []Diagnostic, error) {
	cwd, err := absDir(cwd)
	if err != nil {
		return cadre.Config{}, nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	home := cmp.Or(opts.Home, getenv("HOME"))
	s, diags, err := LoadSettings(opts.settingsOptions(cwd, home, getenv))
	if err != nil {
		return cadre.Config{}, diags, err
	}
	if len(s.Env) > 0 {
		// Settings env values apply to the run, over the process's own.
		outer := getenv
		getenv = func(k string) string {
			if v, ok := s.Env[k]; ok {
				return v
			}
			return outer(k)
		}
	}
	perms, pdiags, err := permissions(cwd, home, opts, s)
	diags = append(diags, pdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	// Plugins add hooks and MCP servers to the settings' (plugins.go).
	plugins, pldiags := s.addPlugins(home, opts.PluginDirs)
	diags = append(diags, pldiags...)
	// Before the provenance: MCP servers trust ignores are among its
	// ignored items.
	servers, untrustedServers, mdiags, err := mcpServers(cwd, opts, s, getenv) // mcp.go
	diags = append(diags, mdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	cfg := cadre.Config{
		Cwd: cwd, Home: home, AddDirs: s.Dirs(), Permissions: perms, Provenance: provenance(s, perms.Mode, opts),
		SubagentModel:      cmp.Or(getenv("CADRE_SUBAGENT_MODEL"), s.SubagentModel.Value),
		ForceSubagentModel: getenv("CADRE_SUBAGENT_MODEL_FORCE"),
		WorktreeBase:       cmp.Or(getenv("CADRE_WORKTREE_BASE"), s.WorktreeBase.Value),
		TaskListID:         cmp.Or(getenv(tasklist.EnvListID), getenv(tasklist.EnvClaudeListID)),
		Limits:             cadre.Limits{MaxDepth: s.MaxDepth.Value, MaxRunning: s.MaxConcurrentAgents.Value, MaxTotal: s.MaxTotalAgents.Value},
		StateDir:           stateDir(getenv, home),
		Budget:             s.Budget,
	}
	if len(s.ModelPrices) > 0 {
		cfg.Prices = pricing.Default().With(s.ModelPrices)
	}
	if cfg.Background, err = backgroundSetting(getenv, s); err != nil {
		return cadre.Config{}, diags, err
	}
	// CADRE_FORK_SUBAGENT over the settings' forkSubagent (S-6.1).
	if cfg.ForkSubagent, err = envBool(getenv, "CADRE_FORK_SUBAGENT", s.ForkSubagent.Value); err != nil {
		return cadre.Config{}, diags, err
	}
	if cfg.Compaction, err = compaction(getenv, *s); err != nil { // compact.go
		return cadre.Config{}, diags, err
	}
	// CADRE_COORDINATOR_MODE over the settings' coordinatorMode (S-11.2;
	// Claude Code's variable is CLAUDE_CODE_COORDINATOR_MODE).
	if cfg.Coordinator, err = envBool(getenv, "CADRE_COORDINATOR_MODE", s.CoordinatorMode.Value); err != nil {
		return cadre.Config{}, diags, err
	}
	if err := teams(getenv, *s, &cfg); err != nil { // teams.go (issue 25)
		return cadre.Config{}, diags, err
	}
	if err := setModel(&cfg, opts, s, getenv); err != nil {
		return cadre.Config{}, diags, err
	}
	cfg.MCPServers, cfg.MCPOptions = servers, mcpx.OptionsFromEnv(getenv)
	cfg.Sandbox = s.SandboxConfig(opts.Sandbox, getenv) // sandbox.go (issue 9)
	// Remote agents and --remote (remote.go, issue 26).
	rdiag, err := remoteConfig(&cfg, s, opts, getenv)
	diags = append(diags, rdiag...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	managed := cmp.Or(opts.ManagedDir, DefaultManagedDir)
	defs, err := agentdef.Load(ctx, agentdef.LoadOptions{Cwd: cwd, Home: home, FlagAgents: opts.Agents, ManagedDir: filepath.Join(managed, "agents"), Plugins: plugins.agents})
	if err != nil {
		return cadre.Config{}, diags, fmt.Errorf("agent definitions: %w", err)
	}
	for _, d := range defs.Diagnostics() {
		diags = append(diags, Diagnostic{File: d.File, Line: d.Line, Severity: Severity(d.Severity), Topic: TopicAgents, Message: d.Message})
	}
	// Issue 9: workspace agents' hooks and servers need trust, and the
	// mcp__ rules are checked now that the servers are known.
	cfg.Agents = gateAgents(defs.Active(), s.Trust)
	rdiags, err := checkMCPRules(perms.Rules, servers, untrustedServers, defs.Active())
	diags = append(diags, rdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	// Hooks (issue 15): every settings file's, under the hook policy.
	// Project files' hooks are kept apart (HooksConfig's trust) so
	// workspace trust can gate them.
	// Workspace trust (issue 9) decides first: an untrusted workspace's
	// hooks were dropped and reported while loading (Trust.filter).
	hk, hdiags, err := s.GatedHooksConfig(opts.TrustProjectHooks)
	diags = append(diags, hdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	cfg.Hooks = hk
	// The web tools and skills (web.go, skills.go).
	wdiags, err := configureWeb(&cfg, s, getenv)
	diags = append(diags, wdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	sdiags, err := configureSkills(ctx, &cfg, cwd, home, plugins.skills)
	diags = append(diags, sdiags...)
	if err != nil {
		return cadre.Config{}, diags, err
	}
	diags = append(diags, s.Trust.Report()...) // what the gates refused after LoadSettings
	cfg.Provenance.Ignored = s.Trust.Ignored()
	return cfg, diags, nil
}

// settingsOptions are the options LoadSettings gets from Load.
func (opts Options) settingsOptions(cwd, home string, getenv func(string) string) SettingsOptions {
	return SettingsOptions{
		Cwd: cwd, Home: home, SettingsFile: opts.SettingsFile, SettingsJSON: opts.SettingsJSON, ManagedDir: opts.ManagedDir,
		ClaudeManagedDir: cmp.Or(opts.ClaudeManagedDir, getenv("CADRE_CLAUDE_MANAGED_DIR")), ConfigHome: getenv("XDG_CONFIG_HOME"),
		Flags: Flags{Rules: opts.Rules, AddDirs: opts.AddDirs}, TrustProject: opts.TrustProject, Sources: opts.SettingSources,
	}
}

// Effective loads the settings files as Load does, without building a
// session (no provider key is needed), and returns every effective entry
// with the file it came from (`cadre config`): what workspace trust kept
// out — hooks and MCP servers included — is not among them, and is
// reported in the diagnostics.
func Effective(ctx context.Context, cwd string, opts Options) ([]Entry, []Diagnostic, error) {
	cwd, err := absDir(cwd)
	if err != nil {
		return nil, nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	home := cmp.Or(opts.Home, getenv("HOME"))
	s, diags, err := LoadSettings(opts.settingsOptions(cwd, home, getenv))
	if err != nil {
		return nil, diags, err
	}
	// The loaders that gate items one by one, as Load runs them.
	_, _, mdiags, err := mcpServers(cwd, opts, s, getenv)
	diags = append(diags, mdiags...)
	if err != nil {
		return nil, diags, err
	}
	_, hdiags, err := s.GatedHooksConfig(opts.TrustProjectHooks)
	diags = append(diags, hdiags...)
	if err != nil {
		return nil, diags, err
	}
	return s.Effective(), append(diags, s.Trust.Report()...), nil
}

// absDir makes cwd absolute ("" is the process's working directory) and
// checks that it is a directory.
func absDir(cwd string) (string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("working directory %s: not a directory", cwd)
	}
	return abs, nil
}

// permissions resolves the mode and rules, and reports rules that can
// never apply.
func permissions(cwd, home string, opts Options, s *Settings) (*cadre.Permissions, []Diagnostic, error) {
	mode, err := ResolveMode(opts.PermissionMode, opts.SkipPermissions, s)
	if err != nil {
		return nil, nil, err
	}
	checker, err := permission.NewChecker(permission.Config{Mode: mode, Rules: s.Permissions.Rules, Cwd: cwd, Home: home})
	if err != nil {
		return nil, nil, err
	}
	var diags []Diagnostic
	for _, w := range checker.Warnings() {
		diags = append(diags, Diagnostic{Severity: SeverityWarning, Topic: TopicPermissions, Message: w})
	}
	return &cadre.Permissions{Mode: mode, Rules: s.Permissions.Rules,
		Limits: permission.SessionLimits{DisableBypass: s.Permissions.DisableBypass,
			AllowBypass: !s.Permissions.DisableBypass && (opts.AllowBypass || mode == permission.ModeBypassPermissions)}}, diags, nil
}

// setModel chooses the provider and the main model, builds the client and
// the alias resolver.
func setModel(cfg *cadre.Config, opts Options, s *Settings, getenv func(string) string) error {
	provider, err := ChooseProvider(s.Provider.Value, getenv)
	if err != nil {
		return err
	}
	model, err := NewModel(provider, getenv)
	if err != nil {
		return err
	}
	aliases := Aliases{Provider: provider, Settings: s.ModelAliases}
	cfg.Model = model
	cfg.Telemetry.Provider = string(provider) // gen_ai.provider.name, should telemetry be on
	cfg.ModelID = aliases.ModelID(cmp.Or(opts.Model, getenv("CADRE_MODEL"), s.Model.Value))
	cfg.ResolveModel = aliases.Resolve
	return nil
}

// stateDir is cadre's state directory: $XDG_STATE_HOME/cadre, or
// ~/.local/state/cadre; "" without either (cadre.New then asks for one
// unless transcripts are off).
func stateDir(getenv func(string) string, home string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "cadre")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "cadre")
}
