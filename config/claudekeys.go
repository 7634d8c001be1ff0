package config

// The keys Claude Code documents for its settings files that cadre's own
// table (keys.go) does not have: each is reported, with the reason, when a
// file sets it, and marked for workspace trust like every key.

// Reasons shared by several Claude Code keys.
const (
	unsupportedDisplay  = "a Claude Code display setting cadre does not use; ignored"
	unsupportedLogin    = "cadre has no Claude.ai or Console login; it reads API keys from the environment (or env in settings); ignored"
	unsupportedCloud    = "cadre has no Bedrock or Vertex provider, so no cloud credential helper runs; ignored"
	unsupportedPlugins  = "cadre loads the plugins Claude Code installed (enabledPlugins) and --plugin-dir, but does not install plugins from marketplaces; ignored"
	unsupportedMCPApply = "cadre approves a workspace's .mcp.json servers through workspace trust (cadre trust), not per server; ignored"
	unsupportedMCPPol   = "cadre has no MCP server allowlist; deny rules (mcp__server) turn a server off; ignored"
	unsupportedModels   = "cadre has no model picker to restrict; ignored"
)

var claudeTopKeys = []Key{
	{Name: "apiKeyHelper", Unsupported: "cadre does not run a key helper; it reads the API key from the environment (ANTHROPIC_API_KEY, or env in settings); ignored", Effect: Widening},
	{Name: "awsCredentialExport", Unsupported: unsupportedCloud, Effect: Widening},
	{Name: "awsAuthRefresh", Unsupported: unsupportedCloud, Effect: Widening},
	{Name: "gcpAuthRefresh", Unsupported: unsupportedCloud, Effect: Widening},
	{Name: "forceLoginMethod", Unsupported: unsupportedLogin, Effect: Narrowing},
	{Name: "forceLoginOrgUUID", Unsupported: unsupportedLogin, Effect: Narrowing},
	{Name: "otelHeadersHelper", Unsupported: "no headers helper runs: cadre's OTLP exporters take their headers from OTEL_EXPORTER_OTLP_HEADERS; ignored", Effect: Widening},
	{Name: "enableAllProjectMcpServers", Unsupported: unsupportedMCPApply, Effect: Widening},
	{Name: "enabledMcpjsonServers", Unsupported: unsupportedMCPApply, Effect: Widening},
	{Name: "disabledMcpjsonServers", Unsupported: "use a deny rule (mcp__server) to turn a .mcp.json server off; ignored", Effect: Narrowing},
	{Name: "allowedMcpServers", Unsupported: unsupportedMCPPol, Effect: Narrowing},
	{Name: "deniedMcpServers", Unsupported: unsupportedMCPPol, Effect: Narrowing},
	{Name: "allowManagedMcpServersOnly", Unsupported: unsupportedMCPPol, Effect: Narrowing},
	{Name: "allowManagedPermissionRulesOnly", Unsupported: "cadre always applies the rules of every settings file (managed deny rules bind all); ignored", Effect: Narrowing},
	{Name: "effortLevel", Unsupported: "cadre sets no effort level (use --max-thinking-tokens); ignored", Effect: Narrowing},
	{Name: "alwaysThinkingEnabled", Unsupported: "cadre turns extended thinking on with --max-thinking-tokens only; ignored", Effect: Narrowing},
	{Name: "availableModels", Unsupported: unsupportedModels, Effect: Narrowing},
	{Name: "enforceAvailableModels", Unsupported: unsupportedModels, Effect: Narrowing},
	{Name: "modelOverrides", Unsupported: "use modelAliases to map a model name to another id; ignored", Effect: Widening},
	{Name: "fastMode", Unsupported: "cadre has no fast mode; ignored", Effect: Narrowing},
	{Name: "fastModePerSessionOptIn", Unsupported: "cadre has no fast mode; ignored", Effect: Narrowing},
	{Name: "advisorModel", Unsupported: "cadre has no advisor model; ignored", Effect: Widening},
	{Name: "enabledPlugins", Drives: "which plugins Claude Code installed (~/.claude/plugins/installed_plugins.json) load: their agents, skills, hooks and MCP servers (plugins.go)", Effect: Widening},
	{Name: "extraKnownMarketplaces", Unsupported: unsupportedPlugins, Effect: Widening},
	{Name: "strictKnownMarketplaces", Unsupported: unsupportedPlugins, Effect: Narrowing},
	{Name: "allowedChannelPlugins", Unsupported: unsupportedPlugins, Effect: Widening},
	{Name: "companyAnnouncements", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "spinnerTipsEnabled", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "spinnerTipsOverride", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "spinnerVerbs", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "language", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "showTurnDuration", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "terminalProgressBarEnabled", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "prefersReducedMotion", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "autoScrollEnabled", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "editorMode", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "teammateMode", Unsupported: unsupportedDisplay, Effect: Narrowing},
	{Name: "autoUpdatesChannel", Unsupported: "cadre does not update itself; ignored", Effect: Narrowing},
	{Name: "disableDeepLinkRegistration", Unsupported: "cadre registers no deep links; ignored", Effect: Narrowing},
	{Name: "attribution", Unsupported: "cadre adds no attribution to commits or pull requests; ignored", Effect: Narrowing},
	{Name: "includeGitInstructions", Unsupported: "cadre's system prompt has no built-in git instructions to turn off; ignored", Effect: Narrowing},
	{Name: "respectGitignore", Unsupported: "cadre's file suggestions do not exist; Glob and Grep decide for themselves; ignored", Effect: Narrowing},
	{Name: "fileSuggestion", Unsupported: "cadre runs no file suggestion command; ignored", Effect: Widening},
	{Name: "plansDirectory", Unsupported: "cadre does not write plan files; ignored", Effect: Widening},
	{Name: "defaultShell", Unsupported: "cadre's Bash tool always runs bash; ignored", Effect: Widening},
	{Name: "skipDangerousModePermissionPrompt", Unsupported: "cadre asks no confirmation for bypassPermissions, so there is nothing to skip; ignored", Effect: Widening},
	{Name: "useAutoModeDuringPlan", Unsupported: "cadre has no classifier (auto) mode; ignored", Effect: Widening},
	{Name: "allowedHttpHookUrls", Unsupported: "cadre runs command hooks only; ignored", Effect: Widening},
	{Name: "httpHookAllowedEnvVars", Unsupported: "cadre runs command hooks only; ignored", Effect: Widening},
	{Name: "sshConfigs", Unsupported: "cadre has no remote SSH workspaces; ignored", Effect: Widening},
	{Name: "skipWebFetchPreflight", Unsupported: "cadre's WebFetch makes no preflight request; ignored", Effect: Narrowing},
}

