package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// settingsTrust decides the trust LoadSettings gates workspace files with:
// --trust-project, the trust file, and trustedWorkspaces in the files the
// user controls (user settings, --settings, managed settings).
func settingsTrust(opts SettingsOptions) (*Trust, error) {
	if opts.Cwd == "" {
		return &Trust{}, nil
	}
	var listed []run.Setting
	var files []layer
	for _, l := range userLayers(opts) {
		if !l.project {
			files = append(files, l)
		}
	}
	managed, err := managedLayers(opts)
	if err != nil {
		return nil, err
	}
	for _, l := range append(files, managed...) {
		data := l.inline
		if data == nil {
			data, err = os.ReadFile(l.path)
			if err != nil {
				continue // LoadSettings reports a file it cannot read
			}
		}
		var td struct {
			TrustedWorkspaces []string `json:"trustedWorkspaces"`
		}
		if json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))).Decode(&td) != nil {
			continue // and one it cannot parse
		}
		for _, w := range td.TrustedWorkspaces {
			p := expandHome(w, opts.Home)
			if !filepath.IsAbs(p) {
				p = filepath.Join(l.base, p)
			}
			listed = append(listed, run.Setting{What: filepath.Clean(p), Source: l.path})
		}
	}
	return ResolveTrust(TrustOptions{Cwd: opts.Cwd, Home: opts.Home, Flag: opts.TrustProject, Listed: listed,
		ManagedDir: cmpOr(opts.ManagedDir, DefaultManagedDir)})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// filter drops from a workspace file what widens the run, unless the
// workspace is trusted; each dropped item is recorded by Allow. Deny and
// ask rules, a lower mode and the other keys always apply.
func (t *Trust) filter(fd *fileData, path, base, home string) {
	if p := fd.Permissions; p != nil {
		p.Allow = slices.DeleteFunc(p.Allow, func(raw string) bool {
			return !t.Allow(path, "permissions.allow "+strconv.Quote(raw))
		})
		if p.DefaultMode != nil {
			if m, err := permission.ParseMode(*p.DefaultMode); err == nil && permission.Rank(m) > permission.Rank(permission.ModeDefault) &&
				!t.Allow(path, "permissions.defaultMode "+string(m)) {
				p.DefaultMode = nil
			}
		}
		p.AdditionalDirectories = slices.DeleteFunc(p.AdditionalDirectories, func(d string) bool {
			q := expandHome(d, home)
			if !filepath.IsAbs(q) {
				q = filepath.Join(base, q)
			}
			return !within(filepath.Clean(q), t.Root) && !t.Allow(path, "permissions.additionalDirectories "+strconv.Quote(d))
		})
	}
	keys := make([]string, 0, len(fd.Env))
	for k := range fd.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !SafeProjectEnv(k) && !t.Allow(path, "env."+k) {
			delete(fd.Env, k)
		}
	}
	// hooks: kept, marked as the project's; Load gates them (HooksConfig).
	if len(fd.TrustedWorkspaces) > 0 {
		// A workspace cannot vouch for itself, trusted or not.
		t.mu.Lock()
		s := run.Setting{What: "trustedWorkspaces", Source: path}
		if !slices.Contains(t.ignored, s) {
			t.ignored = append(t.ignored, s)
		}
		t.mu.Unlock()
		fd.TrustedWorkspaces = nil
	}
}

// provenance says where the mode and each widening setting came from,
// and what the workspace did not get.
func provenance(s *Settings, mode permission.Mode, opts Options) *run.Provenance {
	p := &run.Provenance{Ignored: s.Trust.Ignored()}
	if s.Trust != nil {
		p.Trusted, p.TrustSource = s.Trust.Trusted, s.Trust.Source
	}
	switch {
	case opts.PermissionMode != "":
		p.ModeSource = "--permission-mode"
	case opts.SkipPermissions:
		p.ModeSource = "--dangerously-skip-permissions"
	default:
		p.ModeSource = s.Permissions.DefaultMode.Source
	}
	if permission.Rank(mode) > permission.Rank(permission.ModeDefault) {
		p.Widenings = append(p.Widenings, run.Setting{What: "permission mode " + string(mode), Source: cmpOr(p.ModeSource, "default")})
	}
	for _, r := range s.Permissions.Rules {
		if r.Behavior == permission.Allow {
			p.Widenings = append(p.Widenings, run.Setting{What: fmt.Sprintf("allow %s", r), Source: r.Source})
		}
	}
	for _, d := range s.Permissions.AdditionalDirectories {
		if s.Trust != nil && within(d.Path, s.Trust.Root) {
			continue // inside the workspace: widens nothing
		}
		p.Widenings = append(p.Widenings, run.Setting{What: "directory " + d.Path, Source: d.Source})
	}
	return p
}

// gateAgents drops from the workspace's agent definitions what runs
// commands — frontmatter hooks and inline MCP server configurations —
// unless the workspace is trusted; a definition that names a configured
// server keeps the name. Definitions are copied, never changed in place.
func gateAgents(defs []*agentdef.Definition, t *Trust) []*agentdef.Definition {
	out := make([]*agentdef.Definition, 0, len(defs))
	for _, d := range defs {
		if t == nil || t.Trusted || !t.FromProject(d.Path) || (len(d.Hooks) == 0 && !hasInlineServer(d.MCPServers)) {
			out = append(out, d)
			continue
		}
		c := *d
		if len(c.Hooks) > 0 && string(c.Hooks) != "null" && !t.Allow(d.Path, "hooks of agent "+d.Name) {
			c.Hooks = nil
		}
		c.MCPServers = slices.DeleteFunc(slices.Clone(c.MCPServers), func(raw json.RawMessage) bool {
			return isInlineServer(raw) && !t.Allow(d.Path, "mcpServers of agent "+d.Name+" "+string(bytes.TrimSpace(raw)))
		})
		out = append(out, &c)
	}
	return out
}

func hasInlineServer(list []json.RawMessage) bool { return slices.ContainsFunc(list, isInlineServer) }

// isInlineServer reports an mcpServers entry that configures a server
// (an object) rather than naming one.
func isInlineServer(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{"))
}
