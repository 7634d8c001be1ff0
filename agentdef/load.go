package agentdef

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// MaxFileSize is the largest agent file read; bigger files are skipped
// with a warning.
const MaxFileSize = 1 << 20

// DefaultManagedDir is where administrators put agents that override all
// others.
const DefaultManagedDir = "/etc/cadre/agents"

// LoadOptions says where to look for definitions.
type LoadOptions struct {
	// Cwd is the working directory; project agents are read from it up to
	// the git root. Empty means the process's working directory.
	Cwd string
	// Home is the user's home directory, for ~/.config/cadre/agents,
	// ~/.claude/agents and ~/.config/cadre/plugins. Empty means no user
	// agents.
	Home string
	// ManagedDir holds managed agents; empty means DefaultManagedDir.
	ManagedDir string
	// PluginDirs are extra plugin roots, each holding <plugin>/agents/.
	// They come after ~/.config/cadre/plugins and the project's
	// .cadre/plugins directories.
	PluginDirs []string
	// Plugins are Claude Code plugins' agents (--plugin-dir, installed
	// plugins), after PluginDirs: each agent is named Plugin:name.
	Plugins []PluginAgents
	// FlagAgents is the --agents value: an inline JSON object, or a path
	// (relative to Cwd) to a file holding one.
	FlagAgents string
	// NoBuiltins leaves the built-in agents out (for checking files).
	NoBuiltins bool
}

// PluginAgents are the agent files of one Claude Code plugin.
type PluginAgents struct {
	// Plugin is the plugin's name, the namespace of its agents.
	Plugin string
	// Paths are directories scanned for agent files, and single files.
	Paths []string
}

// Set is the result of Load: every definition found, which one is active
// for each name, and the diagnostics.
type Set struct {
	all    []*Definition
	active []*Definition
	byName map[string]*Definition
	diags  []Diagnostic
}

// Active returns the winning definition of every name, sorted with
// SortDefinitions.
func (s *Set) Active() []*Definition { return s.active }

// Get returns the active definition named name, or nil.
func (s *Set) Get(name string) *Definition { return s.byName[name] }

// All returns every definition loaded, shadowed ones included, in
// precedence order (lowest first).
func (s *Set) All() []*Definition { return s.all }

// Diagnostics returns every problem found, sorted by file and line.
func (s *Set) Diagnostics() []Diagnostic { return s.diags }

// HasErrors reports whether any diagnostic is an error.
func (s *Set) HasErrors() bool {
	for _, d := range s.diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// layer is one directory (or flag value) of one source.
type layer struct {
	source Source
	dir    string // directory to scan; "" for flag and builtin layers
	plugin string
}

// candidate is one file found in a layer.
type candidate struct {
	layer int
	path  string
	depth int
}

// Load finds, parses and resolves every agent definition (S-4.2):
// built-in < plugin < user < project (git root first, cwd last; in each
// directory .claude/agents before .cadre/agents) < flag < managed. Within
// one directory, two files with the same name resolve to the shallower
// path, then the first in lexical order, with a warning. The error is
// non-nil only for a bad --agents value or a cancelled context; problems
// in files are diagnostics.
func Load(ctx context.Context, opts LoadOptions) (*Set, error) {
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("load agents: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("load agents: %w", err)
	}
	layers, flagLayer, diags := findLayers(cwd, opts)
	var cands []candidate
	for i, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("load agents: %w", err)
		}
		if l.dir == "" {
			continue
		}
		if st, err := os.Stat(l.dir); err == nil && !st.IsDir() {
			cands = append(cands, candidate{layer: i, path: l.dir})
			continue
		}
		files, ds := scanDir(l.dir, opts.Home)
		diags = append(diags, ds...)
		for _, f := range files {
			cands = append(cands, candidate{layer: i, path: f.path, depth: f.depth})
		}
	}
	results, err := parseAll(ctx, layers, cands)
	if err != nil {
		return nil, err
	}
	// Definitions per layer, in precedence order.
	perLayer := make([][]*Definition, len(layers))
	depth := map[*Definition]int{}
	for i, c := range cands {
		diags = append(diags, results[i].diags...)
		if d := results[i].def; d != nil {
			perLayer[c.layer] = append(perLayer[c.layer], d)
			depth[d] = c.depth
		}
	}
	if !opts.NoBuiltins {
		perLayer[0] = Builtins()
	}
	if opts.FlagAgents != "" {
		defs, ds, err := loadFlag(opts.FlagAgents, cwd)
		if err != nil {
			return nil, err
		}
		perLayer[flagLayer] = defs
		diags = append(diags, ds...)
	}
	set, ds := resolve(perLayer, depth)
	diags = append(diags, ds...)
	sortDiagnostics(diags)
	set.diags = diags
	return set, nil
}

