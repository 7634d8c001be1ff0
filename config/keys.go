package config

import (
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/textdist"
)

// Key is one settings key cadre knows.
type Key struct {
	// Name is the key as written in a file ("permissions.allow" for a key
	// of the permissions object).
	Name string
	// Drives says what the key sets.
	Drives string
	// Unsupported, when not empty, is why the key has no effect yet; a
	// file that sets it gets this as a warning.
	Unsupported string
	// Effect says whether the key can widen what a run does, for
	// workspace trust (S-10.4): a widening key (or value) from an
	// untrusted workspace's file is ignored and reported.
	Effect Effect

	// loaderGate says that the loader of the key asks Trust.Allow item by
	// item (hooks, MCP servers, the sandbox, webSearch) instead of the
	// trust filter of the file (trustgate.go).
	loaderGate bool
}

// Effect is what a settings key can do to a run, for workspace trust.
type Effect string

// Key effects.
const (
	// Narrowing: the key can only narrow what a run may do, or changes
	// nothing workspace trust guards (a display setting, the model of the
	// configured provider); it applies from any file.
	Narrowing Effect = "narrowing"
	// Widening: every value can widen what a run may do (run a command,
	// send the conversation or a key elsewhere, lower a limit's guard); an
	// untrusted workspace's file cannot set it.
	Widening Effect = "widening"
	// WideningSome: some values widen and others narrow (a mode above
	// default or below it, a limit raised or lowered, an env entry); the
	// widening ones are ignored from an untrusted workspace's file.
	WideningSome Effect = "widening some values"
)

// Keys lists every settings key cadre knows — its own and every key
// Claude Code documents for its settings files (claudekeys.go) — top-level
// keys first, then the keys of the permissions object and of the sandbox
// object.
func Keys() []Key {
	return slices.Concat(topKeys, claudeTopKeys, permKeys, claudePermKeys, sandboxKeys, claudeSandboxKeys)
}

// keyObjects are the objects whose keys checkKeys checks: the top level
// ("") and the objects Keys lists keys of.
var keyObjects = []string{"", "permissions", "sandbox", "sandbox.network", "sandbox.filesystem"}

// sandboxKeys are the keys of the sandbox object (sandbox.go): Claude
// Code's that cadre applies or reports, and cadre's own.
var sandboxKeys = []Key{
	{Name: "sandbox.enabled", Drives: "runs Bash commands in the bubblewrap sandbox (Config.Sandbox), as --sandbox does", Effect: WideningSome, loaderGate: true},
	{Name: "sandbox.backgroundOnly", Drives: "with enabled: only background sub-agents' Bash runs sandboxed (Config.Sandbox.BackgroundOnly)", Effect: WideningSome, loaderGate: true},
	{Name: "sandbox.failIfUnavailable", Drives: "bubblewrap missing or unusable stops the run instead of a warning (Config.Sandbox.FailIfUnavailable)", Effect: WideningSome, loaderGate: true},
	{Name: "sandbox.network", Drives: "the sandbox's network (see sandbox.network.*)", Effect: Narrowing},
	{Name: "sandbox.network.enabled", Drives: "false cuts sandboxed commands off the network (Config.Sandbox.NoNetwork); on by default", Effect: WideningSome, loaderGate: true},
	{Name: "sandbox.network.allowedDomains", Drives: "cadre cannot filter hosts: a list cuts the network unless network.enabled is true (with a warning)", Effect: Narrowing},
	{Name: "sandbox.filesystem", Drives: "the sandbox's file system (see sandbox.filesystem.*)", Effect: Narrowing},
	{Name: "sandbox.filesystem.allowWrite", Drives: "further paths sandboxed commands may write (Config.Sandbox.Writable)", Effect: WideningSome, loaderGate: true},
	{Name: "sandbox.autoAllowBashIfSandboxed", Unsupported: "cadre does not auto-approve sandboxed commands; permission rules decide them (deny rules that read-protect paths are masked); ignored", Effect: Widening},
	{Name: "sandbox.excludedCommands", Unsupported: "every Bash command of a sandboxed agent runs in the sandbox; ignored", Effect: Widening},
	{Name: "sandbox.allowUnsandboxedCommands", Unsupported: "commands cannot leave the sandbox; ignored", Effect: Widening},
	{Name: "sandbox.filesystem.denyRead", Unsupported: "use Read deny rules (permissions.deny), which the sandbox masks; ignored", Effect: Narrowing},
	{Name: "sandbox.filesystem.denyWrite", Unsupported: "use Edit deny rules (permissions.deny), which the sandbox keeps read-only; ignored", Effect: Narrowing},
}

