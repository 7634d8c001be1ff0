// Package settings loads cadre's JSON settings files and merges them, lowest
// to highest precedence: user (~/.config/cadre/settings.json) < project
// (.cadre/settings.json) < project local (.cadre/settings.local.json) <
// CLI (--settings FILE, then values from flags) < managed
// (/etc/cadre/managed-settings.json, then managed-settings.d/*.json in name
// order).
//
// The project root is the working directory, as in Claude Code: settings
// files are not searched for in parent directories.
//
// Lists (permission rules, additional directories) concatenate across
// files and every entry remembers its file; scalars take the value of the
// highest file that sets them. A malformed file is an error naming file,
// line and column; unknown keys are warnings with a did-you-mean.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/permission"
)

// Source names for settings that do not come from a file.
const SourceFlags = "cli"

// LoadOptions says where to look.
type LoadOptions struct {
	// Cwd is the project root (absolute). Empty skips project files.
	Cwd string
	// Home is the user's home directory. Empty skips the user file.
	Home string
	// SettingsFile is the --settings path ("" for none).
	SettingsFile string
	// SettingsJSON is --settings given as inline JSON instead of a path;
	// it takes SettingsFile's place (diagnostics name it "--settings").
	SettingsJSON string
	// Flags are values from command-line flags, applied after
	// SettingsFile (their rules carry their own sources).
	Flags Flags
	// ManagedDir holds managed-settings.json and managed-settings.d;
	// "" means /etc/cadre. Set it in tests.
	ManagedDir string
}

// Flags are settings that come from command-line flags.
type Flags struct {
	// Rules from --allowedTools / --disallowedTools / permissions check
	// flags, with behaviour and source set.
	Rules []permission.Rule
	// Mode from --permission-mode ("" = not given).
	Mode permission.Mode
	// AddDirs from --add-dir (resolved against Cwd).
	AddDirs []string
	// Model and Provider from flags ("" = not given).
	Model, Provider string
}

// Settings is the merged result.
type Settings struct {
	Permissions Permissions
	// Model and Provider ("anthropic" or "openai").
	Model    Value
	Provider Value
	// ModelAliases maps provider → alias → model id; a higher file
	// overrides single aliases.
	ModelAliases map[string]map[string]string
	// Env holds environment variables for the run; higher files override
	// single keys.
	Env map[string]string
	// Hooks are the raw `hooks` objects, lowest precedence first, each
	// with its file.
	Hooks []RawSource
	// Files are the settings files that were loaded, lowest first.
	Files []string
}

// Value is a scalar setting with the file that set it.
type Value struct {
	Value  string
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

// Severity of a diagnostic.
type Severity string

// Diagnostic severities.
const (
	Warning Severity = "warning"
)

// Diagnostic is a problem in a settings file that did not stop loading.
type Diagnostic struct {
	File     string
	Line     int
	Column   int
	Severity Severity
	Message  string
}

// String formats the diagnostic as "file:line:column: severity: message".
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s: %s", d.File, d.Line, d.Column, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
}

// fileData is the JSON shape of one settings file.
type fileData struct {
	Permissions  *permData                    `json:"permissions"`
	Model        *string                      `json:"model"`
	Provider     *string                      `json:"provider"`
	ModelAliases map[string]map[string]string `json:"modelAliases"`
	Env          map[string]string            `json:"env"`
	Hooks        json.RawMessage              `json:"hooks"`
}

type permData struct {
	Allow                        []string `json:"allow"`
	Ask                          []string `json:"ask"`
	Deny                         []string `json:"deny"`
	DefaultMode                  *string  `json:"defaultMode"`
	AdditionalDirectories        []string `json:"additionalDirectories"`
	DisableBypassPermissionsMode *string  `json:"disableBypassPermissionsMode"`
}

var topKeys = []string{"permissions", "model", "provider", "modelAliases", "env", "hooks",
	// Keys owned by other parts of cadre; accepted here without warning.
	"agents", "subagentModel", "forkSubagent", "background", "maxDepth", "maxConcurrentAgents", "mcpServers",
	"outputStyle", "statusLine", "cleanupPeriodDays", "includeCoAuthoredBy", "worktree", "teams", "$schema"}

