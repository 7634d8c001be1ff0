package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre"
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
		ManagedDir: cmpOr(opts.ManagedDir, DefaultManagedDir), ClaudeManagedDir: cmpOr(opts.ClaudeManagedDir, DefaultClaudeManagedDir),
		ConfigHome: opts.ConfigHome})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gateRaw drops from a workspace file's content what widens the run
// (issue 23), unless the workspace is trusted: every key the table marks
// Widening, and the widening values of the WideningSome ones (valueGates);
// each dropped item is recorded by Allow and reported. Keys whose loaders
// gate them item by item (loaderGate: hooks, MCP servers, the sandbox,
// webSearch) pass. It returns data itself when nothing was dropped.
func (t *Trust) gateRaw(data []byte, path, base, home string, s *Settings) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return data
	}
	g := gateCtx{t: t, path: path, base: base, home: home, s: s}
	if !g.object("", top) {
		return data
	}
	out, err := json.Marshal(top)
	if err != nil {
		return data
	}
	return out
}

// gateCtx is what a value gate needs: the trust, the file, where its
// relative paths start, and the settings merged so far.
type gateCtx struct {
	t                *Trust
	path, base, home string
	s                *Settings
}

// object gates the keys of one settings object (parent "" is the top
// level) in place and reports whether it changed anything.
func (g gateCtx) object(parent string, obj map[string]json.RawMessage) bool {
	changed := false
	// In the table's order, so that what is reported comes in a stable
	// order: unknown keys do nothing (and are reported by checkKeys).
	for _, k := range keyList(parent) {
		full := k.Name
		name := full
		if parent != "" {
			var ok bool
			if name, ok = strings.CutPrefix(full, parent+"."); !ok || strings.Contains(name, ".") {
				continue // a key of another object
			}
		}
		v, ok := obj[name]
		if !ok {
			continue
		}
		if gate, ok := valueGates[full]; ok {
			nv, keep := gate(g, full, v)
			switch {
			case !keep:
				delete(obj, name)
				changed = true
			case !bytes.Equal(nv, v):
				obj[name] = nv
				changed = true
			}
			continue
		}
		if slices.Contains(keyObjects, full) {
			var sub map[string]json.RawMessage
			if json.Unmarshal(v, &sub) == nil && g.object(full, sub) {
				if b, err := json.Marshal(sub); err == nil {
					obj[name] = b
					changed = true
				}
			}
			continue
		}
		if k.Effect == Widening && !k.loaderGate && !g.t.Allow(g.path, full) {
			delete(obj, name)
			changed = true
		}
	}
	return changed
}

// A valueGate returns a key's value without what widens; keep false drops
// the key.
type valueGate func(g gateCtx, key string, v json.RawMessage) (out json.RawMessage, keep bool)

// valueGates gate the keys whose items or values decide whether they
// widen. Every WideningSome key that its loader does not gate has one
// (TestEveryKeyHasATrustMark).
var valueGates = map[string]valueGate{
	"permissions.allow": gateList(func(g gateCtx, key, item string) bool {
		return g.t.Allow(g.path, key+" "+strconv.Quote(item))
	}),
	"permissions.additionalDirectories": gateList(func(g gateCtx, key, d string) bool {
		q := expandHome(d, g.home)
		if !filepath.IsAbs(q) {
			q = filepath.Join(g.base, q)
		}
		return within(filepath.Clean(q), g.t.Root) || g.t.Allow(g.path, key+" "+strconv.Quote(d))
	}),
	"permissions.defaultMode": func(g gateCtx, key string, v json.RawMessage) (json.RawMessage, bool) {
		var mode string
		if json.Unmarshal(v, &mode) != nil {
			return v, true // the loader reports the type
		}
		m, err := permission.ParseMode(mode)
		return v, err != nil || permission.Rank(m) <= permission.Rank(permission.ModeDefault) || g.t.Allow(g.path, key+" "+string(m))
	},
	"env": func(g gateCtx, _ string, v json.RawMessage) (json.RawMessage, bool) {
		var env map[string]json.RawMessage
		if json.Unmarshal(v, &env) != nil {
			return v, true
		}
		n := len(env)
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if !SafeProjectEnv(k) && !g.t.Allow(g.path, "env."+k) {
				delete(env, k)
			}
		}
		if len(env) == n {
			return v, true
		}
		if len(env) == 0 {
			return nil, false
		}
		b, err := json.Marshal(env)
		return b, err == nil
	},
	"maxDepth":            gateLimit(func(s *Settings) int { return cmpOrInt(s.MaxDepth.Value, cadre.DefaultMaxDepth) }),
	"maxConcurrentAgents": gateLimit(func(s *Settings) int { return cmpOrInt(s.MaxConcurrentAgents.Value, cadre.DefaultMaxRunning) }),
	"maxTotalAgents":      gateLimit(func(s *Settings) int { return cmpOrInt(s.MaxTotalAgents.Value, cadre.DefaultMaxTotal) }),
	// A workspace cannot vouch for itself, trusted or not.
	"trustedWorkspaces": func(g gateCtx, key string, v json.RawMessage) (json.RawMessage, bool) {
		g.t.record(run.Setting{What: key, Source: g.path})
		return nil, false
	},
}

// gateList keeps the string items of a list that allow says may stay.
func gateList(allow func(g gateCtx, key, item string) bool) valueGate {
	return func(g gateCtx, key string, v json.RawMessage) (json.RawMessage, bool) {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return v, true // the loader reports the type
		}
		kept := items[:0:0]
		for _, it := range items {
			var str string
			if json.Unmarshal(it, &str) != nil || allow(g, key, str) {
				kept = append(kept, it)
			}
		}
		if len(kept) == len(items) {
			return v, true
		}
		if len(kept) == 0 {
			return nil, false
		}
		b, err := json.Marshal(kept)
		return b, err == nil
	}
}

// gateLimit lets a workspace lower a sub-agent limit, not raise it above
// the value of the files below it (or the default).
func gateLimit(current func(*Settings) int) valueGate {
	return func(g gateCtx, key string, v json.RawMessage) (json.RawMessage, bool) {
		var n int
		if json.Unmarshal(v, &n) != nil {
			return v, true
		}
		return v, n <= current(g.s) || g.t.Allow(g.path, fmt.Sprintf("%s %d", key, n))
	}
}

func cmpOrInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// record notes an ignored item without asking (what no workspace may set).
func (t *Trust) record(s run.Setting) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.Contains(t.ignored, s) {
		t.ignored = append(t.ignored, s)
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
// commands — frontmatter hooks and inline MCP server configurations — and
// a permissionMode that widens (acceptEdits, auto, bypassPermissions)
// unless the workspace is trusted; a definition that names a configured
// server keeps the name. Definitions are copied, never changed in place.
func gateAgents(defs []*agentdef.Definition, t *Trust) []*agentdef.Definition {
	out := make([]*agentdef.Definition, 0, len(defs))
	for _, d := range defs {
		widens := permission.Rank(d.PermissionMode) > permission.Rank(permission.ModeDefault)
		if t == nil || t.Trusted || !t.FromProject(d.Path) || (len(d.Hooks) == 0 && !hasInlineServer(d.MCPServers) && !widens) {
			out = append(out, d)
			continue
		}
		c := *d
		if widens && !t.Allow(d.Path, "permissionMode "+string(d.PermissionMode)+" of agent "+d.Name) {
			c.PermissionMode = "" // S-10.3: an untrusted workspace's agent file cannot widen
		}
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
