// Package plugin reads Claude Code plugins (S-4.4): a directory holding
// .claude-plugin/plugin.json and, by default, agents/*.md,
// skills/*/SKILL.md, hooks/hooks.json and .mcp.json. It finds the plugins
// given with --plugin-dir and those Claude Code installed under
// ~/.claude/plugins (installed_plugins.json, enabled by the settings'
// enabledPlugins). It only reads files: the agentdef, skills and config
// packages load what a plugin contributes, under their own rules.
package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ManifestPath is where a plugin's manifest lies, relative to its root.
const ManifestPath = ".claude-plugin/plugin.json"

// RootVar is the variable a plugin's hooks and MCP servers use for the
// plugin's directory; it is replaced by the absolute path.
const RootVar = "${CLAUDE_PLUGIN_ROOT}"

// maxManifest bounds the manifest, hooks and .mcp.json files read.
const maxManifest = 1 << 20

// Plugin is one plugin, read from its directory.
type Plugin struct {
	// Name namespaces the plugin's agents and skills (name:agent).
	Name        string
	Version     string
	Description string
	// Root is the plugin's directory (absolute).
	Root string
	// Origin says how it was found: "--plugin-dir", or the key of
	// installed_plugins.json ("name@marketplace").
	Origin string
	// AgentPaths are directories scanned for agent files and single agent
	// files: agents/ and the manifest's agents entries.
	AgentPaths []string
	// SkillDirs are directories holding <skill>/SKILL.md: skills/ and the
	// manifest's skills entries.
	SkillDirs []string
	// Hooks is the plugin's hooks object (the "hooks" member of
	// hooks/hooks.json, or the manifest's inline value), with RootVar
	// replaced; HooksFile is the file it came from.
	Hooks     json.RawMessage
	HooksFile string
	// MCPServers is the plugin's mcpServers object (.mcp.json, or the
	// manifest's), with RootVar replaced; MCPFile is its file.
	MCPServers json.RawMessage
	MCPFile    string
}

// Diagnostic is a problem with a plugin's files; Error means the plugin
// (or the part named) was not loaded.
type Diagnostic struct {
	File    string
	Message string
	Error   bool
}

// manifest is the JSON shape of plugin.json. Paths may be one string or a
// list; hooks and mcpServers may also be an inline object.
type manifest struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Description  string          `json:"description"`
	Agents       json.RawMessage `json:"agents"`
	Skills       json.RawMessage `json:"skills"`
	Commands     json.RawMessage `json:"commands"`
	Hooks        json.RawMessage `json:"hooks"`
	MCPServers   json.RawMessage `json:"mcpServers"`
	OutputStyles json.RawMessage `json:"outputStyles"`
	LSPServers   json.RawMessage `json:"lspServers"`
}

// CheckName says what is wrong with name as a plugin name, or "". A
// plugin name becomes the namespace of agent and skill names, so it has no
// ":" and no path separators: 1-64 ASCII letters, digits, '.', '_' or
// '-', starting with a letter or digit, and no "..".
func CheckName(name string) string {
	const msg = "a plugin name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
	if len(name) == 0 || len(name) > 64 || strings.Contains(name, "..") {
		return msg
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return msg
		}
	}
	return ""
}

