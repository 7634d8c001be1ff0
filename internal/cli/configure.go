package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/cli/configcmd"
	"github.com/cadre-dev/cadre/internal/cli/hookscmd"
	"github.com/cadre-dev/cadre/internal/cli/mcpcmd"
	"github.com/cadre-dev/cadre/internal/cli/permcmd"
	"github.com/cadre-dev/cadre/internal/cli/skillscmd"
	"github.com/cadre-dev/cadre/internal/cli/trustcmd"
	"github.com/cadre-dev/cadre/internal/cli/workercmd"
	"github.com/cadre-dev/cadre/internal/cli/worktreecmd"
)

// configure turns flags, settings files, agent definitions and the
// environment into a Runtime configuration through config.Load, then sets
// what only flags say. Problems with what the user wrote are usage errors
// (exit 2); warnings go to stderr (those about agent files with
// --verbose only: real agent folders hold many).
func configure(ctx context.Context, p procIO, o *options) (cadre.Config, error) {
	rules, err := permcmd.FlagRules(o.allowedTools, o.disallowedTools)
	if err != nil {
		return cadre.Config{}, err
	}
	cfg, diags, err := config.Load(ctx, "", config.Options{
		Getenv: p.getenv, SettingsFile: o.settingsFile, SettingsJSON: o.settingsJSON, Model: o.model,
		PermissionMode: o.permissionMode, SkipPermissions: o.skipPermissions, AllowBypass: o.sdk.allowBypass,
		Rules: rules, AddDirs: o.addDirs, Agents: o.agents, TrustProject: o.trustProject,
		MCPConfigs: o.mcp.configs, StrictMCPConfig: o.mcp.strict,
		Sandbox: o.sandbox, Remote: o.remote, NewRemote: newRemote(p.stderr, p.getenv), SettingSources: o.sdk.sources(p.stderr), PluginDirs: o.sdk.plugins(),
	})
	for _, d := range diags {
		if d.Topic != config.TopicAgents || d.Severity == config.SeverityError || o.verbose {
			fmt.Fprintln(p.stderr, "cadre: "+d.String())
		}
	}
	if err != nil {
		return cadre.Config{}, err
	}
	cfg.SystemPrompt, cfg.AppendSystemPrompt = o.systemPrompt, o.appendSystemPrompt
	cfg.MaxTurns, cfg.SessionID, cfg.NoTranscript = o.maxTurns, o.sessionID, o.noTranscript
	if o.maxBudgetUSD > 0 && (cfg.Budget.USD == 0 || o.maxBudgetUSD < cfg.Budget.USD) {
		// The session's budget (S-15.2), under the settings' budget:
		// sub-agents reserve from it; the run still ends with
		// error_max_budget_usd once it is spent.
		cfg.Budget.USD = o.maxBudgetUSD
	}
	// Telemetry (telemetry.go): the providers the OTEL_* variables built;
	// config named the model provider.
	t := o.telemetry
	cfg.Telemetry.TracerProvider, cfg.Telemetry.MeterProvider = t.TracerProvider, t.MeterProvider
	cfg.Telemetry.LogPrompts, cfg.Telemetry.LogToolContent = t.LogPrompts, t.LogToolContent
	return cfg, nil
}

func addSubcommands(root *cobra.Command) {
	root.AddCommand(agentscmd.New(), permcmd.New(), skillscmd.New(), mcpcmd.New(), worktreecmd.New(), hookscmd.New(), trustcmd.New(), configcmd.New(), workercmd.New())
}
