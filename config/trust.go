package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/run"
)

// Workspace trust (S-10.4). A repository's own files — .cadre/settings.json,
// .cadre/settings.local.json, .mcp.json, agent files under the workspace —
// may always narrow what a run does (deny and ask rules, a lower mode).
// What widens it applies only in a workspace the user trusts:
//
//   - allow rules and a permission mode above default;
//   - further working directories outside the workspace;
//   - env entries other than a few harmless ones (SafeProjectEnv): a base
//     URL or key would send the user's credentials elsewhere;
//   - hooks, and MCP servers, which run commands;
//   - anything else that runs a command or talks to a host the user did
//     not choose (web-search endpoints and keys).
//
// A workspace is trusted when the user ran `cadre trust` on it or on a
// directory above it (recorded in TrustFile), passed --trust-project, or
// listed it in trustedWorkspaces in the user's settings, a --settings file
// or managed settings. Otherwise each widening entry is ignored and
// reported once, naming its file and `cadre trust`.
//
// The one gate every loader calls for an item read from a file is
// Trust.Allow: it answers true for files that are not the workspace's and
// for a trusted workspace, and records the item as ignored otherwise.
// Settings.Trust holds the run's Trust; Load reports what it ignored.

// TrustFileName is the file in the user's cadre configuration directory
// (~/.config/cadre) that `cadre trust` writes.
const TrustFileName = "trusted-workspaces.json"

// TrustFile is the path of the trust file for home, in ~/.config/cadre
// (TrustFileIn honours XDG_CONFIG_HOME).
func TrustFile(home string) string { return TrustFileIn(home, "") }

// TrustFileIn is the path of the trust file in UserConfigDir(home,
// configHome), configHome being $XDG_CONFIG_HOME ("" for ~/.config).
func TrustFileIn(home, configHome string) string {
	return filepath.Join(UserConfigDir(home, configHome), TrustFileName)
}

// Trust sources, for Trust.Source.
const (
	TrustSourceFlag = "--trust-project"
)

// safeProjectEnv lists the env keys an untrusted workspace's settings may
// still set: they choose models and time limits, never where requests go
// or with which credentials.
var safeProjectEnv = []string{
	"CADRE_MODEL", "CADRE_SUBAGENT_MODEL", "CADRE_SUBAGENT_MODEL_FORCE", "ANTHROPIC_MODEL",
	"MCP_TIMEOUT", "MCP_TOOL_TIMEOUT", "MAX_MCP_OUTPUT_TOKENS", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS",
}

// SafeProjectEnv reports whether an untrusted workspace's settings may set
// the environment variable key.
func SafeProjectEnv(key string) bool { return slices.Contains(safeProjectEnv, key) }

// Trust is the workspace trust of one run. Its methods are safe for
// concurrent use. A nil *Trust trusts nothing from the workspace.
type Trust struct {
	// Root is the workspace: the git work tree holding the working
	// directory, or the working directory itself.
	Root string
	// Trusted reports whether the workspace's files may widen the run.
	Trusted bool
	// Source says why it is trusted: TrustSourceFlag, the trust file, or a
	// settings file's trustedWorkspaces; "" when it is not.
	Source string

	// own are the user's own directories, never the workspace's even when
	// they lie under Root (a home directory that is a repository).
	own []string

	mu       sync.Mutex
	ignored  []run.Setting
	reported int
}

// TrustOptions says how ResolveTrust decides.
type TrustOptions struct {
	// Cwd is the working directory (absolute).
	Cwd string
	// Home is the user's home directory; "" reads no trust file.
	Home string
	// Flag is --trust-project.
	Flag bool
	// Listed are trustedWorkspaces entries from files the user controls
	// (user, --settings, managed), each with its file.
	Listed []run.Setting
	// ManagedDir is never part of the workspace; nor is ClaudeManagedDir.
	ManagedDir, ClaudeManagedDir string
	// ConfigHome is $XDG_CONFIG_HOME ("" for ~/.config): where the trust
	// file is (TrustFileIn).
	ConfigHome string
}

// ResolveTrust decides whether the workspace holding opts.Cwd is trusted.
// A trust file that cannot be read or parsed is an error naming it.
func ResolveTrust(opts TrustOptions) (*Trust, error) {
	t := &Trust{Root: workspaceRoot(opts.Cwd)}
	if opts.Home != "" {
		t.own = []string{filepath.Join(opts.Home, ".config", "cadre"), filepath.Join(opts.Home, ".claude"), UserConfigDir(opts.Home, opts.ConfigHome)}
	}
	for _, d := range []string{opts.ManagedDir, opts.ClaudeManagedDir} {
		if d != "" {
			t.own = append(t.own, d)
		}
	}
	if opts.Flag {
		t.Trusted, t.Source = true, TrustSourceFlag
		return t, nil
	}
	listed := slices.Clone(opts.Listed)
	if opts.Home != "" {
		file := TrustFileIn(opts.Home, opts.ConfigHome)
		dirs, err := trustedIn(file)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			listed = append(listed, run.Setting{What: d, Source: file})
		}
	}
	cwd := realPath(opts.Cwd)
	for _, l := range listed {
		if within(cwd, realPath(l.What)) {
			t.Trusted, t.Source = true, l.Source
			return t, nil
		}
	}
	return t, nil
}

