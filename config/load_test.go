package config

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool/builtin"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// loadIn writes files into a fresh tree and loads the configuration of its
// project directory with env.
//
//lint:ignore ST1008 test helper: the tree comes after the error so the many callers that drop it end in ", _"
func loadIn(t *testing.T, files map[string]string, env map[string]string, opts Options) (cadre.Config, []Diagnostic, error, tree) {
	t.Helper()
	tr := newTree(t, files)
	env = withDefault(env, "HOME", tr.home)
	opts.Getenv = envOf(env)
	opts.ManagedDir = tr.managed
	if opts.ClaudeManagedDir == "" {
		opts.ClaudeManagedDir = filepath.Join(tr.managed, "claude-code")
	}
	cfg, diags, err := Load(context.Background(), tr.cwd, opts)
	return cfg, diags, err, tr
}

func withDefault(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}

var anthropicKey = map[string]string{"ANTHROPIC_API_KEY": "k"}

// TestEveryKeyIsWiredOrReported lists every settings key cadre knows and
// what it drives: a file that sets it changes the Config that Load
// returns, or gets a warning saying why it does nothing. A key added to
// Keys without a case here fails the test.
func TestEveryKeyIsWiredOrReported(t *testing.T) {
	type check func(t *testing.T, cfg cadre.Config, tr tree)
	hasRule := func(b permission.Behavior, rule string) check {
		return func(t *testing.T, cfg cadre.Config, _ tree) {
			if !slices.ContainsFunc(cfg.Permissions.Rules, func(r permission.Rule) bool { return r.Behavior == b && r.String() == rule }) {
				t.Errorf("no %s rule %s in %+v", b, rule, cfg.Permissions.Rules)
			}
		}
	}
	// A home where Claude Code installed the agent-teams fixture plugin,
	// for enabledPlugins.
	pluginHome := t.TempDir()
	fixture, err := filepath.Abs(filepath.Join("..", "internal", "plugin", "testdata", "agent-teams"))
	if err != nil {
		t.Fatal(err)
	}
	installed, _ := json.Marshal(map[string]any{"version": 2, "plugins": map[string]any{"agent-teams@acme": []map[string]string{{"scope": "user", "installPath": fixture}}}})
	if err := os.MkdirAll(filepath.Join(pluginHome, ".claude", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pluginHome, ".claude", "plugins", "installed_plugins.json"), installed, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		json string
		env  map[string]string
		// want checks the Config; warn is the warning the file gets.
		want check
		warn string
		// user puts the file in the user's settings instead of the
		// project's; otherwise the project is trusted (this test is about
		// wiring; trust_test.go is about what an untrusted one gets).
		user bool
	}{
		"$schema":     {json: `{"$schema": "https://example.com/cadre-settings.json"}`, want: func(*testing.T, cadre.Config, tree) {}},
		"permissions": {json: `{"permissions": {}}`, want: func(*testing.T, cadre.Config, tree) {}},
		"model": {json: `{"model": "haiku"}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.ModelID != "claude-haiku-4-5" {
				t.Errorf("ModelID %s", cfg.ModelID)
			}
		}},
		"modelPrices": {json: `{"modelPrices": {"my-model": {"input": 1, "output": 2}, "claude-sonnet-4-5": {"input": 30, "output": 150}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if p, ok := cfg.Prices.Lookup("my-model"); !ok || p.Output != 2 {
				t.Errorf("my-model %+v %v", p, ok)
			}
			if p, _ := cfg.Prices.Lookup("claude-sonnet-4-5"); p.Input != 30 {
				t.Errorf("the override lost: %+v", p)
			}
			if _, ok := cfg.Prices.Lookup("claude-haiku-4-5"); !ok {
				t.Error("the built-in table is gone")
			}
		}},
		"provider": {json: `{"provider": "openai"}`, env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.ModelID != "gpt-5" {
				t.Errorf("ModelID %s, want the openai default", cfg.ModelID)
			}
		}},
		"modelAliases": {json: `{"modelAliases": {"anthropic": {"fast": "claude-fast-1"}}, "model": "fast"}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if id, ok := cfg.ResolveModel("fast"); cfg.ModelID != "claude-fast-1" || !ok || id != "claude-fast-1" {
				t.Errorf("ModelID %s, fast → %s %v", cfg.ModelID, id, ok)
			}
		}},
		"env": {json: `{"env": {"CADRE_MODEL": "opus"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.ModelID != "claude-opus-4-1" {
				t.Errorf("ModelID %s", cfg.ModelID)
			}
		}},
		"subagentModel": {json: `{"subagentModel": "haiku"}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.SubagentModel != "haiku" {
				t.Errorf("SubagentModel %q", cfg.SubagentModel)
			}
		}},
		"maxDepth": {json: `{"maxDepth": 2}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Limits.MaxDepth != 2 {
				t.Errorf("limits %+v", cfg.Limits)
			}
		}},
		"maxConcurrentAgents": {json: `{"maxConcurrentAgents": 5}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Limits.MaxRunning != 5 {
				t.Errorf("limits %+v", cfg.Limits)
			}
		}},
		"budget": {json: `{"budget": {"usd": 0.5, "tokens": 20000, "turns": 30, "wallTime": "10m"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if want := (cadre.Budget{USD: 0.5, Tokens: 20000, Turns: 30, WallTime: 10 * time.Minute}); cfg.Budget != want {
				t.Errorf("budget %+v, want %+v", cfg.Budget, want)
			}
		}},
		"maxTotalAgents": {json: `{"maxTotalAgents": 50}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Limits.MaxTotal != 50 {
				t.Errorf("limits %+v", cfg.Limits)
			}
		}},
		"trustedWorkspaces": {json: `{"trustedWorkspaces": ["~/../proj"]}`, user: true, want: func(t *testing.T, cfg cadre.Config, tr tree) {
			if p := cfg.Provenance; !p.Trusted || p.TrustSource != filepath.Join(tr.home, ".config", "cadre", "settings.json") {
				t.Errorf("provenance %+v", p)
			}
		}},
		"hooks": {json: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`, want: func(t *testing.T, cfg cadre.Config, tr tree) {
			if e := cfg.Hooks.Entries(); len(e) != 1 || e[0].Event != hooks.Stop || e[0].Source != filepath.Join(tr.cwd, ".cadre", "settings.json") {
				t.Errorf("hooks %+v", e)
			}
		}},
		"disableAllHooks": {json: `{"disableAllHooks": true, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Hooks.Len() != 0 {
				t.Errorf("hooks %+v", cfg.Hooks.Entries())
			}
		}},
		// Managed-only: a project file setting it is told so (managed
		// settings are tested in hooks_test.go).
		"allowManagedHooksOnly": {json: `{"allowManagedHooksOnly": true}`, warn: "honoured only in managed settings"},
		"agents":                {json: `{"agents": {}}`, warn: "put them in .cadre/agents/"},
		"forkSubagent": {json: `{"forkSubagent": true}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !cfg.ForkSubagent {
				t.Error("forkSubagent: true did not turn the fork path on")
			}
		}},
		"autoCompactWindow": {json: `{"autoCompactWindow": 8000}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Compaction.Window != 8000 {
				t.Errorf("autoCompactWindow: Compaction %+v", cfg.Compaction)
			}
		}},
		"autoCompactEnabled": {json: `{"autoCompactEnabled": false}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !cfg.Compaction.DisableAuto || cfg.Compaction.Disable {
				t.Errorf("autoCompactEnabled: false: Compaction %+v", cfg.Compaction)
			}
		}},
		"background": {json: `{"background": "default"}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Background != cadre.BackgroundDefault {
				t.Errorf("Background %q", cfg.Background)
			}
		}},
		"coordinatorMode": {json: `{"coordinatorMode": true}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !cfg.Coordinator {
				t.Error("coordinatorMode: true did not turn coordinator mode on")
			}
		}},
		"worktree": {json: `{"worktree": {"base": "default"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.WorktreeBase != cadre.WorktreeBaseDefault {
				t.Errorf("WorktreeBase %q", cfg.WorktreeBase)
			}
		}},
		"teams": {json: `{"teams": {"enabled": true, "shutdownGraceMs": 1500}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !cfg.Teams || cfg.TeamShutdownGrace != 1500*time.Millisecond {
				t.Errorf("teams: Teams %v, TeamShutdownGrace %v", cfg.Teams, cfg.TeamShutdownGrace)
			}
		}},
		// Remote agents (remote.go, issue 26): the connection is the remote
		// executor's (TestRemoteTemporalSettings); the Config gets no
		// executor from a file, so no spawn is remote by it alone.
		"remote": {json: `{"remote": {"temporal": {"address": "127.0.0.1:7233"}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Remote.All || cfg.Remote.Executor != nil {
				t.Errorf("remote settings alone made spawns remote: %+v", cfg.Remote)
			}
		}},
		// The sandbox object (sandbox.go, issue 9).
		"sandbox": {json: `{"sandbox": {}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Sandbox != nil {
				t.Errorf("an empty sandbox object turned the sandbox on: %+v", cfg.Sandbox)
			}
		}},
		"sandbox.enabled": {json: `{"sandbox": {"enabled": true}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil || sb.BackgroundOnly || sb.NoNetwork || sb.FailIfUnavailable || len(sb.Writable) == 0 {
				t.Errorf("sandbox %+v, want on for every agent with the network and the tool caches", sb)
			}
		}},
		"sandbox.backgroundOnly": {json: `{"sandbox": {"enabled": true, "backgroundOnly": true}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil || !sb.BackgroundOnly {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.failIfUnavailable": {json: `{"sandbox": {"enabled": true, "failIfUnavailable": true}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil || !sb.FailIfUnavailable {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.network": {json: `{"sandbox": {"enabled": true, "network": {}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil || sb.NoNetwork {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.network.enabled": {json: `{"sandbox": {"enabled": true, "network": {"enabled": false}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil || !sb.NoNetwork {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.network.allowedDomains": {json: `{"sandbox": {"enabled": true, "network": {"allowedDomains": ["github.com"]}}}`, warn: "cannot let sandboxed commands reach some hosts"},
		"sandbox.filesystem": {json: `{"sandbox": {"enabled": true, "filesystem": {}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if sb := cfg.Sandbox; sb == nil {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.filesystem.allowWrite": {json: `{"sandbox": {"enabled": true, "filesystem": {"allowWrite": ["sub", "/opt/out"]}}}`, want: func(t *testing.T, cfg cadre.Config, tr tree) {
			if sb := cfg.Sandbox; sb == nil || !slices.Contains(sb.Writable, filepath.Join(tr.cwd, "sub")) || !slices.Contains(sb.Writable, "/opt/out") {
				t.Errorf("sandbox %+v", sb)
			}
		}},
		"sandbox.autoAllowBashIfSandboxed": {json: `{"sandbox": {"autoAllowBashIfSandboxed": true}}`, warn: "does not auto-approve sandboxed commands"},
		"sandbox.excludedCommands":         {json: `{"sandbox": {"excludedCommands": ["docker"]}}`, warn: "runs in the sandbox"},
		"sandbox.allowUnsandboxedCommands": {json: `{"sandbox": {"allowUnsandboxedCommands": true}}`, warn: "cannot leave the sandbox"},
		"sandbox.filesystem.denyRead":      {json: `{"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}}`, warn: "use Read deny rules"},
		"sandbox.filesystem.denyWrite":     {json: `{"sandbox": {"filesystem": {"denyWrite": ["/etc"]}}}`, warn: "use Edit deny rules"},
		"outputStyle":                      {json: `{"outputStyle": "Explanatory"}`, warn: "display setting"},
		"statusLine":                       {json: `{"statusLine": {}}`, warn: "display setting"},
		"cleanupPeriodDays":                {json: `{"cleanupPeriodDays": 30}`, warn: "does not delete old transcripts"},
		"includeCoAuthoredBy":              {json: `{"includeCoAuthoredBy": false}`, warn: "writes no commits"},
		"permissions.allow":                {json: `{"permissions": {"allow": ["Bash(ls:*)"]}}`, want: hasRule(permission.Allow, "Bash(ls:*)")},
		"permissions.ask":                  {json: `{"permissions": {"ask": ["Bash(git push:*)"]}}`, want: hasRule(permission.Ask, "Bash(git push:*)")},
		"permissions.deny":                 {json: `{"permissions": {"deny": ["WebFetch"]}}`, want: hasRule(permission.Deny, "WebFetch")},
		"smallModel": {json: `{"smallModel": "sonnet"}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.SmallModel != "sonnet" {
				t.Errorf("SmallModel %q", cfg.SmallModel)
			}
		}},
		"webSearch": {json: `{"webSearch": {"backend": "searxng", "url": "http://127.0.0.1:8888"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if s, ok := cfg.WebSearch.(*builtin.SearXNG); !ok || s.BaseURL != "http://127.0.0.1:8888" {
				t.Errorf("WebSearch %#v", cfg.WebSearch)
			}
		}},
		"mcpServers": {json: `{"mcpServers": {"gh": {"command": "x"}}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if len(cfg.MCPServers) != 1 || cfg.MCPServers[0].Name != "gh" || cfg.MCPServers[0].Command != "x" {
				t.Errorf("MCPServers %+v", cfg.MCPServers)
			}
		}},
		"permissions.defaultMode": {json: `{"permissions": {"defaultMode": "acceptEdits"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if cfg.Permissions.Mode != permission.ModeAcceptEdits {
				t.Errorf("mode %s", cfg.Permissions.Mode)
			}
		}},
		"permissions.additionalDirectories": {json: `{"permissions": {"additionalDirectories": ["sub"]}}`, want: func(t *testing.T, cfg cadre.Config, tr tree) {
			if !slices.Equal(cfg.AddDirs, []string{filepath.Join(tr.cwd, "sub")}) {
				t.Errorf("dirs %v", cfg.AddDirs)
			}
		}},
		"enabledPlugins": {json: `{"enabledPlugins": {"agent-teams@acme": true}}`, env: map[string]string{"HOME": pluginHome}, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !slices.ContainsFunc(cfg.Agents, func(d *agentdef.Definition) bool { return d.Name == "agent-teams:team-reviewer" }) {
				t.Errorf("the enabled plugin's agents are not loaded")
			}
		}},
		"permissions.disableBypassPermissionsMode": {json: `{"permissions": {"disableBypassPermissionsMode": "disable"}}`, want: func(t *testing.T, cfg cadre.Config, _ tree) {
			if !cfg.Permissions.Limits.DisableBypass {
				t.Errorf("limits %+v", cfg.Permissions.Limits)
			}
		}},
	}
	// Claude Code's keys that cadre reports (claudekeys.go): a file that
	// sets one gets its reason.
	for _, k := range slices.Concat(claudeTopKeys, claudePermKeys, claudeSandboxKeys) {
		if _, ok := cases[k.Name]; !ok && k.Unsupported != "" {
			v := cmp.Or(keySamples[k.Name].narrow, keySamples[k.Name].widen)
			cases[k.Name] = struct {
				json string
				env  map[string]string
				want check
				warn string
				user bool
			}{json: nestJSON(k.Name, v), warn: k.Unsupported}
		}
	}
	for _, k := range Keys() {
		if _, ok := cases[k.Name]; !ok {
			t.Errorf("settings key %q has no case here: say what it drives", k.Name)
		}
		if (k.Drives == "") == (k.Unsupported == "") {
			t.Errorf("settings key %q must either drive something or say why it does not", k.Name)
		}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := withDefault(c.env, "ANTHROPIC_API_KEY", "k")
			file, opts := "CWD/.cadre/settings.json", Options{TrustProject: true}
			if c.user {
				file, opts = "HOME/.config/cadre/settings.json", Options{}
			}
			cfg, diags, err, tr := loadIn(t, map[string]string{file: c.json, "CWD/sub/.keep": ""}, env, opts)
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, d := range diags {
				if d.Topic == TopicSettings {
					warnings = append(warnings, d.String())
				}
			}
			if c.warn == "" {
				if len(warnings) != 0 {
					t.Errorf("warnings for a key that is applied: %v", warnings)
				}
				c.want(t, cfg, tr)
				return
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], c.warn) || !strings.Contains(warnings[0], "settings.json:1:") || !strings.Contains(warnings[0], "warning:") {
				t.Errorf("warnings %v, want one about %q", warnings, c.warn)
			}
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"CWD/.cadre/settings.json": `{"model": "haiku", "subagentModel": "opus", "permissions": {"defaultMode": "plan"}}`,
	}
	cases := []struct {
		name            string
		env             map[string]string
		opts            Options
		model, subModel string
		force           string
		mode            permission.Mode
	}{
		{"settings", anthropicKey, Options{}, "claude-haiku-4-5", "opus", "", permission.ModePlan},
		{"environment over settings", withDefault(anthropicKey, "CADRE_MODEL", "opus"), Options{}, "claude-opus-4-1", "opus", "", permission.ModePlan},
		{"sub-agent model from the environment",
			map[string]string{"ANTHROPIC_API_KEY": "k", "CADRE_SUBAGENT_MODEL": "sonnet", "CADRE_SUBAGENT_MODEL_FORCE": "haiku"},
			Options{}, "claude-haiku-4-5", "sonnet", "haiku", permission.ModePlan},
		{"flags over both", withDefault(anthropicKey, "CADRE_MODEL", "opus"), Options{Model: "sonnet", PermissionMode: "acceptEdits"},
			"claude-sonnet-4-5", "opus", "", permission.ModeAcceptEdits},
		{"skip permissions", anthropicKey, Options{SkipPermissions: true}, "claude-haiku-4-5", "opus", "", permission.ModeBypassPermissions},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, _, err, _ := loadIn(t, files, c.env, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ModelID != c.model || cfg.SubagentModel != c.subModel || cfg.ForceSubagentModel != c.force || cfg.Permissions.Mode != c.mode {
				t.Errorf("model %s sub %s force %s mode %s", cfg.ModelID, cfg.SubagentModel, cfg.ForceSubagentModel, cfg.Permissions.Mode)
			}
		})
	}
}

func TestLoadBuildsAWorkingConfig(t *testing.T) {
	t.Parallel()
	cfg, diags, err, tr := loadIn(t, map[string]string{
		"CWD/.claude/agents/reviewer.md": "---\nname: reviewer\ndescription: reviews\nmodle: x\n---\nYou review.\n",
		"MANAGED/agents/locked.md":       "---\nname: locked\ndescription: managed\n---\nbody\n",
		"CWD/sub/.keep":                  "",
	}, map[string]string{"ANTHROPIC_API_KEY": "k", "XDG_STATE_HOME": "/state"}, Options{AddDirs: []string{"sub"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Home != tr.home || cfg.StateDir != "/state/cadre" || cfg.Cwd != tr.cwd || cfg.Model == nil || cfg.ResolveModel == nil {
		t.Fatalf("config %+v", cfg)
	}
	var names []string
	for _, d := range cfg.Agents {
		names = append(names, d.Name)
	}
	if !slices.Contains(names, "reviewer") || !slices.Contains(names, "locked") || !slices.Contains(names, "general-purpose") {
		t.Fatalf("agents %v", names)
	}
	if len(diags) != 1 || diags[0].Topic != TopicAgents || !strings.Contains(diags[0].String(), `reviewer.md:4: warning: unknown key "modle"`) {
		t.Fatalf("diagnostics %v", diags)
	}
	// The Config runs: cadre.New accepts it as it is.
	if _, err := cadre.New(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestLoadReadsNoEnvironmentUnlessGiven(t *testing.T) {
	tr := newTree(t, nil)
	t.Setenv("ANTHROPIC_API_KEY", "from-the-process") // never read
	_, _, err := Load(context.Background(), tr.cwd, Options{ManagedDir: tr.managed})
	if err == nil || !strings.Contains(err.Error(), "no model provider configured") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadErrorsNameTheProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		env   map[string]string
		opts  Options
		want  string
	}{
		{"no key", nil, nil, Options{}, "set ANTHROPIC_API_KEY"},
		{"bad provider", nil, map[string]string{"CADRE_PROVIDER": "gemini"}, Options{}, `unknown provider "gemini"`},
		{"openai without key", nil, map[string]string{"CADRE_PROVIDER": "openai"}, Options{}, "OPENAI_API_KEY"},
		{"malformed settings", map[string]string{"CWD/.cadre/settings.json": "{"}, anthropicKey, Options{}, "settings.json:1:"},
		{"bypass disabled", map[string]string{"MANAGED/managed-settings.json": `{"permissions":{"disableBypassPermissionsMode":"disable"}}`},
			anthropicKey, Options{SkipPermissions: true}, "disabled by managed settings"},
		{"bad --agents", nil, anthropicKey, Options{Agents: "nope.json"}, "--agents"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err, _ := loadIn(t, c.files, c.env, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	if _, _, err := Load(context.Background(), "/nonexistent/dir", Options{}); err == nil {
		t.Fatal("no error for a missing working directory")
	}
	_, _, err, _ := loadIn(t, nil, anthropicKey, Options{SkipPermissions: true, PermissionMode: "plan"})
	if err == nil || errors.Is(err, ErrBypassDisabled) || !strings.Contains(err.Error(), "conflicts") {
		t.Fatalf("err = %v", err)
	}
}
