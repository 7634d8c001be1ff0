package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
)

// DefaultManagedDir holds managed-settings.json, managed-settings.d/ and
// the managed agents/ directory.
const DefaultManagedDir = "/etc/cadre"

// DefaultClaudeManagedDir holds Claude Code's managed-settings.json (and
// managed-settings.d/) on Linux; CADRE_CLAUDE_MANAGED_DIR or
// Options.ClaudeManagedDir replace it.
const DefaultClaudeManagedDir = "/etc/claude-code"

// SettingsOptions says where LoadSettings looks.
type SettingsOptions struct {
	// Cwd is the project root (absolute). Empty skips project files.
	Cwd string
	// Home is the user's home directory. Empty skips the user file.
	Home string
	// SettingsFile is a further file above the project's (--settings);
	// relative to Cwd. "" for none.
	SettingsFile string
	// SettingsJSON is --settings given as inline JSON instead of a path;
	// it takes SettingsFile's place (diagnostics name it "--settings").
	SettingsJSON string
	// Flags are values from command-line flags, applied after
	// SettingsFile.
	Flags Flags
	// ManagedDir holds managed-settings.json and managed-settings.d; ""
	// means DefaultManagedDir.
	ManagedDir string
	// TrustProject is --trust-project: the workspace's files may widen
	// the run (see Trust).
	TrustProject bool
	// ConfigHome is $XDG_CONFIG_HOME: cadre's user files are in
	// ConfigHome/cadre (see UserConfigDir); "" means ~/.config.
	ConfigHome string
	// ClaudeManagedDir holds Claude Code's managed settings; "" means
	// DefaultClaudeManagedDir.
	ClaudeManagedDir string
	// Sources, when not nil, are the levels of settings files read, as
	// Claude Code's --setting-sources names them: SourceUser,
	// SourceProject, SourceLocal (both cadre's and Claude Code's file of
	// each). --settings, flags and managed settings are always read. Nil
	// reads every level; an empty list none of the three.
	Sources []string
}

// Setting sources, for SettingsOptions.Sources (--setting-sources).
const (
	SourceUser    = "user"
	SourceProject = "project"
	SourceLocal   = "local"
)

// ParseSources parses a --setting-sources value: comma-separated user,
// project and local ("" is none of them).
func ParseSources(v string) ([]string, error) {
	out := []string{}
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case SourceUser, SourceProject, SourceLocal:
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		default:
			return nil, fmt.Errorf("setting source %q: use user, project or local, comma-separated", f)
		}
	}
	return out, nil
}

// Flags are settings that come from command-line flags.
type Flags struct {
	// Rules from --allowedTools and --disallowedTools, with behaviour and
	// source set.
	Rules []permission.Rule
	// Mode from --permission-mode ("" = not given).
	Mode permission.Mode
	// AddDirs from --add-dir (resolved against Cwd).
	AddDirs []string
}

