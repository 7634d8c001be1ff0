package agentdef

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree is a test file system: home, a git repo with a nested cwd, and a
// managed dir.
type tree struct {
	t       *testing.T
	root    string
	home    string
	repo    string
	cwd     string
	managed string
}

func newTree(t *testing.T) *tree {
	t.Helper()
	root := t.TempDir()
	tr := &tree{
		t:       t,
		root:    root,
		home:    filepath.Join(root, "home"),
		repo:    filepath.Join(root, "work", "repo"),
		managed: filepath.Join(root, "etc", "cadre", "agents"),
	}
	tr.cwd = filepath.Join(tr.repo, "sub", "dir")
	for _, d := range []string{tr.home, tr.cwd, filepath.Join(tr.repo, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// agent writes an agent file named name with the given description.
func (tr *tree) agent(dir, file, name, desc string) string {
	tr.t.Helper()
	p := filepath.Join(dir, file)
	tr.write(p, "---\nname: "+name+"\ndescription: "+desc+"\n---\nbody of "+desc+"\n")
	return p
}

func (tr *tree) write(p, content string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *tree) load(flagAgents string) *Set {
	tr.t.Helper()
	set, err := Load(context.Background(), LoadOptions{Cwd: tr.cwd, Home: tr.home, ManagedDir: tr.managed, FlagAgents: flagAgents})
	if err != nil {
		tr.t.Fatal(err)
	}
	return set
}

func TestPrecedenceAllSources(t *testing.T) {
	tr := newTree(t)
	// "general-purpose" is defined by every source; each layer above wins.
	plugin := tr.agent(filepath.Join(tr.repo, ".cadre", "plugins", "kit", "agents"), "gp.md", "general-purpose", "plugin")
	userClaude := tr.agent(filepath.Join(tr.home, ".claude", "agents"), "gp.md", "general-purpose", "user-claude")
	userCadre := tr.agent(filepath.Join(tr.home, ".config", "cadre", "agents"), "gp.md", "general-purpose", "user-cadre")
	projRoot := tr.agent(filepath.Join(tr.repo, ".claude", "agents"), "gp.md", "general-purpose", "project-root")
	projSub := tr.agent(filepath.Join(tr.repo, "sub", ".claude", "agents"), "gp.md", "general-purpose", "project-sub")
	projCwdClaude := tr.agent(filepath.Join(tr.cwd, ".claude", "agents"), "gp.md", "general-purpose", "project-cwd-claude")
	projCwdCadre := tr.agent(filepath.Join(tr.cwd, ".cadre", "agents"), "gp.md", "general-purpose", "project-cwd-cadre")
	managed := tr.agent(tr.managed, "gp.md", "general-purpose", "managed")
	flag := `{"general-purpose": {"description": "flag", "prompt": "p"}}`

	set := tr.load(flag)
	gp := set.Get("general-purpose")
	if gp.Description != "managed" || gp.Source != SourceManaged {
		t.Fatalf("active = %s from %s", gp.Description, gp.Source)
	}
	var chain []string
	for _, d := range set.All() {
		if d.Name == "general-purpose" {
			chain = append(chain, string(d.Source)+":"+d.Description)
		}
	}
	want := []string{
		"builtin:" + Builtins()[0].Description,
		"user:user-claude", "user:user-cadre",
		"project:project-root", "project:project-sub", "project:project-cwd-claude", "project:project-cwd-cadre",
		"flag:flag", "managed:managed",
	}
	// The plugin agent is namespaced, so it does not clash.
	if diff := cmp.Diff(want, chain); diff != "" {
		t.Errorf("precedence chain (-want +got):\n%s", diff)
	}
	wantShadows := []string{"builtin:general-purpose", userClaude, userCadre, projRoot, projSub, projCwdClaude, projCwdCadre, "--agents"}
	if diff := cmp.Diff(wantShadows, gp.Shadows); diff != "" {
		t.Errorf("shadows (-want +got):\n%s", diff)
	}
	for _, d := range set.All() {
		if d.Name == "general-purpose" && d != gp && d.ShadowedBy != managed {
			t.Errorf("%s shadowed by %q", d.Path, d.ShadowedBy)
		}
	}
	p := set.Get("kit:general-purpose")
	if p == nil || p.Source != SourcePlugin || p.Plugin != "kit" || p.Path != plugin {
		t.Fatalf("plugin agent: %+v", p)
	}
	if len(set.Diagnostics()) != 0 {
		t.Errorf("diagnostics: %v", set.Diagnostics())
	}

	// Without managed and flag, the cwd's .cadre wins; without it, .claude.
	if err := os.Remove(managed); err != nil {
		t.Fatal(err)
	}
	if got := tr.load("").Get("general-purpose").Description; got != "project-cwd-cadre" {
		t.Errorf("got %s, want project-cwd-cadre", got)
	}
	for _, f := range []string{projCwdCadre, projCwdClaude} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if got := tr.load("").Get("general-purpose").Description; got != "project-sub" {
		t.Errorf("got %s, want project-sub (deeper project dir wins)", got)
	}
}

func TestProjectDirsStopAtGitRoot(t *testing.T) {
	tr := newTree(t)
	// Above the git root: not read.
	tr.agent(filepath.Join(tr.root, "work", ".claude", "agents"), "x.md", "outside", "outside")
	tr.agent(filepath.Join(tr.repo, ".claude", "agents"), "x.md", "inside", "inside")
	set := tr.load("")
	if set.Get("outside") != nil || set.Get("inside") == nil {
		t.Errorf("outside=%v inside=%v", set.Get("outside"), set.Get("inside"))
	}

	// Not in a git repository: only the cwd itself.
	plain := filepath.Join(tr.root, "plain", "a")
	tr.agent(filepath.Join(tr.root, "plain", ".claude", "agents"), "x.md", "parent", "parent")
	tr.agent(filepath.Join(plain, ".claude", "agents"), "x.md", "here", "here")
	set, err := Load(context.Background(), LoadOptions{Cwd: plain, ManagedDir: tr.managed})
	if err != nil {
		t.Fatal(err)
	}
	if set.Get("parent") != nil || set.Get("here") == nil {
		t.Errorf("parent=%v here=%v", set.Get("parent"), set.Get("here"))
	}
}

func TestScanRules(t *testing.T) {
	tr := newTree(t)
	dir := filepath.Join(tr.cwd, ".claude", "agents")
	tr.agent(dir, "a.md", "a", "top")
	tr.agent(filepath.Join(dir, "nested", "deeper"), "b.md", "b", "nested")
	tr.agent(dir, ".hidden.md", "hidden", "hidden files count")
	tr.agent(dir, "upper.MD", "upper", "not .md")
	tr.agent(dir, "notes.markdown", "mk", "not .md")
	tr.write(filepath.Join(dir, "README.md"), "# docs, no frontmatter\n")
	big := filepath.Join(dir, "big.md")
	tr.write(big, "---\nname: big\ndescription: big\n---\n"+strings.Repeat("x", MaxFileSize))
	// Same name twice in one directory: the shallower file wins.
	tr.agent(filepath.Join(dir, "translations"), "a.md", "a", "deeper copy")
	// Symlinks: a linked directory is read once; a cycle ends.
	ext := filepath.Join(tr.root, "ext")
	tr.agent(ext, "linked.md", "linked", "through a symlink")
	if err := os.Symlink(ext, filepath.Join(dir, "ext")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "nested", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ext, "linked.md"), filepath.Join(dir, "alias.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tr.root, "missing"), filepath.Join(dir, "broken.md")); err != nil {
		t.Fatal(err)
	}

	set := tr.load("")
	var names []string
	for _, d := range set.Active() {
		if d.Source == SourceProject {
			names = append(names, d.Name)
		}
	}
	if diff := cmp.Diff([]string{"a", "b", "hidden", "linked"}, names); diff != "" {
		t.Errorf("active project agents (-want +got):\n%s", diff)
	}
	if got := set.Get("a").Description; got != "top" {
		t.Errorf("a = %q, want the shallower file", got)
	}
	if !hasFileDiag(set.Diagnostics(), filepath.Join(dir, "translations", "a.md"), "also defined in") {
		t.Errorf("no duplicate warning: %v", set.Diagnostics())
	}
	if !hasFileDiag(set.Diagnostics(), big, "over the 1 MiB limit") {
		t.Errorf("no size warning: %v", set.Diagnostics())
	}
	if !hasFileDiag(set.Diagnostics(), filepath.Join(dir, "broken.md"), "broken symbolic link") {
		t.Errorf("no broken-link warning: %v", set.Diagnostics())
	}
	// alias.md and ext/linked.md are the same agent in one directory.
	if n := countName(set.All(), "linked"); n != 2 {
		t.Errorf("linked found %d times, want 2 (file link and directory link)", n)
	}
}

func countName(defs []*Definition, name string) int {
	n := 0
	for _, d := range defs {
		if d.Name == name {
			n++
		}
	}
	return n
}

func TestPlugins(t *testing.T) {
	tr := newTree(t)
	userPlugins := filepath.Join(tr.home, ".config", "cadre", "plugins")
	tr.write(filepath.Join(userPlugins, "sec", "agents", "audit.md"),
		"---\nname: audit\ndescription: audits\npermissionMode: bypassPermissions\nhooks:\n  Stop: []\nmcpServers: [x]\ntools: Read\n---\nbody")
	extra := filepath.Join(tr.root, "extra-plugins")
	tr.agent(filepath.Join(extra, "docs", "agents"), "w.md", "writer", "writes")
	tr.agent(filepath.Join(tr.cwd, ".cadre", "plugins", "sec", "agents"), "audit.md", "audit", "project plugin copy")
	set, err := Load(context.Background(), LoadOptions{Cwd: tr.cwd, Home: tr.home, ManagedDir: tr.managed, PluginDirs: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	a := set.Get("sec:audit")
	if a == nil || a.Description != "project plugin copy" || a.Plugin != "sec" {
		t.Fatalf("sec:audit = %+v", a)
	}
	var user *Definition
	for _, d := range set.All() {
		if d.Name == "sec:audit" && d != a {
			user = d
		}
	}
	if user == nil || user.PermissionMode != "" || user.Hooks != nil || user.MCPServers != nil || ToolsNote(user) != "Read" {
		t.Errorf("user plugin agent not stripped: %+v", user)
	}
	for _, k := range []string{"permissionMode", "hooks", "mcpServers"} {
		if !hasFileDiag(set.Diagnostics(), user.Path, "plugin agents cannot set \""+k+"\"") {
			t.Errorf("no warning for %s", k)
		}
	}
	if w := set.Get("docs:writer"); w == nil || w.Source != SourcePlugin {
		t.Errorf("docs:writer = %+v", w)
	}
	if set.Get("audit") != nil {
		t.Error("plugin agent visible without its namespace")
	}
}

func TestFlagAgents(t *testing.T) {
	tr := newTree(t)
	file := filepath.Join(tr.cwd, "agents.json")
	tr.write(file, `{"from-file": {"description": "file", "tools": "Read Grep"}}`)
	set := tr.load("agents.json")
	d := set.Get("from-file")
	if d == nil || d.Source != SourceFlag || d.Path != file || ToolsNote(d) != "Read, Grep" {
		t.Fatalf("from-file = %+v", d)
	}
	set = tr.load(` {"inline": {"description": "inline", "permissionMode": "bubble"}}`)
	d = set.Get("inline")
	if d == nil || d.Path != "--agents" || d.PermissionMode != "" {
		t.Fatalf("inline = %+v", d)
	}
	if !hasFileDiag(set.Diagnostics(), "--agents", "internal to forked agents") {
		t.Errorf("diagnostics: %v", set.Diagnostics())
	}
	for _, bad := range []string{"missing.json", `{"a": `} {
		if _, err := Load(context.Background(), LoadOptions{Cwd: tr.cwd, ManagedDir: tr.managed, FlagAgents: bad}); err == nil {
			t.Errorf("FlagAgents %q: no error", bad)
		}
	}
}

func TestLoadCancelled(t *testing.T) {
	tr := newTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, LoadOptions{Cwd: tr.cwd, ManagedDir: tr.managed}); err == nil {
		t.Error("no error for a cancelled context")
	}
}

func TestActiveSortedAndBuiltins(t *testing.T) {
	tr := newTree(t)
	dir := filepath.Join(tr.cwd, ".claude", "agents")
	tr.agent(dir, "1.md", "zeta", "z")
	tr.agent(dir, "2.md", "Alpha", "a")
	tr.agent(dir, "3.md", "explore", "lower-case explore is a different agent")
	tr.agent(dir, "4.md", "ünicode", "u")
	set := tr.load("")
	var names []string
	for _, d := range set.Active() {
		names = append(names, d.Name)
	}
	want := []string{"Alpha", "explore", "Explore", "general-purpose", "Plan", "verification", "zeta", "ünicode"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("active order (-want +got):\n%s", diff)
	}
}

func TestBuiltins(t *testing.T) {
	bs := Builtins()
	byName := map[string]*Definition{}
	for _, b := range bs {
		byName[b.Name] = b
		if b.Source != SourceBuiltin || b.Path != "builtin:"+b.Name || b.Body == "" || b.Description == "" || len(b.Diagnostics) != 0 {
			t.Errorf("%s: %+v", b.Name, b)
		}
	}
	if len(bs) != 4 {
		t.Fatalf("%d built-ins", len(bs))
	}
	gp, ex, pl, ve := byName["general-purpose"], byName["Explore"], byName["Plan"], byName["verification"]
	if !gp.AllTools() || gp.OneShot || ToolsNote(gp) != "All tools" {
		t.Errorf("general-purpose: %s", ToolsNote(gp))
	}
	readOnly := "All tools except Agent, ExitPlanMode, Edit, MultiEdit, Write, NotebookEdit"
	if ToolsNote(ex) != readOnly || !ex.OneShot || !ex.OmitInstructions || !ex.OmitGitStatus {
		t.Errorf("Explore: %s %+v", ToolsNote(ex), ex)
	}
	if ToolsNote(pl) != readOnly || !pl.OneShot || pl.Model != "inherit" || !strings.Contains(pl.Body, "Critical files") {
		t.Errorf("Plan: %s %+v", ToolsNote(pl), pl)
	}
	if !ve.Background || !strings.Contains(ve.Body, "VERDICT: PARTIAL") || ToolsNote(ve) != readOnly {
		t.Errorf("verification: %+v", ve)
	}
	for _, s := range []string{"quick", "medium", "very thorough"} {
		if !strings.Contains(ex.Description, s) {
			t.Errorf("Explore description lacks %q", s)
		}
	}
	// Fresh copies: changing one does not change the next call.
	bs[0].Description = "changed"
	if Builtins()[0].Description == "changed" {
		t.Error("Builtins shares state")
	}
	f := Fork()
	if f.Name != "fork" || !f.AllTools() || f.PermissionMode != "bubble" || f.MaxTurns != 200 || f.Model != "inherit" {
		t.Errorf("Fork: %+v", f)
	}
}