// Load reads the plugin in dir. A missing manifest names the plugin after
// its directory, as Claude Code does. A manifest that is not valid JSON,
// or a bad name, is an error; problems with single parts are diagnostics.
func Load(dir, origin string) (*Plugin, []Diagnostic, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: %w", dir, err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("plugin %s: not a directory", dir)
	}
	p := &Plugin{Root: root, Origin: origin}
	var diags []Diagnostic
	var m manifest
	mpath := filepath.Join(root, ManifestPath)
	data, err := readSmall(mpath)
	switch {
	case os.IsNotExist(err):
		m.Name = filepath.Base(root)
	case err != nil:
		return nil, nil, fmt.Errorf("plugin %s: %w", mpath, err)
	default:
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, nil, fmt.Errorf("plugin manifest %s: %w", mpath, err)
		}
		if m.Name == "" {
			return nil, nil, fmt.Errorf("plugin manifest %s: \"name\" is required", mpath)
		}
	}
	if msg := CheckName(m.Name); msg != "" {
		return nil, nil, fmt.Errorf("plugin %s: invalid name %q: %s", root, m.Name, msg)
	}
	p.Name, p.Version, p.Description = m.Name, m.Version, m.Description
	for _, k := range []struct {
		raw  json.RawMessage
		name string
	}{{m.Commands, "commands"}, {m.OutputStyles, "outputStyles"}, {m.LSPServers, "lspServers"}} {
		if len(k.raw) > 0 {
			diags = append(diags, Diagnostic{File: mpath, Message: fmt.Sprintf("%q: plugin %s are not supported by cadre; ignored", k.name, k.name)})
		}
	}
	if st, err := os.Stat(filepath.Join(root, "commands")); err == nil && st.IsDir() && len(m.Commands) == 0 {
		diags = append(diags, Diagnostic{File: filepath.Join(root, "commands"), Message: "plugin commands (slash commands) are not supported by cadre; ignored"})
	}
	// Agents and skills: the default directory, then the manifest's paths
	// (which add to it).
	p.AgentPaths = existing(filepath.Join(root, "agents"))
	paths, ds := manifestPaths(root, mpath, "agents", m.Agents)
	p.AgentPaths, diags = append(p.AgentPaths, paths...), append(diags, ds...)
	p.SkillDirs = existing(filepath.Join(root, "skills"))
	paths, ds = manifestPaths(root, mpath, "skills", m.Skills)
	p.SkillDirs, diags = append(p.SkillDirs, paths...), append(diags, ds...)
	// Hooks: hooks/hooks.json, or the manifest's path or object.
	p.Hooks, p.HooksFile, ds = p.component(mpath, "hooks", m.Hooks, filepath.Join(root, "hooks", "hooks.json"), "hooks")
	diags = append(diags, ds...)
	p.Hooks = p.withRootEnv(p.Hooks, hookCommands)
	p.MCPServers, p.MCPFile, ds = p.component(mpath, "mcpServers", m.MCPServers, filepath.Join(root, ".mcp.json"), "mcpServers")
	diags = append(diags, ds...)
	p.MCPServers = p.withRootEnv(p.MCPServers, serverEnv)
	return p, diags, nil
}

// component reads the hooks or MCP servers of a plugin: the manifest's
// value (a path, or an inline object) or else the default file. member is
// the key holding the object inside a file ("hooks", "mcpServers"); a
// file without it is the object itself.
func (p *Plugin) component(mpath, key string, raw json.RawMessage, def, member string) (json.RawMessage, string, []Diagnostic) {
	file := def
	var data []byte
	switch {
	case len(raw) > 0 && raw[0] == '{':
		data, file = raw, mpath
	case len(raw) > 0:
		paths, ds := manifestPaths(p.Root, mpath, key, raw)
		if len(paths) == 0 {
			return nil, "", ds
		}
		file = paths[0]
		if len(paths) > 1 {
			ds = append(ds, Diagnostic{File: mpath, Message: fmt.Sprintf("%q: only the first file is read", key)})
		}
		b, err := readSmall(file)
		if err != nil {
			return nil, "", append(ds, Diagnostic{File: file, Message: fmt.Sprintf("cannot read: %v", err), Error: true})
		}
		data = b
	default:
		b, err := readSmall(def)
		if os.IsNotExist(err) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", []Diagnostic{{File: def, Message: fmt.Sprintf("cannot read: %v", err), Error: true}}
		}
		data = b
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, "", []Diagnostic{{File: file, Message: fmt.Sprintf("%s: not a JSON object: %v; ignored", key, err), Error: true}}
	}
	out := json.RawMessage(data)
	if inner, ok := obj[member]; ok {
		out = inner
	}
	return p.expand(out), file, nil
}

// withRootEnv gives the commands of a hooks or mcpServers object the
// CLAUDE_PLUGIN_ROOT environment variable, as Claude Code does, so that a
// plugin's scripts can use it too; set does it to one decoded object.
func (p *Plugin) withRootEnv(v json.RawMessage, set func(obj map[string]any, root string)) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	var obj map[string]any
	if err := json.Unmarshal(v, &obj); err != nil {
		return v
	}
	set(obj, p.Root)
	b, err := json.Marshal(obj)
	if err != nil {
		return v
	}
	return b
}