var claudePermKeys = []Key{
	{Name: "permissions.disableAutoMode", Unsupported: "cadre has no classifier (auto) mode to turn off; ignored", Effect: Narrowing},
}

var claudeSandboxKeys = []Key{
	{Name: "sandbox.enableWeakerNestedSandbox", Unsupported: "cadre's bubblewrap sandbox has no weaker nested variant; ignored", Effect: Widening},
	{Name: "sandbox.ignoreViolations", Unsupported: "cadre's sandbox refuses what it does not allow and has no violation list; ignored", Effect: Widening},
	{Name: "sandbox.network.allowUnixSockets", Unsupported: "cadre's sandbox cannot open single Unix sockets; ignored", Effect: Widening},
	{Name: "sandbox.network.allowAllUnixSockets", Unsupported: "cadre's sandbox cannot open single Unix sockets; ignored", Effect: Widening},
	{Name: "sandbox.network.allowLocalBinding", Unsupported: "cadre's sandbox shares the network or cuts it; ignored", Effect: Widening},
	{Name: "sandbox.network.httpProxyPort", Unsupported: "cadre's sandbox runs no filtering proxy; ignored", Effect: Widening},
	{Name: "sandbox.network.socksProxyPort", Unsupported: "cadre's sandbox runs no filtering proxy; ignored", Effect: Widening},
}
