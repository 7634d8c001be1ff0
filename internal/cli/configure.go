package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/cli/permcmd"
	"github.com/cadre-dev/cadre/internal/cli/worktreecmd"
	"github.com/cadre-dev/cadre/internal/settings"
	"github.com/cadre-dev/cadre/permission"
)

// configure turns flags, settings files, agent definitions and the
// environment into a Runtime configuration. Problems with what the user
// wrote are usage errors (exit 2); warnings go to stderr.
func configure(ctx context.Context, p procIO, o *options) (cadre.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return cadre.Config{}, fmt.Errorf("working directory: %v", err)
	}
	home := p.getenv("HOME")
	flagRules, err := permcmd.FlagRules(o.allowedTools, o.disallowedTools)
	if err != nil {
		return cadre.Config{}, err
	}
	s, diags, err := settings.Load(settings.LoadOptions{
		Cwd: cwd, Home: home, SettingsFile: o.settingsFile,
		Flags: settings.Flags{Rules: flagRules, AddDirs: o.addDirs},
	})
	if err != nil {
		return cadre.Config{}, err
	}
	for _, d := range diags {
		fmt.Fprintln(p.stderr, "cadre: "+d.String())
	}
	mode, err := permcmd.ResolveMode(o.permissionMode, o.skipPermissions, s)
	if err != nil {
		return cadre.Config{}, err
	}
	checker, err := permission.NewChecker(permission.Config{Mode: mode, Rules: s.Permissions.Rules, Cwd: cwd, Home: home})
	if err != nil {
		return cadre.Config{}, err
	}
	for _, w := range checker.Warnings() {
		fmt.Fprintln(p.stderr, "cadre: warning: "+w)
	}
	// Settings env values apply to the run, over the process's own.
	getenv := p.getenv
	if len(s.Env) > 0 {
		getenv = func(k string) string {
			if v, ok := s.Env[k]; ok {
				return v
			}
			return p.getenv(k)
		}
	}
	model := o.model
	if model == "" {
		model = getenv("CADRE_MODEL")
	}
	if model == "" {
		model = s.Model.Value
	}
	pc := providerConfig{Provider: s.Provider.Value, Model: model, Aliases: s.ModelAliases, Getenv: getenv}
	llmModel, provider, id, err := buildModel(pc)
	if err != nil {
		return cadre.Config{}, err
	}
	defs, err := agentdef.Load(ctx, agentdef.LoadOptions{Cwd: cwd, Home: home, FlagAgents: o.agents})
	if err != nil {
		return cadre.Config{}, fmt.Errorf("agent definitions: %v", err)
	}
	for _, d := range defs.Diagnostics() {
		if d.Severity == agentdef.SeverityError || o.verbose {
			fmt.Fprintln(p.stderr, "cadre: "+d.String())
		}
	}
	var dirs []string
	for _, d := range s.Permissions.AdditionalDirectories {
		dirs = append(dirs, d.Path)
	}
	cfg := cadre.Config{
		Model: llmModel, ModelID: id, Cwd: cwd, AddDirs: dirs, SystemPrompt: o.systemPrompt,
		AppendSystemPrompt: o.appendSystemPrompt, MaxTurns: o.maxTurns, SessionID: o.sessionID,
		NoTranscript: o.noTranscript, Getenv: getenv, Agents: defs.Active(),
		ResolveModel: func(alias string) (string, bool) {
			if id, ok := s.ModelAliases[provider][alias]; ok {
				return id, true
			}
			id, ok := defaultAliases(provider)[alias]
			return id, ok
		},
		Permissions: &cadre.Permissions{
			Mode: mode, Rules: s.Permissions.Rules, Home: home,
			Limits: permissionLimits(s),
		},
	}
	return cfg, nil
}

func addSubcommands(root *cobra.Command) {
	root.AddCommand(agentscmd.New(), permcmd.New())
	root.AddCommand(worktreecmd.New())
}

func permissionLimits(s *settings.Settings) permission.SessionLimits {
	return permission.SessionLimits{DisableBypass: s.Permissions.DisableBypass}
}
