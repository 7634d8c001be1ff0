package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/sandbox"
)

// The Bash sandbox's settings (issue 9, S-10.5), in the shape of Claude
// Code's `sandbox` object:
//
//	{"sandbox": {"enabled": true, "backgroundOnly": false, "failIfUnavailable": true,
//	  "network": {"enabled": false}, "filesystem": {"allowWrite": ["~/.kube"]}}}
//
// enabled, failIfUnavailable and filesystem.allowWrite are Claude Code's
// keys. backgroundOnly (confine only background sub-agents) and
// network.enabled (network on or off; on by default) are cadre's:
// bubblewrap cuts the network as a whole, and cadre has no proxy that
// filters by domain, so Claude Code's network.allowedDomains cuts the
// network (unless network.enabled says otherwise) and warns. The Go, npm,
// pip and cargo caches are writable in any case (internal/sandbox.DefaultWritable).
//
// Workspace trust (S-10.4): a project file may turn the sandbox on, widen
// it to every agent, cut the network and make an unavailable sandbox an
// error; what loosens it — turning it off or down to background agents
// where a file below turned it on, turning the network back on, making an
// unavailable sandbox a warning again, writable paths outside the
// workspace — applies only in a trusted workspace, and is reported
// otherwise.

// SandboxSettings is the merged sandbox object; a higher file overrides
// single keys, and allowWrite entries add up.
type SandboxSettings struct {
	Enabled, BackgroundOnly, FailIfUnavailable BoolValue
	// Network is network.enabled; NetworkSet says whether any file set it
	// (or cut it with network.allowedDomains).
	Network    BoolValue
	NetworkSet bool
	// AllowWrite are filesystem.allowWrite, absolute.
	AllowWrite []Dir
}

// sandboxData is the JSON shape of one file's sandbox object; keys cadre
// does not apply are reported by checkKeys and not decoded.
type sandboxData struct {
	Enabled           *bool `json:"enabled"`
	BackgroundOnly    *bool `json:"backgroundOnly"`
	FailIfUnavailable *bool `json:"failIfUnavailable"`
	Network           *struct {
		Enabled        *bool    `json:"enabled"`
		AllowedDomains []string `json:"allowedDomains"`
	} `json:"network"`
	Filesystem *struct {
		AllowWrite []string `json:"allowWrite"`
	} `json:"filesystem"`
}

// sandboxLevel orders how much the sandbox confines: off, background
// sub-agents only, every agent.
func sandboxLevel(enabled, backgroundOnly bool) int {
	switch {
	case !enabled:
		return 0
	case backgroundOnly:
		return 1
	}
	return 2
}