// Settings is the merged result of every settings file.
type Settings struct {
	Permissions Permissions
	// Model, Provider ("anthropic" or "openai") and SubagentModel.
	Model, Provider, SubagentModel Value
	// MaxDepth, MaxConcurrentAgents and MaxTotalAgents bound sub-agents;
	// 0 when no file sets them.
	MaxDepth, MaxConcurrentAgents, MaxTotalAgents IntValue
	// ForkSubagent is forkSubagent: the fork path (S-6.1).
	ForkSubagent BoolValue
	// AutoCompactWindow and AutoCompactEnabled are autoCompactWindow and
	// autoCompactEnabled: context compaction (S-1.5; config/compact.go).
	// AutoCompactWindows are autoCompactWindow's per-model windows (the
	// object form: model id or id prefix to window), each with its file.
	AutoCompactWindow  IntValue
	AutoCompactWindows map[string]IntValue
	AutoCompactEnabled BoolValue
	// CoordinatorMode is coordinatorMode: the main agent only delegates
	// (S-11.2; config/coordinator.go).
	CoordinatorMode BoolValue
	// Teams and TeamShutdownGraceMs are teams (true, or {enabled,
	// shutdownGraceMs}): agent teams (issue 25; config/teams.go).
	Teams               BoolValue
	TeamShutdownGraceMs IntValue
	// WorktreeBase is worktree.base: where isolated agents' worktrees
	// start ("head" or "default").
	WorktreeBase Value
	// Background is when sub-agents run in the background: "on" (when a
	// call or definition asks), "default" or "off" ("" when no file sets
	// it).
	Background Value
	// ModelAliases maps provider → alias → model id; a higher file
	// overrides single aliases.
	ModelAliases map[string]map[string]string
	// Env holds environment variables for the run; higher files override
	// single keys.
	Env map[string]string
	// ModelPrices are prices and limits by model id (modelPrices); a
	// higher file overrides single models.
	ModelPrices pricing.Table
	// Budget is the session's budget (budget, S-15.2): the least of each
	// limit any file sets, so no file can lift another's.
	Budget agentdef.Budget
	// Hooks are the raw `hooks` objects, lowest precedence first, each
	// with its file and whether it is managed or from the project (see
	// Settings.HooksConfig, config/hooks.go).
	Hooks []RawSource
	// HookPolicy is what allowManagedHooksOnly and disableAllHooks say.
	HookPolicy HookPolicy
	// Files are the settings files that were loaded, lowest first.
	Files []string
	// EnabledPlugins are the enabledPlugins entries ("name@marketplace":
	// true); a higher file overrides single entries.
	EnabledPlugins map[string]bool

	// layer is the file being loaded (managed or not), while loading.
	layer layer
	// Trust is the workspace trust the project files were loaded under;
	// loaders of other project-sourced items gate them with Trust.Allow.
	Trust *Trust
	// The web tools (web.go): the model that applies WebFetch's prompt
	// (smallModel) and the WebSearch backend (webSearch).
	SmallModel Value
	WebSearch  WebSearchSettings
	// MCPServers are the raw mcpServers objects, lowest precedence first,
	// each with its file, line and scope (read by mcpx.Load; mcp.go).
	MCPServers []mcpx.SettingsServers
	// Sandbox is the sandbox object (sandbox.go, issue 9).
	Sandbox SandboxSettings
	// Remote is the remote object: the Temporal server remote agents
	// travel through (remote.go, issue 26).
	Remote RemoteSettings

	// entries are the effective entries (entries.go), for Effective.
	entries []Entry
}

// Value is a scalar setting with the file that set it.
type Value struct {
	Value  string
	Source string
}

// IntValue is a whole-number setting with the file that set it.
type IntValue struct {
	Value  int
	Source string
}

// BoolValue is a true/false setting with the file that set it.
type BoolValue struct {
	Value  bool
	Source string
}

// Dir is a working directory with the file that added it.
type Dir struct {
	Path   string
	Source string
}

// RawSource is a raw JSON value with its file.
type RawSource struct {
	Raw    json.RawMessage
	Source string
	// Managed marks managed (policy) settings; Project a file of the
	// project (.cadre/settings.json or settings.local.json), which
	// workspace trust can gate.
	Managed, Project bool
}

// Permissions are the merged `permissions` keys.
type Permissions struct {
	// Rules are allow, ask and deny rules in load order, each with its
	// source file and base directory.
	Rules []permission.Rule
	// DefaultMode is permissions.defaultMode (or --permission-mode).
	DefaultMode Value
	// AdditionalDirectories are absolute, from every file and --add-dir.
	AdditionalDirectories []Dir
	// DisableBypass is set when a file says
	// "disableBypassPermissionsMode": "disable"; DisableBypassSource names
	// the file.
	DisableBypass       bool
	DisableBypassSource string
}

// SourceFlags names settings that come from flags rather than a file.
const SourceFlags = "cli"

// ErrMalformed is wrapped by LoadSettings for a settings file that cannot
// be used.
var ErrMalformed = errors.New("malformed settings file")