// FromProject reports whether file was read from the workspace (a
// repository's own file) rather than from the user's configuration,
// managed settings or a path named on the command line.
func (t *Trust) FromProject(file string) bool {
	if t == nil || !filepath.IsAbs(file) {
		return false
	}
	file = filepath.Clean(file)
	for _, o := range t.own {
		if within(file, o) {
			return false
		}
	}
	return within(file, t.Root)
}

// Allow is the gate for an item that widens what a run does — an allow
// rule, a mode, an env entry, a hook, an MCP server — read from file: it
// reports whether the item applies. It does when file is not the
// workspace's or the workspace is trusted; otherwise the item is recorded
// as ignored (reported once by Load, or by Report) and Allow returns
// false. what names the item as the user wrote it
// (`permissions.allow "Bash"`, `hooks.PreToolUse`, `mcpServers.files`).
// A nil *Trust allows nothing from any file.
func (t *Trust) Allow(file, what string) bool {
	if t == nil {
		return false
	}
	if t.Trusted || !t.FromProject(file) {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := run.Setting{What: what, Source: file}
	if !slices.Contains(t.ignored, s) {
		t.ignored = append(t.ignored, s)
	}
	return false
}

// Ignored returns every item Allow refused, in order.
func (t *Trust) Ignored() []run.Setting {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.ignored)
}

// Report returns a warning for each item refused since the last Report,
// so that each is reported once however many loaders ask.
func (t *Trust) Report() []Diagnostic {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var diags []Diagnostic
	for _, s := range t.ignored[t.reported:] {
		diags = append(diags, Diagnostic{File: s.Source, Severity: SeverityWarning, Topic: TopicTrust, Message: IgnoredMessage(s.What, t.Root)})
	}
	t.reported = len(t.ignored)
	return diags
}

// IgnoredMessage is the warning for one ignored item of an untrusted
// workspace.
func IgnoredMessage(what, root string) string {
	return fmt.Sprintf("%s ignored: the workspace %s is not trusted, and a repository's settings cannot widen what cadre may do (run `cadre trust %s` to trust it, or pass --trust-project for one run)",
		what, root, shellWord(root))
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// workspaceRoot is the git work tree holding cwd (the nearest directory
// with a .git entry), or cwd.
func workspaceRoot(cwd string) string {
	cwd = filepath.Clean(cwd)
	for d := cwd; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return cwd
		}
		d = up
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// realPath resolves symbolic links in p when it exists.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// trustData is the trust file's shape.
type trustData struct {
	Workspaces []string `json:"workspaces"`
}

// TrustedWorkspaces returns the directories `cadre trust` recorded for
// home (in ~/.config/cadre; TrustFileIn and the In functions honour
// XDG_CONFIG_HOME). A missing file is an empty list.
func TrustedWorkspaces(home string) ([]string, error) { return trustedIn(TrustFile(home)) }

// TrustedWorkspacesIn is TrustedWorkspaces for the trust file path
// (TrustFileIn).
func TrustedWorkspacesIn(path string) ([]string, error) { return trustedIn(path) }

// trustedIn reads the trust file path.
func trustedIn(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust file: %w", err)
	}
	var td trustData
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&td); err != nil {
		return nil, posError(path, data, err)
	}
	for _, w := range td.Workspaces {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("%w: %s: workspace %q is not an absolute path", ErrMalformed, path, w)
		}
	}
	return td.Workspaces, nil
}

// TrustWorkspace records dir (made absolute, links resolved) as trusted
// for home and returns the path it recorded; recording it again changes
// nothing.
func TrustWorkspace(home, dir string) (string, error) { return TrustWorkspaceIn(TrustFile(home), dir) }

// TrustWorkspaceIn is TrustWorkspace for the trust file path (TrustFileIn).
func TrustWorkspaceIn(path, dir string) (string, error) {
	abs, err := absDir(dir)
	if err != nil {
		return "", err
	}
	abs = realPath(abs)
	list, err := trustedIn(path)
	if err != nil {
		return "", err
	}
	if slices.Contains(list, abs) {
		return abs, nil
	}
	return abs, writeTrust(path, append(list, abs))
}

// UntrustWorkspace removes dir from the trust file; it reports whether it
// was there.
func UntrustWorkspace(home, dir string) (bool, error) {
	return UntrustWorkspaceIn(TrustFile(home), dir)
}

// UntrustWorkspaceIn is UntrustWorkspace for the trust file path.
func UntrustWorkspaceIn(path, dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, fmt.Errorf("untrust %s: %w", dir, err)
	}
	list, err := trustedIn(path)
	if err != nil {
		return false, err
	}
	n := len(list)
	list = slices.DeleteFunc(list, func(w string) bool { return w == abs || w == realPath(abs) })
	if len(list) == n {
		return false, nil
	}
	return true, writeTrust(path, list)
}

// writeTrust replaces the trust file atomically, readable by the user only.
func writeTrust(path string, list []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write trust file: %w", err)
	}
	data, err := json.MarshalIndent(trustData{Workspaces: list}, "", "  ")
	if err != nil {
		return fmt.Errorf("write trust file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("write trust file: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write trust file %s: %w", path, err)
	}
	return nil
}
