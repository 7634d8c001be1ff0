package config

import (
	"fmt"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/skills"
)

// TopicPlugins: a Claude Code plugin (its manifest, installed_plugins.json).
const TopicPlugins Topic = "plugins"

// sessionPlugins is what the plugins of a session contribute to the
// loaders of agents and skills.
type sessionPlugins struct {
	agents []agentdef.PluginAgents
	skills []skills.PluginSkills
}

// Plugins loads the Claude Code plugins of a session (S-4.4): those Claude
// Code installed under home that enabled turns on (the settings'
// enabledPlugins), then dirs (--plugin-dir). Problems are diagnostics.
func Plugins(home string, dirs []plugin.Dir, enabled map[string]bool) ([]*plugin.Plugin, []Diagnostic) {
	list, pd := plugin.Discover(home, dirs, enabled)
	var diags []Diagnostic
	for _, d := range pd {
		sev := SeverityWarning
		if d.Error {
			sev = SeverityError
		}
		diags = append(diags, Diagnostic{File: d.File, Severity: sev, Topic: TopicPlugins, Message: d.Message})
	}
	return list, diags
}

// PluginAgents lists the agent sources of plugins for agentdef.Load.
func PluginAgents(list []*plugin.Plugin) []agentdef.PluginAgents {
	var out []agentdef.PluginAgents
	for _, p := range list {
		if len(p.AgentPaths) > 0 {
			out = append(out, agentdef.PluginAgents{Plugin: p.Name, Paths: p.AgentPaths})
		}
	}
	return out
}

// AddPlugins loads the session's plugins (the installed ones the settings
// enable, then dirs) and adds their hooks and MCP servers to s as Load
// does, for commands that list them (`cadre hooks`). It returns the
// plugins' diagnostics.
func (s *Settings) AddPlugins(home string, dirs []plugin.Dir) []Diagnostic {
	_, diags := s.addPlugins(home, dirs)
	return diags
}

// addPlugins loads the session's plugins and adds their hooks and MCP
// servers to s, as user-level sources: hooks and servers are gated by
// workspace trust exactly as a project's files are, so a plugin lying in
// an untrusted workspace (a --plugin-dir inside the repository) contributes
// none, and s.Trust reports each one left out.
func (s *Settings) addPlugins(home string, dirs []plugin.Dir) (sessionPlugins, []Diagnostic) {
	list, diags := Plugins(home, dirs, s.EnabledPlugins)
	sp := sessionPlugins{agents: PluginAgents(list), skills: PluginSkills(list)}
	for _, p := range list {
		if len(p.Hooks) > 0 {
			s.Hooks = append(s.Hooks, RawSource{Raw: p.Hooks, Source: p.HooksFile, Project: s.Trust.FromProject(p.HooksFile)})
		}
		if len(p.MCPServers) > 0 {
			// Lowest precedence: the user's and the project's servers of the
			// same name win.
			s.MCPServers = append([]mcpx.SettingsServers{{Scope: mcpx.ScopeUser, File: p.MCPFile, Raw: p.MCPServers}}, s.MCPServers...)
		}
	}
	return sp, diags
}

// SessionPlugins loads the plugins a session in cwd would load — those
// Claude Code installed that the settings' enabledPlugins turn on, then
// dirs (--plugin-dir) — for the commands that list agents or skills
// without building a session (`cadre agents`, `cadre skills`). A settings
// file that cannot be read is a diagnostic here: the listing still shows
// the --plugin-dir plugins.
func SessionPlugins(cwd, home string, dirs []plugin.Dir, getenv func(string) string) ([]*plugin.Plugin, []Diagnostic) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var diags []Diagnostic
	var enabled map[string]bool
	if cwd, err := absDir(cwd); err == nil && home != "" {
		s, sdiags, err := LoadSettings(Options{Getenv: getenv}.settingsOptions(cwd, home, getenv))
		if err != nil {
			diags = append(diags, Diagnostic{Severity: SeverityError, Topic: TopicPlugins, Message: fmt.Sprintf("settings not read, so no installed plugin is loaded: %v", err)})
		} else {
			enabled = s.EnabledPlugins
			for _, d := range sdiags {
				if d.Severity == SeverityError {
					diags = append(diags, d)
				}
			}
		}
	}
	list, pdiags := Plugins(home, dirs, enabled)
	return list, append(diags, pdiags...)
}

// SessionPluginAgents is SessionPlugins' agent sources, for agentdef.Load.
func SessionPluginAgents(cwd, home string, dirs []plugin.Dir, getenv func(string) string) ([]agentdef.PluginAgents, []Diagnostic) {
	list, diags := SessionPlugins(cwd, home, dirs, getenv)
	return PluginAgents(list), diags
}

// PluginSkills lists the skills directories of plugins for skills.Load.
func PluginSkills(list []*plugin.Plugin) []skills.PluginSkills {
	var out []skills.PluginSkills
	for _, p := range list {
		if len(p.SkillDirs) > 0 {
			out = append(out, skills.PluginSkills{Plugin: p.Name, Dirs: p.SkillDirs})
		}
	}
	return out
}
