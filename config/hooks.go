package config

import (
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/hooks"
)

// HookPolicy is what the settings say about hooks as a whole.
type HookPolicy struct {
	// ManagedOnly is allowManagedHooksOnly from managed settings: only
	// managed hooks run. Source names the file.
	ManagedOnly       bool
	ManagedOnlySource string
	// DisableAll is disableAllHooks: a managed file turns every hook off,
	// any other file every hook but the managed ones (as in Claude Code,
	// a user or project file cannot turn off policy hooks).
	DisableAll        bool
	DisableAllManaged bool
	DisableAllSource  string
}

// applyHookPolicy merges a file's allowManagedHooksOnly and
// disableAllHooks; the higher file wins, except that only managed
// settings may set allowManagedHooksOnly (a warning says so elsewhere).
func (s *Settings) applyHookPolicy(fd *fileData, path string) {
	if v := fd.AllowManagedHooksOnly; v != nil && s.layer.managed {
		s.HookPolicy.ManagedOnly, s.HookPolicy.ManagedOnlySource = *v, path
	}
	if v := fd.DisableAllHooks; v != nil {
		if s.HookPolicy.DisableAllManaged && !s.layer.managed {
			return
		}
		s.HookPolicy.DisableAll, s.HookPolicy.DisableAllManaged, s.HookPolicy.DisableAllSource = *v, *v && s.layer.managed, path
	}
}

// hookPolicyDiagnostics warns about policy keys a file sets that it may
// not: allowManagedHooksOnly outside managed settings.
func (s *Settings) hookPolicyDiagnostics(fd *fileData, path string, data []byte, keys []keyPos) []Diagnostic {
	if fd.AllowManagedHooksOnly == nil || s.layer.managed {
		return nil
	}
	d := Diagnostic{File: path, Severity: SeverityWarning, Topic: TopicSettings,
		Message: `"allowManagedHooksOnly" is honoured only in managed settings; ignored`}
	for _, k := range keys {
		if k.parent == "" && k.name == "allowManagedHooksOnly" {
			d.Line, d.Column = lineCol(data, k.offset)
		}
	}
	return []Diagnostic{d}
}

// hooksUntrusted is HooksConfig's warning for a project file's hooks the
// trust function refused (Load's Trust reports them in more detail).
const hooksUntrusted = "hooks ignored: the workspace is not trusted"

// GatedHooksConfig is HooksConfig under the workspace trust the settings
// were loaded with (and extra, when not nil): an untrusted workspace's
// hooks are left out and reported once, by s.Trust, as config.Load does.
func (s *Settings) GatedHooksConfig(extra TrustProject) (*hooks.Config, []Diagnostic, error) {
	cfg, diags, err := s.HooksConfig(func(file string) bool {
		return s.Trust.Allow(file, "hooks") && (extra == nil || extra(file))
	})
	return cfg, slices.DeleteFunc(diags, func(d Diagnostic) bool { return d.Message == hooksUntrusted }), err
}

// TrustProject decides whether hooks from a project's settings files may
// run (workspace trust); nil trusts every project.
type TrustProject func(file string) bool

// HooksConfig merges the hooks of every settings file, lowest precedence
// first (hooks add up across files), into the configuration the runtime's
// dispatcher runs (cadre.Config.Hooks). Managed settings with
// allowManagedHooksOnly keep only managed hooks, disableAllHooks turns
// hooks off (a non-managed file only the non-managed ones), and trust,
// when set, drops the hooks of project files it does not trust. What is
// dropped, and problems that did not stop loading (unknown events,
// unsupported hook types), are warnings; a hooks value that cannot be used
// is an error naming its file.
func (s *Settings) HooksConfig(trust TrustProject) (*hooks.Config, []Diagnostic, error) {
	var diags []Diagnostic
	p := s.HookPolicy
	if p.DisableAll && p.DisableAllManaged {
		return &hooks.Config{}, nil, nil
	}
	var sources []hooks.Source
	for _, h := range s.Hooks {
		switch {
		case p.DisableAll && !h.Managed:
			// Turned off on purpose (disableAllHooks): no warning.
			continue
		case h.Project && trust != nil && !trust(h.Source):
			diags = append(diags, Diagnostic{File: h.Source, Severity: SeverityWarning, Topic: TopicSettings,
				Message: hooksUntrusted})
			continue
		}
		sources = append(sources, hooks.Source{Raw: h.Raw, File: h.Source, Managed: h.Managed})
	}
	cfg, hdiags, err := hooks.Merge(sources, hooks.MergeOptions{ManagedOnly: p.ManagedOnly})
	if err != nil {
		return nil, diags, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	for _, d := range hdiags {
		diags = append(diags, Diagnostic{File: d.File, Severity: SeverityWarning, Topic: TopicSettings, Message: hookMessage(d)})
	}
	return cfg, diags, nil
}

func hookMessage(d hooks.Diagnostic) string {
	if d.Path == "" {
		return d.Message
	}
	return d.Path + ": " + d.Message
}