// hookCommands prefixes every command hook of a hooks object (event →
// groups → hooks) with an export of CLAUDE_PLUGIN_ROOT.
func hookCommands(obj map[string]any, root string) {
	for _, groups := range obj {
		gl, _ := groups.([]any)
		for _, g := range gl {
			gm, _ := g.(map[string]any)
			hl, _ := gm["hooks"].([]any)
			for _, h := range hl {
				hm, _ := h.(map[string]any)
				if cmd, ok := hm["command"].(string); ok && cmd != "" {
					hm["command"] = "export CLAUDE_PLUGIN_ROOT=" + shellQuote(root) + "; " + cmd
				}
			}
		}
	}
}

// serverEnv sets CLAUDE_PLUGIN_ROOT in the env of every command server
// of an mcpServers object, unless the plugin sets it itself.
func serverEnv(obj map[string]any, root string) {
	for _, sv := range obj {
		sm, _ := sv.(map[string]any)
		if _, ok := sm["command"].(string); !ok {
			continue
		}
		env, _ := sm["env"].(map[string]any)
		if env == nil {
			if _, set := sm["env"]; set {
				continue // not an object: the MCP loader reports it
			}
			env = map[string]any{}
		}
		if _, ok := env["CLAUDE_PLUGIN_ROOT"]; !ok {
			env["CLAUDE_PLUGIN_ROOT"] = root
		}
		sm["env"] = env
	}
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// expand replaces RootVar in every string of v with the plugin's root.
func (p *Plugin) expand(v json.RawMessage) json.RawMessage {
	if !bytes.Contains(v, []byte(RootVar)) {
		return v
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return v
	}
	b, err := json.Marshal(replaceStrings(x, RootVar, p.Root))
	if err != nil {
		return v
	}
	return b
}

// replaceStrings replaces old with new in every string of a decoded JSON
// value.
func replaceStrings(x any, old, new string) any {
	switch t := x.(type) {
	case string:
		return strings.ReplaceAll(t, old, new)
	case []any:
		for i := range t {
			t[i] = replaceStrings(t[i], old, new)
		}
	case map[string]any:
		for k := range t {
			t[k] = replaceStrings(t[k], old, new)
		}
	}
	return x
}

// manifestPaths reads a manifest path value (a string or a list of
// strings), each relative to the plugin root and starting with "./"; a
// path leaving the plugin, or missing, is a diagnostic.
func manifestPaths(root, mpath, key string, raw json.RawMessage) ([]string, []Diagnostic) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, []Diagnostic{{File: mpath, Message: fmt.Sprintf("%q: want a path or a list of paths; ignored", key), Error: true}}
	}
	var out []string
	var diags []Diagnostic
	for _, rel := range list {
		if !strings.HasPrefix(rel, "./") {
			diags = append(diags, Diagnostic{File: mpath, Message: fmt.Sprintf("%q: path %q must start with \"./\" (relative to the plugin); ignored", key, rel), Error: true})
			continue
		}
		abs := filepath.Join(root, rel)
		if r, err := filepath.Rel(root, abs); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			diags = append(diags, Diagnostic{File: mpath, Message: fmt.Sprintf("%q: path %q leaves the plugin directory; ignored", key, rel), Error: true})
			continue
		}
		if _, err := os.Stat(abs); err != nil {
			diags = append(diags, Diagnostic{File: mpath, Message: fmt.Sprintf("%q: %s does not exist; ignored", key, rel)})
			continue
		}
		out = append(out, abs)
	}
	return out, diags
}

// existing returns dir alone when it is a directory, else nil.
func existing(dir string) []string {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return []string{dir}
	}
	return nil
}

// readSmall reads a file of at most maxManifest bytes.
func readSmall(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxManifest {
		return nil, fmt.Errorf("larger than %d bytes", maxManifest)
	}
	return os.ReadFile(path)
}

// InstalledFile is Claude Code's list of installed plugins under home.
func InstalledFile(home string) string {
	return filepath.Join(home, ".claude", "plugins", "installed_plugins.json")
}