// fileData is the JSON shape of one settings file. Keys cadre does not
// apply (see Keys) are not decoded.
type fileData struct {
	Permissions         *permData                    `json:"permissions"`
	Model               *string                      `json:"model"`
	Provider            *string                      `json:"provider"`
	SubagentModel       *string                      `json:"subagentModel"`
	MaxDepth            *int                         `json:"maxDepth"`
	MaxConcurrentAgents *int                         `json:"maxConcurrentAgents"`
	MaxTotalAgents      *int                         `json:"maxTotalAgents"`
	Worktree            *worktreeData                `json:"worktree"`
	Background          *string                      `json:"background"`
	ModelAliases        map[string]map[string]string `json:"modelAliases"`
	Env                 map[string]string            `json:"env"`
	Hooks               json.RawMessage              `json:"hooks"`
	ModelPrices         map[string]pricing.Price     `json:"modelPrices"`
	Budget              map[string]any               `json:"budget"`
	// Hook policy keys (config/hooks.go).
	AllowManagedHooksOnly *bool           `json:"allowManagedHooksOnly"`
	DisableAllHooks       *bool           `json:"disableAllHooks"`
	TrustedWorkspaces     []string        `json:"trustedWorkspaces"`
	MCPServers            json.RawMessage `json:"mcpServers"`
	// The fork path (config/fork.go).
	ForkSubagent *bool `json:"forkSubagent"`
	// Context compaction (config/compact.go).
	AutoCompactWindow  *compactWindow `json:"autoCompactWindow"`
	AutoCompactEnabled *bool          `json:"autoCompactEnabled"`
	// Coordinator mode (config/coordinator.go).
	CoordinatorMode *bool `json:"coordinatorMode"`
	// Agent teams (config/teams.go).
	Teams json.RawMessage `json:"teams"`
	// Claude Code plugins (config/plugins.go).
	EnabledPlugins map[string]json.RawMessage `json:"enabledPlugins"`
	// Remote agents (config/remote.go).
	Remote json.RawMessage `json:"remote"`
}

// worktreeData is the `worktree` object: how isolated agents' worktrees
// are made.
type worktreeData struct {
	// Base is "head" (the parent's HEAD) or "default" (a fresh ref of the
	// default branch).
	Base *string `json:"base"`
}

type permData struct {
	Allow                        []string `json:"allow"`
	Ask                          []string `json:"ask"`
	Deny                         []string `json:"deny"`
	DefaultMode                  *string  `json:"defaultMode"`
	AdditionalDirectories        []string `json:"additionalDirectories"`
	DisableBypassPermissionsMode *string  `json:"disableBypassPermissionsMode"`
}

// layer is one settings file to load.
type layer struct {
	path, base string
	required   bool
	// managed and project say where the file sits, for hooks (and
	// workspace trust).
	managed, project bool
	scope            mcpx.Scope // of the file's mcpServers (mcp.go)
	inline           []byte     // the content, for --settings given as JSON
	// level is the file's place in the precedence (levelUser …
	// levelManaged); claude marks Claude Code's file of a level, which
	// cadre's file of the same level overrides (claude.go).
	level  int
	claude bool
}

// LoadSettings reads and merges the settings files. A file that does not
// exist is skipped (except SettingsFile); one that cannot be read or
// parsed is an error naming it. Unknown keys, and keys cadre does not
// apply yet, are warnings.
func LoadSettings(opts SettingsOptions) (*Settings, []Diagnostic, error) {
	s := &Settings{ModelAliases: map[string]map[string]string{}, Env: map[string]string{}}
	var diags []Diagnostic
	trust, err := settingsTrust(opts)
	if err != nil {
		return nil, nil, err
	}
	s.Trust = trust
	load := func(layers []layer) error {
		for _, l := range layers {
			if l.path == "" {
				continue
			}
			var d []Diagnostic
			var err error
			s.layer = l
			var gate *Trust // issue 9: only workspace files are gated
			if l.project {
				gate = trust
			}
			nMCP := len(s.MCPServers)
			if l.inline != nil {
				d, err = s.loadData(l.path, l.inline, l.base, opts.Home, gate)
			} else {
				d, err = s.loadFile(l.path, l.base, opts.Home, l.required, gate)
			}
			diags = append(diags, d...)
			if err != nil {
				return err
			}
			s.scopeMCP(nMCP, l.scope)
		}
		return nil
	}
	if err := load(userLayers(opts)); err != nil { // sources.go
		return nil, diags, err
	}
	if err := s.applyFlags(opts); err != nil {
		return nil, diags, err
	}
	managed, err := managedLayers(opts)
	if err != nil {
		return nil, diags, err
	}
	if err := load(managed); err != nil {
		return nil, diags, err
	}
	return s, append(diags, trust.Report()...), nil
}