// findLayers lists the sources in precedence order, lowest first, the
// index of the --agents layer, and errors for plugin directories whose
// names cannot be used.
func findLayers(cwd string, opts LoadOptions) (layers []layer, flagLayer int, pluginDiags []Diagnostic) {
	managed := opts.ManagedDir
	if managed == "" {
		managed = DefaultManagedDir
	}
	projectDirs := projectDirs(cwd, opts.Home)
	layers = append(layers, layer{source: SourceBuiltin})
	var pluginRoots []string
	if opts.Home != "" {
		pluginRoots = append(pluginRoots, filepath.Join(opts.Home, ".config", "cadre", "plugins"))
	}
	for _, d := range projectDirs {
		pluginRoots = append(pluginRoots, filepath.Join(d, ".cadre", "plugins"))
	}
	pluginRoots = append(pluginRoots, opts.PluginDirs...)
	for _, root := range pluginRoots {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				continue
			}
			if msg := pathUnsafe(e.Name()); msg != "" {
				pluginDiags = append(pluginDiags, Diagnostic{File: dir, Severity: SeverityError, Message: fmt.Sprintf("invalid plugin name %q: %s; its agents are not loaded", e.Name(), msg)})
				continue
			}
			layers = append(layers, layer{source: SourcePlugin, dir: filepath.Join(dir, "agents"), plugin: e.Name()})
		}
	}
	for _, p := range opts.Plugins {
		msg := pathUnsafe(p.Plugin)
		if msg == "" && (p.Plugin == "" || strings.Contains(p.Plugin, ":")) {
			msg = "a plugin name is not empty and has no \":\" (it namespaces agent names)"
		}
		if msg != "" {
			pluginDiags = append(pluginDiags, Diagnostic{File: p.Plugin, Severity: SeverityError, Message: fmt.Sprintf("invalid plugin name %q: %s; its agents are not loaded", p.Plugin, msg)})
			continue
		}
		for _, path := range p.Paths {
			layers = append(layers, layer{source: SourcePlugin, dir: path, plugin: p.Plugin})
		}
	}
	if opts.Home != "" {
		layers = append(layers,
			layer{source: SourceUser, dir: filepath.Join(opts.Home, ".claude", "agents")},
			layer{source: SourceUser, dir: filepath.Join(opts.Home, ".config", "cadre", "agents")})
	}
	for _, d := range projectDirs {
		layers = append(layers,
			layer{source: SourceProject, dir: filepath.Join(d, ".claude", "agents")},
			layer{source: SourceProject, dir: filepath.Join(d, ".cadre", "agents")})
	}
	flagLayer = len(layers)
	layers = append(layers, layer{source: SourceFlag}, layer{source: SourceManaged, dir: managed})
	return layers, flagLayer, pluginDiags
}

// parsed is one candidate file after parsing.
type parsed struct {
	def   *Definition
	diags []Diagnostic
}