// Installed lists the directories of the plugins Claude Code installed
// (installed_plugins.json, version 1 or 2) that enabled lists as true
// (the settings' enabledPlugins, keyed "name@marketplace"). An installed
// plugin not enabled is skipped silently, as in Claude Code; an enabled
// one that is not installed is a diagnostic. Keys come back sorted.
func Installed(home string, enabled map[string]bool) (dirs, keys []string, diags []Diagnostic) {
	if home == "" || len(enabled) == 0 {
		return nil, nil, nil
	}
	file := InstalledFile(home)
	data, err := readSmall(file)
	if err != nil {
		if !os.IsNotExist(err) {
			diags = append(diags, Diagnostic{File: file, Message: fmt.Sprintf("cannot read: %v", err), Error: true})
		}
		for _, k := range sortedTrue(enabled) {
			diags = append(diags, Diagnostic{File: file, Message: fmt.Sprintf("enabled plugin %q is not installed; not loaded", k)})
		}
		return nil, nil, diags
	}
	var doc struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, []Diagnostic{{File: file, Message: fmt.Sprintf("not valid JSON: %v; no installed plugin is loaded", err), Error: true}}
	}
	type install struct {
		InstallPath string `json:"installPath"`
	}
	for _, k := range sortedTrue(enabled) {
		raw, ok := doc.Plugins[k]
		if !ok {
			diags = append(diags, Diagnostic{File: file, Message: fmt.Sprintf("enabled plugin %q is not installed; not loaded", k)})
			continue
		}
		var list []install
		if err := json.Unmarshal(raw, &list); err != nil {
			var one install
			if err := json.Unmarshal(raw, &one); err != nil {
				diags = append(diags, Diagnostic{File: file, Message: fmt.Sprintf("plugin %q: not an install record; not loaded", k), Error: true})
				continue
			}
			list = []install{one}
		}
		if len(list) == 0 || list[len(list)-1].InstallPath == "" || !filepath.IsAbs(list[len(list)-1].InstallPath) {
			diags = append(diags, Diagnostic{File: file, Message: fmt.Sprintf("plugin %q: no absolute installPath; not loaded", k), Error: true})
			continue
		}
		dirs = append(dirs, list[len(list)-1].InstallPath)
		keys = append(keys, k)
	}
	return dirs, keys, diags
}

// sortedTrue returns the keys of m whose value is true, sorted.
func sortedTrue(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Dir is a plugin directory named on the command line.
type Dir struct {
	Path string
	// NoMCP leaves the plugin's MCP servers out (--plugin-dir-no-mcp).
	NoMCP bool
}

// Discover loads the plugins of a session: the installed ones enabled in
// enabled, then each of dirs (--plugin-dir, in order). A plugin named like
// an earlier one replaces it, with a diagnostic. A plugin that cannot be
// loaded is an error diagnostic; the others still load.
func Discover(home string, dirs []Dir, enabled map[string]bool) ([]*Plugin, []Diagnostic) {
	idirs, keys, diags := Installed(home, enabled)
	type src struct {
		dir, origin string
		noMCP       bool
	}
	var srcs []src
	for i, d := range idirs {
		srcs = append(srcs, src{dir: d, origin: keys[i]})
	}
	for _, d := range dirs {
		origin := "--plugin-dir"
		if d.NoMCP {
			origin = "--plugin-dir-no-mcp"
		}
		srcs = append(srcs, src{dir: d.Path, origin: origin, noMCP: d.NoMCP})
	}
	var out []*Plugin
	for _, s := range srcs {
		p, ds, err := Load(s.dir, s.origin)
		diags = append(diags, ds...)
		if err != nil {
			diags = append(diags, Diagnostic{File: s.dir, Message: err.Error() + "; not loaded", Error: true})
			continue
		}
		if s.noMCP {
			p.MCPServers, p.MCPFile = nil, ""
		}
		for i, q := range out {
			if q.Name == p.Name {
				diags = append(diags, Diagnostic{File: q.Root, Message: fmt.Sprintf("plugin %q is also loaded from %s (%s), which is used instead", p.Name, p.Root, p.Origin)})
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, p)
	}
	return out, diags
}