// userLayers are the files below the flags: user, project, project local,
// --settings; at each level Claude Code's file comes first, so that
// cadre's wins a clash.
func userLayers(opts SettingsOptions) []layer {
	var layers []layer
	if opts.Home != "" {
		layers = append(layers,
			layer{path: filepath.Join(opts.Home, ".claude", "settings.json"), base: opts.Home, scope: mcpx.ScopeUser, level: levelUser, claude: true},
			layer{path: filepath.Join(UserConfigDir(opts.Home, opts.ConfigHome), "settings.json"), base: opts.Home, scope: mcpx.ScopeUser, level: levelUser})
	}
	if opts.Cwd != "" {
		claudeProject := filepath.Join(opts.Cwd, ".claude", "settings.json")
		if opts.Home != "" && filepath.Clean(opts.Cwd) == filepath.Clean(opts.Home) {
			// In the home directory the project's .claude/settings.json is
			// the user's: read once (its hooks would run twice).
			claudeProject = ""
		}
		layers = append(layers,
			layer{path: claudeProject, base: opts.Cwd, project: true, scope: mcpx.ScopeSettings, level: levelProject, claude: true},
			layer{path: filepath.Join(opts.Cwd, ".cadre", "settings.json"), base: opts.Cwd, project: true, scope: mcpx.ScopeSettings, level: levelProject},
			layer{path: filepath.Join(opts.Cwd, ".claude", "settings.local.json"), base: opts.Cwd, project: true, scope: mcpx.ScopeLocal, level: levelLocal, claude: true},
			layer{path: filepath.Join(opts.Cwd, ".cadre", "settings.local.json"), base: opts.Cwd, project: true, scope: mcpx.ScopeLocal, level: levelLocal})
	}
	if opts.Sources != nil {
		layers = slices.DeleteFunc(layers, func(l layer) bool {
			return !slices.Contains(opts.Sources, map[int]string{levelUser: SourceUser, levelProject: SourceProject, levelLocal: SourceLocal}[l.level])
		})
	}
	if opts.SettingsFile != "" {
		p := opts.SettingsFile
		if !filepath.IsAbs(p) && opts.Cwd != "" {
			p = filepath.Join(opts.Cwd, p)
		}
		layers = append(layers, layer{path: p, base: filepath.Dir(p), required: true, scope: mcpx.ScopeFlag, level: levelFlag})
	}
	if opts.SettingsJSON != "" {
		layers = append(layers, layer{path: "--settings", base: opts.Cwd, required: true, inline: []byte(opts.SettingsJSON), scope: mcpx.ScopeFlag, level: levelFlag})
	}
	return layers
}

// managedLayers are Claude Code's managed settings, then cadre's (which win
// a clash): each managed-settings.json and managed-settings.d/*.json in
// name order; their relative paths are anchored at the project.
func managedLayers(opts SettingsOptions) ([]layer, error) {
	claude, err := managedDirLayers(opts, cmpOr(opts.ClaudeManagedDir, DefaultClaudeManagedDir), true)
	if err != nil {
		return nil, err
	}
	own, err := managedDirLayers(opts, cmpOr(opts.ManagedDir, DefaultManagedDir), false)
	if err != nil {
		return nil, err
	}
	return append(claude, own...), nil
}

// managedDirLayers are the managed settings files of one directory.
func managedDirLayers(opts SettingsOptions, dir string, claude bool) ([]layer, error) {
	paths := []string{filepath.Join(dir, "managed-settings.json")}
	entries, err := os.ReadDir(filepath.Join(dir, "managed-settings.d"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read managed settings directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, "managed-settings.d", n))
	}
	layers := make([]layer, len(paths))
	for i, p := range paths {
		layers[i] = layer{path: p, base: opts.Cwd, managed: true, scope: mcpx.ScopeManaged, level: levelManaged, claude: claude}
		if opts.Cwd == "" {
			layers[i].base = filepath.Dir(p)
		}
	}
	return layers, nil
}

