// Package config builds a cadre.Config the way the cadre command does:
// settings files and their precedence, the model provider and its aliases,
// the permission mode and rules, sub-agent limits and models, and the
// agent definitions. The command line is a thin layer over Load, and any
// Go program can configure itself the same way:
//
//	cfg, diags, err := config.Load(ctx, dir, config.Options{Getenv: os.Getenv})
//	if err != nil { ... }
//	for _, d := range diags { log.Print(d) }
//	rt, err := cadre.New(cfg)
//
// Settings files merge, lowest to highest precedence: user < project <
// project local < Options.SettingsFile and values from flags < managed,
// and at each level Claude Code's file first, then cadre's, which wins a
// clash (a warning names both files; see claude.go):
// ~/.claude/settings.json < $XDG_CONFIG_HOME/cadre/settings.json (or
// ~/.config/cadre/settings.json) < .claude/settings.json <
// .cadre/settings.json < .claude/settings.local.json <
// .cadre/settings.local.json < --settings < flags <
// /etc/claude-code/managed-settings.json (and managed-settings.d/*.json) <
// /etc/cadre/managed-settings.json (and managed-settings.d/*.json in name
// order). The project root is the
// working directory, as in Claude Code: settings files are not searched for
// in parent directories. Lists (permission rules, additional directories)
// concatenate across files and every entry remembers its file; scalars
// take the value of the highest file that sets them. A malformed file is an
// error naming file, line and column. Effective lists every effective
// entry with its file (`cadre config`).
//
// Every key a settings file may hold — cadre's and every key Claude Code
// documents — is in Keys: each either drives something or is reported,
// with the reason, when a file sets it; a key cadre does not know is a
// warning with a did-you-mean. Each is marked Narrowing, Widening or
// WideningSome (Key.Effect) for workspace trust.
//
// Workspace trust (S-10.4): the project files may always narrow, but what
// widens the run — allow rules, a mode above default, directories outside
// the workspace, env entries that are not SafeProjectEnv, hooks, MCP
// servers, and every key or value the table marks as widening (a provider,
// model aliases, prices, a limit raised) — applies only in a trusted workspace (`cadre trust`,
// --trust-project, trustedWorkspaces in user or managed settings);
// otherwise each is ignored and reported once. Settings.Trust is the run's
// Trust; any loader of a project-sourced item gates it with
// Trust.Allow(file, what), which also records what it refused (see
// trust.go). Config.Provenance says where the mode and each widening came
// from.
//
// Load reads the environment only through Options.Getenv.
package config