var topKeys = []Key{
	{Name: "$schema", Drives: "nothing: a JSON schema reference for editors", Effect: Narrowing},
	{Name: "permissions", Drives: "permission rules, mode, directories (see permissions.*)", Effect: Narrowing},
	{Name: "model", Drives: "the main agent's model (Config.ModelID), below --model and CADRE_MODEL", Effect: Narrowing},
	{Name: "provider", Drives: "the model provider (anthropic or openai), below CADRE_PROVIDER", Effect: Widening},
	{Name: "modelAliases", Drives: "model aliases per provider (Config.ResolveModel)", Effect: Widening},
	{Name: "env", Drives: "environment variables that Load reads (API keys, CADRE_*), over the process's; tools do not get them", Effect: WideningSome},
	{Name: "subagentModel", Drives: "the default sub-agent model (Config.SubagentModel), below CADRE_SUBAGENT_MODEL", Effect: Narrowing},
	{Name: "maxDepth", Drives: "how deep sub-agents nest (Config.Limits.MaxDepth)", Effect: WideningSome},
	{Name: "maxConcurrentAgents", Drives: "sub-agents running at once; more wait in a queue (Config.Limits.MaxRunning)", Effect: WideningSome},
	{Name: "maxTotalAgents", Drives: "sub-agents started per session (Config.Limits.MaxTotal)", Effect: WideningSome},
	{Name: "budget", Drives: "the session's budget {usd, tokens, turns, wallTime} (Config.Budget, S-15.2); every file's applies, the least of each limit wins, and --max-budget-usd can only lower usd", Effect: Narrowing},
	{Name: "modelPrices", Drives: "prices per million tokens and limits by model id, over the built-in table (Config.Prices): total_cost_usd and modelUsage", Effect: Widening},
	{Name: "hooks", Drives: "hook commands per event (Config.Hooks); hooks add up across files (config/hooks.go)", Effect: Widening, loaderGate: true},
	{Name: "allowManagedHooksOnly", Drives: "in managed settings: only managed hooks run (Config.Hooks)", Effect: Narrowing},
	{Name: "disableAllHooks", Drives: "turns hooks off (Config.Hooks); outside managed settings, all but the managed ones", Effect: Narrowing},
	{Name: "trustedWorkspaces", Drives: "workspaces whose own settings may widen a run (S-10.4); read from user, --settings and managed files only", Effect: Widening},
	{Name: "smallModel", Drives: "the model that applies WebFetch's prompt (Config.SmallModel), below CADRE_SMALL_MODEL; default the haiku alias", Effect: Narrowing},
	{Name: "webSearch", Drives: "the WebSearch backend: backend (anthropic, searxng, brave, none), url, maxResults (Config.WebSearch)", Effect: WideningSome, loaderGate: true},
	{Name: "mcpServers", Drives: "MCP servers (Config.MCPServers), with .mcp.json and --mcp-config; higher files replace servers of the same name", Effect: Widening, loaderGate: true},
	{Name: "agents", Unsupported: "agent definitions in settings are not supported; put them in .cadre/agents/ or pass --agents", Effect: Widening},
	{Name: "forkSubagent", Drives: "the fork path: an Agent call without subagent_type forks the caller (Config.ForkSubagent), below CADRE_FORK_SUBAGENT", Effect: Narrowing},
	{Name: "background", Drives: `when sub-agents run in the background: "on" (when asked), "default" or "off" (Config.Background), below CADRE_DISABLE_BACKGROUND_TASKS`, Effect: Narrowing},
	{Name: "coordinatorMode", Drives: "coordinator mode: the main agent keeps only Agent, SendMessage, TaskStop and ListAgents, and its workers run in the background (Config.Coordinator), below CADRE_COORDINATOR_MODE", Effect: Narrowing},
	{Name: "worktree", Drives: `worktree.base: where isolated agents' worktrees start, "head" or "default" (Config.WorktreeBase), below CADRE_WORKTREE_BASE`, Effect: Narrowing},
	{Name: "autoCompactWindow", Drives: "the context window, in tokens, agents compact against: a number for every model (Config.Compaction.Window) or an object of model ids or id prefixes to windows, \"default\" for the rest (Config.Compaction.Windows); below CADRE_AUTO_COMPACT_WINDOW and CLAUDE_CODE_AUTO_COMPACT_WINDOW", Effect: Narrowing},
	{Name: "autoCompactEnabled", Drives: "false turns automatic context compaction off (Config.Compaction.DisableAuto), below DISABLE_AUTO_COMPACT", Effect: Narrowing},
	{Name: "teams", Drives: "agent teams: true, or {enabled, shutdownGraceMs} (Config.Teams, Config.TeamShutdownGrace), below CADRE_AGENT_TEAMS, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS and CADRE_TEAM_SHUTDOWN_GRACE_MS", Effect: Narrowing},
	{Name: "sandbox", Drives: "the Bash sandbox (Config.Sandbox; see sandbox.*)", Effect: Narrowing},
	{Name: "remote", Drives: "remote.temporal: the Temporal server remote agents run through (address, namespace, taskQueue, tls.certFile/keyFile/caFile/serverName, apiKey or apiKeyEnv), for isolation: remote, --remote and cadre worker (config/remote.go)", Effect: Widening},
	{Name: "outputStyle", Unsupported: "a Claude Code display setting cadre does not use; ignored", Effect: Narrowing},
	{Name: "statusLine", Unsupported: "a Claude Code display setting cadre does not use; ignored", Effect: Widening},
	{Name: "cleanupPeriodDays", Unsupported: "cadre does not delete old transcripts; ignored", Effect: Narrowing},
	{Name: "includeCoAuthoredBy", Unsupported: "cadre writes no commits of its own; ignored", Effect: Narrowing},
}