func (s *Settings) applyFlags(opts SettingsOptions) error {
	f := opts.Flags
	s.Permissions.Rules = append(s.Permissions.Rules, f.Rules...)
	if f.Mode != "" {
		m, err := permission.ParseMode(string(f.Mode))
		if err != nil {
			return fmt.Errorf("--permission-mode: %w", err)
		}
		s.Permissions.DefaultMode = Value{Value: string(m), Source: "--permission-mode"}
	}
	for _, d := range f.AddDirs {
		p := expandHome(d, opts.Home)
		if !filepath.IsAbs(p) && opts.Cwd != "" {
			p = filepath.Join(opts.Cwd, p)
		}
		s.Permissions.AdditionalDirectories = append(s.Permissions.AdditionalDirectories, Dir{Path: filepath.Clean(p), Source: "--add-dir"})
	}
	return nil
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + strings.TrimPrefix(p, "~")
	}
	return p
}

// loadFile merges one file. base anchors relative path rules and
// directories.
func (s *Settings) loadFile(path, base, home string, required bool, gate *Trust) ([]Diagnostic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !required {
			return nil, nil
		}
		return nil, fmt.Errorf("read settings %s: %w", path, err)
	}
	return s.loadData(path, data, base, home, gate)
}

// loadData merges one file's content; path names it in diagnostics. A
// workspace file comes with its gate, which drops what it may not widen.
func (s *Settings) loadData(path string, data []byte, base, home string, gate *Trust) ([]Diagnostic, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return []Diagnostic{{File: path, Severity: SeverityWarning, Topic: TopicSettings, Message: "empty settings file"}}, nil
	}
	keys, err := scanKeys(data)
	if err != nil {
		return nil, posError(path, data, err)
	}
	var fd fileData
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&fd); err != nil {
		return nil, posError(path, data, err)
	}
	diags := checkKeys(path, data, keys)
	diags = append(diags, s.hookPolicyDiagnostics(&fd, path, data, keys)...)
	gated := data // what the file may set: all of it, but in an untrusted workspace
	if gate != nil {
		if gated = gate.gateRaw(data, path, base, home, s); !bytes.Equal(gated, data) {
			// What is ignored is still checked: a bad value is an error
			// wherever it is.
			scratch := &Settings{ModelAliases: map[string]map[string]string{}, Env: map[string]string{}, layer: s.layer}
			if err := scratch.applyScalars(&fd, path); err != nil {
				return diags, err
			}
			fd = fileData{}
			if err := json.Unmarshal(gated, &fd); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
			}
		}
	}
	diags = append(diags, s.addEntries(flatten(gated, path, s.layer))...)
	s.Files = append(s.Files, path)
	s.noteMCP(path, data, keys, fd.MCPServers)
	if fd.Permissions != nil {
		d, err := s.applyPermissions(fd.Permissions, path, base, home)
		diags = append(diags, d...)
		if err != nil {
			return diags, err
		}
	}
	if err := s.applyWeb(data, path, gate); err != nil { // web.go
		return diags, err
	}
	sdiags, err := s.applySandbox(data, keys, path, base, home, gate) // sandbox.go
	diags = append(diags, sdiags...)
	if err != nil {
		return diags, err
	}
	if err := s.applyRemote(fd.Remote, path, filepath.Dir(path), home); err != nil { // remote.go
		return diags, err
	}
	return diags, s.applyScalars(&fd, path)
}

// checkKeys reports the keys of a file that do nothing: unknown ones,
// with a did-you-mean, and known ones cadre does not apply yet.
func checkKeys(path string, data []byte, keys []keyPos) []Diagnostic {
	var diags []Diagnostic
	for _, k := range keys {
		if !slices.Contains(keyObjects, k.parent) {
			continue // inside a value such as env or modelAliases
		}
		line, col := lineCol(data, k.offset)
		d := Diagnostic{File: path, Line: line, Column: col, Severity: SeverityWarning, Topic: TopicSettings}
		key, known := lookupKey(k.parent, k.name)
		switch {
		case known && key.Unsupported == "":
			continue
		case known:
			d.Message = fmt.Sprintf("%q: %s", k.name, key.Unsupported)
		default:
			d.Message = fmt.Sprintf("unknown key %q", k.name)
			if k.parent != "" {
				d.Message = fmt.Sprintf("unknown key %q in %s", k.name, k.parent)
			}
			if sug := didYouMean(k.parent, k.name); sug != "" {
				d.Message += fmt.Sprintf(" (did you mean %q?)", sug)
			}
		}
		diags = append(diags, d)
	}
	return diags
}

