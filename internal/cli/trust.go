package cli

import (
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// trustOf is init's account of the mode in force and where widening
// settings came from; nil when the configuration says nothing about it.
func trustOf(mode permission.Mode, p *run.Provenance) *trustJSON {
	if p == nil {
		return nil
	}
	conv := func(list []run.Setting) []settingJSON {
		out := make([]settingJSON, 0, len(list))
		for _, s := range list {
			out = append(out, settingJSON(s))
		}
		return out
	}
	return &trustJSON{Trusted: p.Trusted, Source: p.TrustSource, PermissionMode: mode, ModeSource: p.ModeSource,
		Widenings: conv(p.Widenings), Ignored: conv(p.Ignored)}
}