// parseAll parses the candidate files in parallel; results land by index,
// so their order is fixed. A few long-lived workers, each with its own
// read buffer, cost less than a goroutine per file.
func parseAll(ctx context.Context, layers []layer, cands []candidate) ([]parsed, error) {
	results := make([]parsed, len(cands))
	workers := min(runtime.GOMAXPROCS(0), len(cands))
	g, gctx := errgroup.WithContext(ctx)
	for w := range workers {
		g.Go(func() error {
			buf := make([]byte, 0, 64<<10)
			for i := w; i < len(cands); i += workers {
				if err := gctx.Err(); err != nil {
					return err
				}
				results[i], buf = parseCandidate(cands[i], layers[cands[i].layer], buf)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("load agents: %w", err)
	}
	return results, nil
}

// parseCandidate reads and parses one file with buf, returning the buffer
// to reuse (grown when the file needed more).
func parseCandidate(c candidate, l layer, buf []byte) (parsed, []byte) {
	data, tooBig, err := readSmall(c.path, buf)
	switch {
	case err != nil:
		return parsed{diags: []Diagnostic{{File: c.path, Severity: SeverityWarning, Message: fmt.Sprintf("cannot read agent file: %v", err)}}}, buf
	case tooBig:
		return parsed{diags: []Diagnostic{{File: c.path, Severity: SeverityWarning, Message: "agent file is over the 1 MiB limit; skipped"}}}, buf
	}
	if cap(data) > cap(buf) && cap(data) <= MaxFileSize+1 {
		buf = data[:0]
	}
	def, ds := ParseFile(c.path, data, l.source)
	if def != nil && l.source == SourcePlugin {
		def.Plugin = l.plugin
		def.Name = l.plugin + ":" + def.Name
	}
	return parsed{def: def, diags: ds}, buf
}

// resolve applies precedence: within a layer the preferred file wins
// (deeper paths first, then reverse lexical order, so the preferred one
// comes last), across layers the later layer wins; every definition that
// lost is shadowed by the one that won.
func resolve(perLayer [][]*Definition, depth map[*Definition]int) (*Set, []Diagnostic) {
	var diags []Diagnostic
	set := &Set{byName: map[string]*Definition{}}
	for _, defs := range perLayer {
		sort.SliceStable(defs, func(i, j int) bool {
			if depth[defs[i]] != depth[defs[j]] {
				return depth[defs[i]] > depth[defs[j]]
			}
			return defs[i].Path > defs[j].Path
		})
		winner := map[string]*Definition{}
		for _, d := range defs {
			winner[d.Name] = d
		}
		for _, d := range defs {
			if w := winner[d.Name]; w != d {
				diags = append(diags, Diagnostic{File: d.Path, Severity: SeverityWarning,
					Message: fmt.Sprintf("agent %q is also defined in %s, which is used instead", d.Name, w.Path)})
			}
			set.byName[d.Name] = d
			set.all = append(set.all, d)
		}
	}
	for _, d := range set.all {
		if w := set.byName[d.Name]; w != d {
			d.ShadowedBy = w.Path
			w.Shadows = append(w.Shadows, d.Path)
		}
	}
	for _, d := range set.byName {
		set.active = append(set.active, d)
	}
	SortDefinitions(set.active)
	return set, diags
}

// loadFlag reads the --agents value: inline JSON or a path to it.
func loadFlag(value, cwd string) ([]*Definition, []Diagnostic, error) {
	trimmed := strings.TrimSpace(value)
	if strings.HasPrefix(trimmed, "{") {
		return ParseJSON("--agents", []byte(trimmed), SourceFlag)
	}
	p := value
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("--agents: not a JSON object and not a readable file: %w", err)
	}
	return ParseJSON(p, data, SourceFlag)
}

// projectDirs lists the directories from the git root down to cwd (cwd
// alone when it is not in a git work tree), leaving out home, whose
// agents are user agents.
func projectDirs(cwd, home string) []string {
	var chain []string
	root := ""
	for d := cwd; ; {
		chain = append(chain, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if root == "" {
		chain = chain[:1]
	}
	var out []string
	for i := len(chain) - 1; i >= 0; i-- {
		if home != "" && filepath.Clean(chain[i]) == filepath.Clean(home) {
			continue
		}
		out = append(out, chain[i])
	}
	return out
}

// foundFile is an agent file found by scanDir.
type foundFile struct {
	path  string
	depth int
}

// Bounds of one directory scan: links may lead anywhere (a dotfiles
// repository is a common target), so the walk stops at a depth and a
// number of directories and files.
const (
	maxScanDepth = 16
	maxScanDirs  = 1000
	maxScanFiles = 10000
)

// scanDir lists the .md files under dir, recursively, in lexical order.
// Symbolic links are followed, each real directory visited once (so a
// link cycle ends), within maxScanDepth levels, maxScanDirs directories
// and maxScanFiles files; a link into a directory that holds credentials
// or system state (safefs.Protected: ~/.ssh, ~/.aws, /etc, …; home is the
// user's home directory) is never followed, and says so. Files over
// MaxFileSize are skipped when read.
func scanDir(dir, home string) ([]foundFile, []Diagnostic) {
	var files []foundFile
	var diags []Diagnostic
	visited := map[string]bool{}
	limited := false
	limit := func(d string) {
		if !limited {
			limited = true
			diags = append(diags, Diagnostic{File: d, Severity: SeverityWarning, Message: fmt.Sprintf("agent directory scan stopped here: more than %d levels, %d directories or %d files", maxScanDepth, maxScanDirs, maxScanFiles)})
		}
	}
	protected := func(p, real string) bool {
		if !safefs.Protected(home, real) {
			return false
		}
		diags = append(diags, Diagnostic{File: p, Severity: SeverityWarning, Message: fmt.Sprintf("not loaded: it leads to %s, a directory that holds credentials or system state", real)})
		return true
	}
	// real is the directory's path with symbolic links resolved: resolved
	// once for the root and for each linked directory, and extended by
	// name for plain subdirectories.
	var walk func(d, real string, depth int)
	walk = func(d, real string, depth int) {
		if real == "" {
			r, err := filepath.EvalSymlinks(d)
			if err != nil {
				if depth > 0 {
					diags = append(diags, Diagnostic{File: d, Severity: SeverityWarning, Message: fmt.Sprintf("cannot read agent directory: %v", err)})
				}
				return
			}
			real = r
			if protected(d, real) {
				return
			}
		}
		if visited[real] {
			return
		}
		if depth > maxScanDepth || len(visited) >= maxScanDirs {
			limit(d)
			return
		}
		visited[real] = true
		entries, err := os.ReadDir(d)
		if err != nil {
			if !os.IsNotExist(err) {
				diags = append(diags, Diagnostic{File: d, Severity: SeverityWarning, Message: fmt.Sprintf("cannot read agent directory: %v", err)})
			}
			return
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			typ := e.Type()
			childReal := filepath.Join(real, e.Name())
			if typ&fs.ModeSymlink != 0 {
				childReal = ""
				info, err := os.Stat(p)
				if err != nil {
					diags = append(diags, Diagnostic{File: p, Severity: SeverityWarning, Message: fmt.Sprintf("broken symbolic link: %v", err)})
					continue
				}
				typ = info.Mode().Type()
				if typ.IsRegular() {
					if r, err := filepath.EvalSymlinks(p); err != nil || protected(p, r) {
						continue
					}
				}
			}
			if typ.IsDir() {
				walk(p, childReal, depth+1)
				continue
			}
			if !typ.IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			if len(files) >= maxScanFiles {
				limit(p)
				return
			}
			files = append(files, foundFile{path: p, depth: depth})
		}
	}
	walk(dir, "", 0)
	return files, diags
}

func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].File != ds[j].File {
			return ds[i].File < ds[j].File
		}
		return ds[i].Line < ds[j].Line
	})
}