var permKeys = []Key{
	{Name: "permissions.allow", Drives: "allow rules (Config.Permissions.Rules)", Effect: Widening},
	{Name: "permissions.ask", Drives: "ask rules (Config.Permissions.Rules)", Effect: Narrowing},
	{Name: "permissions.deny", Drives: "deny rules (Config.Permissions.Rules)", Effect: Narrowing},
	{Name: "permissions.defaultMode", Drives: "the permission mode (Config.Permissions.Mode), below --permission-mode", Effect: WideningSome},
	{Name: "permissions.additionalDirectories", Drives: "further working directories (Config.AddDirs)", Effect: WideningSome},
	{Name: "permissions.disableBypassPermissionsMode", Drives: `"disable" forbids bypassPermissions (Config.Permissions.Limits)`, Effect: Narrowing},
}

// lookupKey returns the known key name under parent ("" for the top
// level).
func lookupKey(parent, name string) (Key, bool) {
	full, list := name, keyList(parent)
	if parent != "" {
		full = parent + "." + name
	}
	i := slices.IndexFunc(list, func(k Key) bool { return k.Name == full })
	if i < 0 {
		return Key{}, false
	}
	return list[i], true
}

// didYouMean returns the known key under parent closest to name, if close
// enough.
func didYouMean(parent, name string) string {
	list, prefix := keyList(parent), ""
	if parent != "" {
		prefix = parent + "."
	}
	best, bestD := "", 1<<30
	for _, k := range list {
		c, ok := strings.CutPrefix(k.Name, prefix)
		if !ok || strings.Contains(c, ".") {
			continue // a key of another object
		}
		if d := textdist.Distance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || bestD <= len(name)/3 {
		return best
	}
	return ""
}

// keyList is the table the keys of parent are in.
func keyList(parent string) []Key {
	switch {
	case parent == "":
		return slices.Concat(topKeys, claudeTopKeys)
	case parent == "permissions":
		return slices.Concat(permKeys, claudePermKeys)
	}
	return slices.Concat(sandboxKeys, claudeSandboxKeys)
}
