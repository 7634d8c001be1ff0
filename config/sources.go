package config

import (
	"slices"

	"github.com/cadre-dev/cadre/internal/mcpx"
)

// Setting sources: the settings levels a run loads, as the Agent SDK's
// settingSources (Claude Code's --setting-sources) names them.
const (
	// SourceUser is the user's settings file.
	SourceUser = "user"
	// SourceProject is the project's shared settings file.
	SourceProject = "project"
	// SourceLocal is the project's local settings file.
	SourceLocal = "local"
)

// SettingSources lists the valid setting sources.
func SettingSources() []string { return []string{SourceUser, SourceProject, SourceLocal} }

// keepSources drops the layers of the levels sources does not name; nil
// sources keeps every layer. The --settings flag's layer and managed
// settings are no source and always load.
func keepSources(layers []layer, sources []string) []layer {
	if sources == nil {
		return layers
	}
	return slices.DeleteFunc(layers, func(l layer) bool {
		var src string
		switch l.scope {
		case mcpx.ScopeUser:
			src = SourceUser
		case mcpx.ScopeSettings:
			src = SourceProject
		case mcpx.ScopeLocal:
			src = SourceLocal
		default:
			return false
		}
		return !slices.Contains(sources, src)
	})
}