// applySandbox merges a file's sandbox object. A workspace file (gate
// set) may confine more, never less, unless the workspace is trusted.
func (s *Settings) applySandbox(data []byte, keys []keyPos, path, base, home string, gate *Trust) ([]Diagnostic, error) {
	var fd struct {
		Sandbox *json.RawMessage `json:"sandbox"`
	}
	if err := json.Unmarshal(data, &fd); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
	}
	if fd.Sandbox == nil || string(*fd.Sandbox) == "null" {
		return nil, nil
	}
	var sd sandboxData
	if err := json.Unmarshal(*fd.Sandbox, &sd); err != nil {
		return nil, fmt.Errorf("%w: %s: sandbox: %v (keys: enabled, backgroundOnly, failIfUnavailable, network.enabled, filesystem.allowWrite)", ErrMalformed, path, err)
	}
	allow := func(what string) bool { return gate == nil || gate.Allow(path, what) }
	cur := &s.Sandbox
	var diags []Diagnostic

	enabled, bgOnly := cur.Enabled.Value, cur.BackgroundOnly.Value
	if sd.Enabled != nil {
		enabled = *sd.Enabled
	}
	if sd.BackgroundOnly != nil {
		bgOnly = *sd.BackgroundOnly
	}
	// Confining less than the files below did loosens the sandbox; so
	// does backgroundOnly while the sandbox stays off, which would limit
	// the sandbox a file above turns on.
	lower := sandboxLevel(enabled, bgOnly) < sandboxLevel(cur.Enabled.Value, cur.BackgroundOnly.Value)
	dangling := sd.BackgroundOnly != nil && *sd.BackgroundOnly && !enabled
	if (!lower && !dangling) || allow(sandboxLevelText(sd.Enabled, sd.BackgroundOnly)) {
		if sd.Enabled != nil {
			cur.Enabled = BoolValue{Value: *sd.Enabled, Source: path}
		}
		if sd.BackgroundOnly != nil {
			cur.BackgroundOnly = BoolValue{Value: *sd.BackgroundOnly, Source: path}
		}
	}
	if v := sd.FailIfUnavailable; v != nil && (*v || !cur.FailIfUnavailable.Value || allow("sandbox.failIfUnavailable false")) {
		cur.FailIfUnavailable = BoolValue{Value: *v, Source: path}
	}
	if n := sd.Network; n != nil {
		on := n.Enabled
		if on == nil && len(n.AllowedDomains) > 0 {
			off := false
			on = &off
			d := Diagnostic{File: path, Severity: SeverityWarning, Topic: TopicSettings,
				Message: "sandbox.network.allowedDomains: cadre cannot let sandboxed commands reach some hosts and not others, so the network is off for them; set sandbox.network.enabled to true to allow every host"}
			if i := slices.IndexFunc(keys, func(k keyPos) bool { return k.parent == "sandbox.network" && k.name == "allowedDomains" }); i >= 0 {
				d.Line, d.Column = lineCol(data, keys[i].offset)
			}
			diags = append(diags, d)
		}
		netOn := !cur.NetworkSet || cur.Network.Value
		if on != nil && (!*on || netOn || allow("sandbox.network.enabled true")) {
			cur.Network, cur.NetworkSet = BoolValue{Value: *on, Source: path}, true
		}
	}
	if f := sd.Filesystem; f != nil {
		for _, w := range f.AllowWrite {
			p := expandHome(w, home)
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			p = filepath.Clean(p)
			if gate != nil && !within(p, gate.Root) && !allow("sandbox.filesystem.allowWrite "+strconv.Quote(w)) {
				continue
			}
			if !slices.ContainsFunc(cur.AllowWrite, func(d Dir) bool { return d.Path == p }) {
				cur.AllowWrite = append(cur.AllowWrite, Dir{Path: p, Source: path})
			}
		}
	}
	return diags, nil
}

// sandboxLevelText names what a workspace file set that would confine
// less.
func sandboxLevelText(enabled, backgroundOnly *bool) string {
	switch {
	case enabled != nil && !*enabled:
		return "sandbox.enabled false"
	case backgroundOnly != nil && *backgroundOnly:
		return "sandbox.backgroundOnly true"
	}
	return "sandbox.backgroundOnly false"
}

// SandboxConfig is the session's sandbox: the settings' sandbox object,
// turned on for every agent by --sandbox (flag); nil when off. getenv
// locates the tool caches (internal/sandbox.DefaultWritable).
func (s *Settings) SandboxConfig(flag bool, getenv func(string) string) *cadre.SandboxConfig {
	sb := s.Sandbox
	if !flag && !sb.Enabled.Value {
		return nil
	}
	cfg := &cadre.SandboxConfig{
		BackgroundOnly:    sb.BackgroundOnly.Value && !flag,
		NoNetwork:         sb.NetworkSet && !sb.Network.Value,
		FailIfUnavailable: sb.FailIfUnavailable.Value,
		Writable:          sandbox.DefaultWritable(getenv),
	}
	for _, d := range sb.AllowWrite {
		if !slices.Contains(cfg.Writable, d.Path) {
			cfg.Writable = append(cfg.Writable, d.Path)
		}
	}
	return cfg
}