var permKeys = []string{"allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}

// ErrMalformed is wrapped by Load for a settings file that cannot be used.
var ErrMalformed = errors.New("malformed settings file")

// Load reads and merges the settings files. A file that does not exist is
// skipped; one that cannot be read or parsed is an error naming it.
func Load(opts LoadOptions) (*Settings, []Diagnostic, error) {
	s := &Settings{ModelAliases: map[string]map[string]string{}, Env: map[string]string{}}
	var diags []Diagnostic
	type layer struct {
		path, base string
		required   bool
		inline     []byte // the content, for --settings given as JSON
	}
	var layers []layer
	if opts.Home != "" {
		layers = append(layers, layer{path: filepath.Join(opts.Home, ".config", "cadre", "settings.json"), base: opts.Home})
	}
	if opts.Cwd != "" {
		layers = append(layers,
			layer{path: filepath.Join(opts.Cwd, ".cadre", "settings.json"), base: opts.Cwd},
			layer{path: filepath.Join(opts.Cwd, ".cadre", "settings.local.json"), base: opts.Cwd})
	}
	if opts.SettingsFile != "" {
		p := opts.SettingsFile
		if !filepath.IsAbs(p) && opts.Cwd != "" {
			p = filepath.Join(opts.Cwd, p)
		}
		layers = append(layers, layer{path: p, base: filepath.Dir(p), required: true})
	}
	if opts.SettingsJSON != "" {
		layers = append(layers, layer{path: "--settings", base: opts.Cwd, required: true, inline: []byte(opts.SettingsJSON)})
	}
	for _, l := range layers {
		var d []Diagnostic
		var err error
		if l.inline != nil {
			d, err = s.loadData(l.path, l.inline, l.base, opts.Home)
		} else {
			d, err = s.loadFile(l.path, l.base, opts.Home, l.required)
		}
		diags = append(diags, d...)
		if err != nil {
			return nil, diags, err
		}
	}
	if err := s.applyFlags(opts); err != nil {
		return nil, diags, err
	}
	managed := opts.ManagedDir
	if managed == "" {
		managed = "/etc/cadre"
	}
	mfiles := []string{filepath.Join(managed, "managed-settings.json")}
	entries, err := os.ReadDir(filepath.Join(managed, "managed-settings.d"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, diags, fmt.Errorf("read managed settings directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		mfiles = append(mfiles, filepath.Join(managed, "managed-settings.d", n))
	}
	for _, p := range mfiles {
		base := opts.Cwd
		if base == "" {
			base = filepath.Dir(p)
		}
		d, err := s.loadFile(p, base, opts.Home, false)
		diags = append(diags, d...)
		if err != nil {
			return nil, diags, err
		}
	}
	return s, diags, nil
}

func (s *Settings) applyFlags(opts LoadOptions) error {
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
	if f.Model != "" {
		s.Model = Value{Value: f.Model, Source: SourceFlags}
	}
	if f.Provider != "" {
		if err := checkProvider(f.Provider); err != nil {
			return fmt.Errorf("--provider: %w", err)
		}
		s.Provider = Value{Value: f.Provider, Source: SourceFlags}
	}
	return nil
}

func checkProvider(p string) error {
	if p != "anthropic" && p != "openai" {
		return fmt.Errorf("unknown provider %q (valid: anthropic, openai)", p)
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
func (s *Settings) loadFile(path, base, home string, required bool) ([]Diagnostic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !required {
			return nil, nil
		}
		return nil, fmt.Errorf("read settings %s: %w", path, err)
	}
	return s.loadData(path, data, base, home)
}

// loadData merges one file's content; path names it in diagnostics.
func (s *Settings) loadData(path string, data []byte, base, home string) ([]Diagnostic, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return []Diagnostic{{File: path, Severity: Warning, Message: "empty settings file"}}, nil
	}
	keys, err := scanKeys(data)
	if err != nil {
		return nil, posError(path, data, err)
	}
	var fd fileData
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&fd); err != nil {
		return nil, posError(path, data, err)
	}
	var diags []Diagnostic
	for _, k := range keys {
		known := topKeys
		if k.parent == "permissions" {
			known = permKeys
		} else if k.parent != "" {
			continue
		}
		if contains(known, k.name) {
			continue
		}
		line, col := lineCol(data, k.offset)
		msg := fmt.Sprintf("unknown key %q", k.name)
		if k.parent != "" {
			msg = fmt.Sprintf("unknown key %q in %s", k.name, k.parent)
		}
		if sug := didYouMean(k.name, known); sug != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sug)
		}
		diags = append(diags, Diagnostic{File: path, Line: line, Column: col, Severity: Warning, Message: msg})
	}
	s.Files = append(s.Files, path)
	if p := fd.Permissions; p != nil {
		for _, set := range []struct {
			b    permission.Behavior
			list []string
		}{{permission.Allow, p.Allow}, {permission.Ask, p.Ask}, {permission.Deny, p.Deny}} {
			for _, raw := range set.list {
				r, err := permission.ParseRule(raw)
				if err != nil {
					if set.b == permission.Allow {
						// Dropping an allow rule never widens anything.
						diags = append(diags, Diagnostic{File: path, Severity: Warning, Message: fmt.Sprintf("permissions.allow: %v; rule ignored", err)})
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
			if err != nil || m == permission.ModeBubble {
				if err == nil {
					err = fmt.Errorf("permission mode %q is internal", *p.DefaultMode)
				}
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
	}
	if fd.Model != nil {
		s.Model = Value{Value: *fd.Model, Source: path}
	}
	if fd.Provider != nil {
		if err := checkProvider(*fd.Provider); err != nil {
			return diags, fmt.Errorf("%w: %s: provider: %v", ErrMalformed, path, err)
		}
		s.Provider = Value{Value: *fd.Provider, Source: path}
	}
	for prov, m := range fd.ModelAliases {
		if s.ModelAliases[prov] == nil {
			s.ModelAliases[prov] = map[string]string{}
		}
		for a, id := range m {
			s.ModelAliases[prov][a] = id
		}
	}
	for k, v := range fd.Env {
		s.Env[k] = v
	}
	if len(fd.Hooks) > 0 && string(fd.Hooks) != "null" {
		s.Hooks = append(s.Hooks, RawSource{Raw: append(json.RawMessage(nil), fd.Hooks...), Source: path})
	}
	return diags, nil
}

// PermissionConfig builds the checker configuration for a run in cwd.
// mode overrides the settings' defaultMode when not "".
func (s *Settings) PermissionConfig(cwd, home string, mode permission.Mode) permission.Config {
	if mode == "" {
		mode = permission.Mode(s.Permissions.DefaultMode.Value)
	}
	var dirs []string
	for _, d := range s.Permissions.AdditionalDirectories {
		dirs = append(dirs, d.Path)
	}
	return permission.Config{
		Mode: mode, Cwd: cwd, Dirs: dirs, Home: home,
		Rules:         append([]permission.Rule(nil), s.Permissions.Rules...),
		DisableBypass: s.Permissions.DisableBypass,
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// offsetError is a structural problem at a byte offset.
type offsetError struct {
	off int64
	msg string
}

func (e *offsetError) Error() string { return e.msg }

type keyPos struct {
	parent, name string
	offset       int64
}

// scanKeys walks the JSON tokens and returns the keys of the top-level
// object and of its "permissions" object with their offsets. It also
// rejects a document that is not a single object.
func scanKeys(data []byte) ([]keyPos, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var keys []keyPos
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &offsetError{off: 0, msg: "a settings file must be a JSON object"}
	}
	// stack of containers: 'o' object expecting key, 'v' object expecting
	// value, 'a' array; names for object paths.
	type frame struct {
		kind      byte
		name      string
		expectKey bool
		lastKey   string
	}
	stack := []frame{{kind: '{', expectKey: true}}
	for len(stack) > 0 {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		top := &stack[len(stack)-1]
		if top.kind == '{' && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					p := &stack[len(stack)-1]
					if p.kind == '{' {
						p.expectKey = true
					}
				}
				continue
			}
			k, _ := tok.(string)
			parent := ""
			if len(stack) == 2 {
				parent = stack[1].name
			}
			if len(stack) <= 2 {
				keys = append(keys, keyPos{parent: parent, name: k, offset: skipSpace(data, off)})
			}
			top.lastKey = k
			top.expectKey = false
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{kind: '{', name: top.lastKey, expectKey: true})
			case '[':
				stack = append(stack, frame{kind: '['})
			case ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].kind == '{' {
					stack[len(stack)-1].expectKey = true
				}
			}
		default:
			if top.kind == '{' {
				top.expectKey = true
			}
		}
	}
	off := skipSpace(data, dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		return nil, &offsetError{off: off, msg: "unexpected data after the settings object"}
	}
	return keys, nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// posError wraps a JSON error with file, line and column.
func posError(path string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var oe *offsetError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		err = fmt.Errorf("%s must be %s, not %s", fieldName(te), typeName(te.Type.String()), te.Value)
	case errors.As(err, &oe):
		off = oe.off
		err = errors.New(oe.msg)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = int64(len(data))
		err = errors.New("unexpected end of file")
	}
	if off >= 0 {
		line, col := lineCol(data, off)
		return fmt.Errorf("%w: %s:%d:%d: %v", ErrMalformed, path, line, col, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
}

func fieldName(te *json.UnmarshalTypeError) string {
	if te.Field != "" {
		return te.Field
	}
	return "value"
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "settings."):
		return "an object"
	case t == "string" || t == "*string":
		return "a string"
	}
	return t
}

// lineCol converts a byte offset to 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// didYouMean returns the known key closest to k, if close enough.
func didYouMean(k string, known []string) string {
	best, bestD := "", 1<<30
	for _, c := range known {
		d := textdist.Distance(strings.ToLower(k), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= 2 || bestD <= len(k)/3 {
		return best
	}
	return ""
}