// applyPermissions merges a file's permissions object.
func (s *Settings) applyPermissions(p *permData, path, base, home string) ([]Diagnostic, error) {
	var diags []Diagnostic
	for _, set := range []struct {
		b    permission.Behavior
		list []string
	}{{permission.Allow, p.Allow}, {permission.Ask, p.Ask}, {permission.Deny, p.Deny}} {
		for _, raw := range set.list {
			r, err := permission.ParseRule(raw)
			if err != nil {
				if set.b == permission.Allow {
					// Dropping an allow rule never widens anything.
					diags = append(diags, Diagnostic{File: path, Severity: SeverityWarning, Topic: TopicSettings,
						Message: fmt.Sprintf("permissions.allow: %v; rule ignored", err)})
					continue
				}
				return diags, fmt.Errorf("%w: %s: permissions.%s: %v", ErrMalformed, path, set.b, err)
			}
			r.Behavior, r.Source, r.Base = set.b, path, base
			s.Permissions.Rules = append(s.Permissions.Rules, r)
		}
	}
	if p.DefaultMode != nil {
		m, err := permission.ParseMode(*p.DefaultMode)
		if err == nil && m == permission.ModeBubble {
			err = fmt.Errorf("permission mode %q is internal", *p.DefaultMode)
		}
		if err != nil {
			return diags, fmt.Errorf("%w: %s: permissions.defaultMode: %v", ErrMalformed, path, err)
		}
		s.Permissions.DefaultMode = Value{Value: string(m), Source: path}
	}
	for _, d := range p.AdditionalDirectories {
		q := expandHome(d, home)
		if !filepath.IsAbs(q) {
			q = filepath.Join(base, q)
		}
		s.Permissions.AdditionalDirectories = append(s.Permissions.AdditionalDirectories, Dir{Path: filepath.Clean(q), Source: path})
	}
	if v := p.DisableBypassPermissionsMode; v != nil {
		if *v != "disable" {
			return diags, fmt.Errorf("%w: %s: permissions.disableBypassPermissionsMode must be \"disable\", not %q", ErrMalformed, path, *v)
		}
		s.Permissions.DisableBypass = true
		s.Permissions.DisableBypassSource = path
	}
	return diags, nil
}

