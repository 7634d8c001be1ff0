package skills

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// Source names the skills directory a skill came from.
type Source string

// Skill sources, lowest precedence first: a later source replaces a skill
// of the same name from an earlier one.
const (
	SourceUserClaude    Source = "user (~/.claude/skills)"
	SourceUserCadre     Source = "user (~/.config/cadre/skills)"
	SourceProjectClaude Source = "project (.claude/skills)"
	SourceProjectCadre  Source = "project (.cadre/skills)"
	// SourcePlugin is a Claude Code plugin's skills directory.
	SourcePlugin Source = "plugin"
)

// LoadOptions says where to look for skills.
type LoadOptions struct {
	// Cwd is the working directory: project skills are read from every
	// directory from the git root (or Cwd, outside a repository) down to
	// Cwd. Empty means the process's working directory.
	Cwd string
	// Home is the user's home directory; empty means no user skills.
	Home string
	// Plugins are Claude Code plugins' skill directories, loaded before
	// the user's: each skill is named Plugin:name.
	Plugins []PluginSkills
}

// PluginSkills are the skills directories of one Claude Code plugin.
type PluginSkills struct {
	// Plugin is the plugin's name, the namespace of its skills.
	Plugin string
	// Dirs each hold <skill>/SKILL.md.
	Dirs []string
}

// Set is every skill found: the active one of each name, those they
// shadow, and the diagnostics.
type Set struct {
	all    []*Skill
	active []*Skill
	byName map[string]*Skill
	diags  []Diagnostic
}

// Active returns the winning skill of every name, sorted by name.
func (s *Set) Active() []*Skill {
	if s == nil {
		return nil
	}
	return s.active
}

// All returns every skill loaded, shadowed ones included, in precedence
// order (lowest first).
func (s *Set) All() []*Skill {
	if s == nil {
		return nil
	}
	return s.all
}

// Get returns the active skill named name, or nil.
func (s *Set) Get(name string) *Skill {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

// Diagnostics returns the problems found, by path and line.
func (s *Set) Diagnostics() []Diagnostic {
	if s == nil {
		return nil
	}
	return s.diags
}

// dirLayer is one skills directory and its source.
type dirLayer struct {
	dir    string
	source Source
	plugin string
}

// Load reads every skill (S-2, S-4.1): ~/.claude/skills/*/SKILL.md <
// ~/.config/cadre/skills/*/ < for each directory from the git root down to
// Cwd, .claude/skills/*/ < .cadre/skills/*/ (deeper directories win). Only
// direct subdirectories are skills; a subdirectory that is a symlink is
// followed. Problems are diagnostics; the error is non-nil only when the
// context ends or Cwd cannot be resolved.
func Load(ctx context.Context, opts LoadOptions) (*Set, error) {
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("load skills: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("load skills: %w", err)
	}
	var layers []dirLayer
	for _, p := range opts.Plugins {
		for _, d := range p.Dirs {
			layers = append(layers, dirLayer{dir: d, source: SourcePlugin, plugin: p.Plugin})
		}
	}
	if opts.Home != "" {
		layers = append(layers,
			dirLayer{filepath.Join(opts.Home, ".claude", "skills"), SourceUserClaude, ""},
			dirLayer{filepath.Join(opts.Home, ".config", "cadre", "skills"), SourceUserCadre, ""})
	}
	for _, d := range projectDirs(cwd, opts.Home) {
		layers = append(layers,
			dirLayer{filepath.Join(d, ".claude", "skills"), SourceProjectClaude, ""},
			dirLayer{filepath.Join(d, ".cadre", "skills"), SourceProjectCadre, ""})
	}
	set := &Set{byName: map[string]*Skill{}}
	seenDir := map[string]bool{}
	for _, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(l.dir)
		if err != nil || seenDir[real] {
			continue // missing, or the same directory reached twice (home inside the project)
		}
		seenDir[real] = true
		if safefs.Protected(opts.Home, real) {
			set.diags = append(set.diags, Diagnostic{Path: l.dir, Severity: SeverityWarning, Message: fmt.Sprintf("not loaded: it leads to %s, a directory that holds credentials or system state", real)})
			continue
		}
		set.loadDir(l, opts.Home)
	}
	set.resolve()
	return set, nil
}

// loadDir reads each <dir>/<name>/SKILL.md, in name order. A skill
// directory that is a link into a directory holding credentials or system
// state (safefs.Protected, for the home directory home) is not loaded.
func (s *Set) loadDir(l dirLayer, home string) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		s.diags = append(s.diags, Diagnostic{Path: l.dir, Severity: SeverityWarning, Message: fmt.Sprintf("cannot read the skills directory: %v", err)})
		return
	}
	for _, e := range entries {
		dir := filepath.Join(l.dir, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err != nil || safefs.Protected(home, real) {
			s.diags = append(s.diags, Diagnostic{Path: dir, Severity: SeverityWarning, Message: fmt.Sprintf("not loaded: it leads to %s, a directory that holds credentials or system state", real)})
			continue
		}
		path := filepath.Join(dir, FileName)
		if real, err := filepath.EvalSymlinks(path); err == nil && safefs.Protected(home, real) {
			s.diags = append(s.diags, Diagnostic{Path: path, Severity: SeverityWarning, Message: fmt.Sprintf("not loaded: it leads to %s, a directory that holds credentials or system state", real)})
			continue
		}
		data, problem := readSkillFile(path)
		if problem != "" {
			if problem != "missing" {
				s.diags = append(s.diags, Diagnostic{Path: path, Severity: SeverityError, Message: problem})
			}
			continue
		}
		sk, diags := Parse(path, e.Name(), data)
		s.diags = append(s.diags, diags...)
		if sk == nil {
			continue
		}
		sk.Dir, sk.Source = dir, l.source
		if l.plugin != "" {
			sk.Name = l.plugin + ":" + sk.Name
		}
		s.all = append(s.all, sk)
	}
}

// readSkillFile reads a SKILL.md of at most MaxFileSize bytes; "missing"
// means the directory has none (not a skill, no diagnostic).
func readSkillFile(path string) ([]byte, string) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, "missing"
		}
		return nil, fmt.Sprintf("cannot read: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Sprintf("cannot read: %v", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Sprintf("larger than %d bytes; skipped", MaxFileSize)
	}
	return data, ""
}

// resolve picks the winner of each name (the last loaded) and records
// which skill shadows which.
func (s *Set) resolve() {
	for _, sk := range s.all {
		if prev := s.byName[sk.Name]; prev != nil {
			prev.ShadowedBy = sk.Path
		}
		s.byName[sk.Name] = sk
	}
	for _, sk := range s.byName {
		s.active = append(s.active, sk)
	}
	sort.Slice(s.active, func(i, j int) bool { return s.active[i].Name < s.active[j].Name })
	sort.SliceStable(s.diags, func(i, j int) bool {
		if s.diags[i].Path != s.diags[j].Path {
			return s.diags[i].Path < s.diags[j].Path
		}
		return s.diags[i].Line < s.diags[j].Line
	})
}

// projectDirs lists the directories whose skills count, from the git root
// (the nearest ancestor of cwd holding .git) down to cwd; outside a
// repository, cwd alone. The home directory is left out (its skills are
// the user's).
func projectDirs(cwd, home string) []string {
	var chain []string
	root := ""
	for d := cwd; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if root == "" {
		chain = chain[:1]
	}
	var out []string
	for i := len(chain) - 1; i >= 0; i-- {
		if home != "" && chain[i] == filepath.Clean(home) {
			continue
		}
		out = append(out, chain[i])
	}
	return out
}
