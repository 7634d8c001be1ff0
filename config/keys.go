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
}

// Keys lists every settings key cadre knows, top-level keys first, then
// the keys of the permissions object.
func Keys() []Key { return slices.Concat(topKeys, permKeys) }

var topKeys = []Key{
	{Name: "$schema", Drives: "nothing: a JSON schema reference for editors"},
	{Name: "permissions", Drives: "permission rules, mode, directories (see permissions.*)"},
	{Name: "model", Drives: "the main agent's model (Config.ModelID), below --model and CADRE_MODEL"},
	{Name: "provider", Drives: "the model provider (anthropic or openai), below CADRE_PROVIDER"},
	{Name: "modelAliases", Drives: "model aliases per provider (Config.ResolveModel)"},
	{Name: "env", Drives: "environment variables that Load reads (API keys, CADRE_*), over the process's; tools do not get them"},
	{Name: "subagentModel", Drives: "the default sub-agent model (Config.SubagentModel), below CADRE_SUBAGENT_MODEL"},
	{Name: "maxDepth", Drives: "how deep sub-agents nest (Config.Limits.MaxDepth)"},
	{Name: "maxConcurrentAgents", Drives: "sub-agents running at once; more wait in a queue (Config.Limits.MaxRunning)"},
	{Name: "maxTotalAgents", Drives: "sub-agents started per session (Config.Limits.MaxTotal)"},
	{Name: "modelPrices", Drives: "prices per million tokens and limits by model id, over the built-in table (Config.Prices): total_cost_usd and modelUsage"},
	{Name: "hooks", Drives: "hook commands per event (Config.Hooks); hooks add up across files (config/hooks.go)"},
	{Name: "allowManagedHooksOnly", Drives: "in managed settings: only managed hooks run (Config.Hooks)"},
	{Name: "disableAllHooks", Drives: "turns hooks off (Config.Hooks); outside managed settings, all but the managed ones"},
	{Name: "trustedWorkspaces", Drives: "workspaces whose own settings may widen a run (S-10.4); read from user, --settings and managed files only"},
	{Name: "smallModel", Drives: "the model that applies WebFetch's prompt (Config.SmallModel), below CADRE_SMALL_MODEL; default the haiku alias"},
	{Name: "webSearch", Drives: "the WebSearch backend: backend (anthropic, searxng, brave, none), url, maxResults (Config.WebSearch)"},
	{Name: "mcpServers", Drives: "MCP servers (Config.MCPServers), with .mcp.json and --mcp-config; higher files replace servers of the same name"},
	{Name: "agents", Unsupported: "agent definitions in settings are not supported; put them in .cadre/agents/ or pass --agents"},
	{Name: "forkSubagent", Drives: "the fork path: an Agent call without subagent_type forks the caller (Config.ForkSubagent), below CADRE_FORK_SUBAGENT"},
	{Name: "background", Drives: `when sub-agents run in the background: "on" (when asked), "default" or "off" (Config.Background), below CADRE_DISABLE_BACKGROUND_TASKS`},
	{Name: "coordinatorMode", Drives: "coordinator mode: the main agent keeps only Agent, SendMessage, TaskStop and ListAgents, and its workers run in the background (Config.Coordinator), below CADRE_COORDINATOR_MODE"},
	{Name: "worktree", Drives: `worktree.base: where isolated agents' worktrees start, "head" or "default" (Config.WorktreeBase), below CADRE_WORKTREE_BASE`},
	{Name: "teams", Unsupported: "agent teams are not supported yet; ignored"},
	{Name: "sandbox", Unsupported: "sandboxing is not supported yet; ignored"},
	{Name: "outputStyle", Unsupported: "a Claude Code display setting cadre does not use; ignored"},
	{Name: "statusLine", Unsupported: "a Claude Code display setting cadre does not use; ignored"},
	{Name: "cleanupPeriodDays", Unsupported: "cadre does not delete old transcripts; ignored"},
	{Name: "includeCoAuthoredBy", Unsupported: "cadre writes no commits of its own; ignored"},
}

var permKeys = []Key{
	{Name: "permissions.allow", Drives: "allow rules (Config.Permissions.Rules)"},
	{Name: "permissions.ask", Drives: "ask rules (Config.Permissions.Rules)"},
	{Name: "permissions.deny", Drives: "deny rules (Config.Permissions.Rules)"},
	{Name: "permissions.defaultMode", Drives: "the permission mode (Config.Permissions.Mode), below --permission-mode"},
	{Name: "permissions.additionalDirectories", Drives: "further working directories (Config.AddDirs)"},
	{Name: "permissions.disableBypassPermissionsMode", Drives: `"disable" forbids bypassPermissions (Config.Permissions.Limits)`},
}

// lookupKey returns the known key name under parent ("" for the top
// level).
func lookupKey(parent, name string) (Key, bool) {
	full, list := name, topKeys
	if parent != "" {
		full, list = parent+"."+name, permKeys
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
	list, prefix := topKeys, ""
	if parent != "" {
		list, prefix = permKeys, parent+"."
	}
	best, bestD := "", 1<<30
	for _, k := range list {
		c := strings.TrimPrefix(k.Name, prefix)
		if d := textdist.Distance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || bestD <= len(name)/3 {
		return best
	}
	return ""
}