// applyScalars merges a file's other keys: a scalar replaces the lower
// files' value, a map entry replaces the same entry.
func (s *Settings) applyScalars(fd *fileData, path string) error {
	if fd.Model != nil {
		s.Model = Value{Value: *fd.Model, Source: path}
	}
	if fd.Provider != nil {
		if _, err := ParseProvider(*fd.Provider); err != nil {
			return fmt.Errorf("%w: %s: provider: %v", ErrMalformed, path, err)
		}
		s.Provider = Value{Value: *fd.Provider, Source: path}
	}
	if fd.SubagentModel != nil {
		s.SubagentModel = Value{Value: *fd.SubagentModel, Source: path}
	}
	if fd.ForkSubagent != nil {
		s.ForkSubagent = BoolValue{Value: *fd.ForkSubagent, Source: path}
	}
	if fd.CoordinatorMode != nil {
		s.CoordinatorMode = BoolValue{Value: *fd.CoordinatorMode, Source: path}
	}
	if err := s.mergeTeams(path, fd.Teams); err != nil { // teams.go
		return err
	}
	if err := s.mergeCompaction(path, fd); err != nil { // compact.go
		return err
	}
	if fd.Worktree != nil && fd.Worktree.Base != nil {
		if b := *fd.Worktree.Base; b != cadre.WorktreeBaseHead && b != cadre.WorktreeBaseDefault {
			return fmt.Errorf("%w: %s: worktree.base is %q: use %q (the parent's HEAD) or %q (a fresh ref of the default branch)",
				ErrMalformed, path, b, cadre.WorktreeBaseHead, cadre.WorktreeBaseDefault)
		}
		s.WorktreeBase = Value{Value: *fd.Worktree.Base, Source: path}
	}
	if v := fd.Background; v != nil {
		if _, err := backgroundMode(*v); err != nil {
			return fmt.Errorf("%w: %s: background: %v", ErrMalformed, path, err)
		}
		s.Background = Value{Value: *v, Source: path}
	}
	for _, lim := range []struct {
		key string
		v   *int
		dst *IntValue
	}{{"maxDepth", fd.MaxDepth, &s.MaxDepth}, {"maxConcurrentAgents", fd.MaxConcurrentAgents, &s.MaxConcurrentAgents},
		{"maxTotalAgents", fd.MaxTotalAgents, &s.MaxTotalAgents}} {
		if lim.v == nil {
			continue
		}
		if *lim.v < 1 {
			return fmt.Errorf("%w: %s: %s must be 1 or more, not %d", ErrMalformed, path, lim.key, *lim.v)
		}
		*lim.dst = IntValue{Value: *lim.v, Source: path}
	}
	if fd.Budget != nil {
		b, err := agentdef.ParseBudget(fd.Budget)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
		}
		s.Budget = leastBudget(s.Budget, b)
	}
	for prov, m := range fd.ModelAliases {
		if s.ModelAliases[prov] == nil {
			s.ModelAliases[prov] = map[string]string{}
		}
		maps.Copy(s.ModelAliases[prov], m)
	}
	maps.Copy(s.Env, fd.Env)
	for _, id := range slices.Sorted(maps.Keys(fd.ModelPrices)) {
		p := fd.ModelPrices[id]
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("%w: %s: modelPrices: an entry has an empty model id", ErrMalformed, path)
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: %s: modelPrices.%s: %v", ErrMalformed, path, id, err)
		}
		if s.ModelPrices == nil {
			s.ModelPrices = pricing.Table{}
		}
		s.ModelPrices[id] = p
	}
	for k, v := range fd.EnabledPlugins {
		if s.EnabledPlugins == nil {
			s.EnabledPlugins = map[string]bool{}
		}
		s.EnabledPlugins[k] = string(v) == "true"
	}
	if len(fd.Hooks) > 0 && string(fd.Hooks) != "null" {
		s.Hooks = append(s.Hooks, RawSource{Raw: append(json.RawMessage(nil), fd.Hooks...), Source: path,
			Managed: s.layer.managed, Project: s.layer.project})
	}
	s.applyHookPolicy(fd, path)
	return nil
}

// PermissionConfig builds the checker configuration for a run in cwd.
// mode overrides the settings' defaultMode when not "".
func (s *Settings) PermissionConfig(cwd, home string, mode permission.Mode) permission.Config {
	if mode == "" {
		mode = permission.Mode(s.Permissions.DefaultMode.Value)
	}
	return permission.Config{
		Mode: mode, Cwd: cwd, Dirs: s.Dirs(), Home: home,
		Rules:         slices.Clone(s.Permissions.Rules),
		DisableBypass: s.Permissions.DisableBypass,
	}
}

// Dirs are the additional working directories' paths.
func (s *Settings) Dirs() []string {
	var dirs []string
	for _, d := range s.Permissions.AdditionalDirectories {
		dirs = append(dirs, d.Path)
	}
	return dirs
}

// leastBudget is the tighter of two budgets, limit by limit (a zero
// field sets none).
func leastBudget(a, b agentdef.Budget) agentdef.Budget {
	least := func(x, y float64) float64 {
		switch {
		case x == 0:
			return y
		case y == 0:
			return x
		}
		return min(x, y)
	}
	return agentdef.Budget{
		USD:      least(a.USD, b.USD),
		Tokens:   int64(least(float64(a.Tokens), float64(b.Tokens))),
		Turns:    int(least(float64(a.Turns), float64(b.Turns))),
		WallTime: time.Duration(least(float64(a.WallTime), float64(b.WallTime))),
	}
}
