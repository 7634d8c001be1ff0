package agentscmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// env is a temp home and project for one test.
type env struct {
	t    *testing.T
	home string
	proj string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{e.home, filepath.Join(e.proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.proj, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// run executes `agents ARGS…` in process and returns stdout, stderr and
// the error.
func (e *env) run(args ...string) (string, string, error) {
	e.t.Helper()
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append(args, "--cwd", e.proj, "--home", e.home, "--managed-dir", filepath.Join(e.proj, "no-managed")))
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

const reviewer = "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Bash(git diff:*)\nmodel: sonnet\npermissionMode: plan\n---\nYou review.\n"

func TestTable(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", reviewer)
	e.write(".claude/agents/gp.md", "---\nname: general-purpose\ndescription: mine\n---\nx\n")
	e.write(".claude/agents/bad.md", "---\nname: bad\n---\n")
	out, stderr, err := e.run()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "SHADOWED BY") {
		t.Errorf("header %q", lines[0])
	}
	var gpLines []string
	for _, l := range lines {
		if strings.HasPrefix(l, "general-purpose ") {
			gpLines = append(gpLines, strings.Join(strings.Fields(l), " "))
		}
	}
	want := []string{
		"general-purpose project default All tools -",
		"general-purpose builtin default All tools " + filepath.Join(e.proj, ".claude", "agents", "gp.md"),
	}
	if diff := cmp.Diff(want, gpLines); diff != "" {
		t.Errorf("general-purpose rows (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "Read, Bash(git diff:*)") || !strings.Contains(out, "sonnet") {
		t.Errorf("reviewer row missing:\n%s", out)
	}
	if !strings.Contains(stderr, "1 error(s), 0 warning(s)") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestJSON(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", reviewer)
	e.write(".claude/agents/typo.md", "---\nname: typo\ndescription: t\nallowedTools: Read\ncolour: red\n---\n")
	out, _, err := e.run("--json", "--agents", `{"flagged": {"description": "from the flag", "disallowedTools": ["Write"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Agents []map[string]any `json:"agents"`
		Diags  []map[string]any `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byName := map[string]map[string]any{}
	for _, a := range got.Agents {
		for _, k := range []string{"name", "description", "source", "path", "tools", "disallowedTools", "model", "permissionMode", "shadowedBy"} {
			if _, ok := a[k]; !ok {
				t.Errorf("agent %v lacks %q", a["name"], k)
			}
		}
		byName[a["name"].(string)] = a
	}
	r := byName["reviewer"]
	if diff := cmp.Diff([]any{"Read", "Bash(git diff:*)"}, r["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if r["disallowedTools"] != nil || r["shadowedBy"] != nil || r["model"] != "sonnet" || r["permissionMode"] != "plan" || r["source"] != "project" {
		t.Errorf("reviewer: %v", r)
	}
	f := byName["flagged"]
	if f["source"] != "flag" || f["path"] != "--agents" || f["tools"] != nil {
		t.Errorf("flagged: %v", f)
	}
	if diff := cmp.Diff([]any{"Write"}, f["disallowedTools"]); diff != "" {
		t.Errorf("flagged disallowedTools: %s", diff)
	}
	if diff := cmp.Diff([]any{"Bash", "Read"}, r["effectiveTools"]); diff != "" {
		t.Errorf("reviewer effectiveTools (-want +got):\n%s", diff)
	}
	if eff := f["effectiveTools"].([]any); len(eff) == 0 || slices.Contains(eff, any("Write")) || !slices.Contains(eff, any("WebFetch")) {
		t.Errorf("flagged effectiveTools %v", eff)
	}
	if diff := cmp.Diff([]any{"Read"}, byName["typo"]["tools"]); diff != "" {
		t.Errorf("typo tools: %s", diff)
	}
	if len(got.Diags) != 2 {
		t.Fatalf("diagnostics: %v", got.Diags)
	}
	for _, d := range got.Diags {
		if d["severity"] != "warning" || d["line"] == nil || !strings.HasSuffix(d["file"].(string), "typo.md") || d["message"] == "" {
			t.Errorf("diagnostic %v", d)
		}
	}
	if !strings.Contains(got.Diags[1]["message"].(string), `did you mean "color"`) {
		t.Errorf("no did-you-mean: %v", got.Diags[1])
	}
	// Deterministic output.
	again, _, _ := e.run("--json", "--agents", `{"flagged": {"description": "from the flag", "disallowedTools": ["Write"]}}`)
	if again != out {
		t.Error("--json output differs between runs")
	}
}

func TestShow(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", reviewer)
	out, _, err := e.run("show", "reviewer")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"name:               reviewer", "source:             project", "tools:              Read, Bash(git diff:*)", "disallowedTools:    (not set)", "permissionMode:     plan", "\n\nYou review.\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("show output lacks %q:\n%s", s, out)
		}
	}
	_, _, err = e.run("show", "reviewr")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), `unknown agent "reviewr"; did you mean "reviewer"`) {
		t.Errorf("unknown name: %v", err)
	}
	_, _, err = e.run("show", "explore")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), `"Explore"`) {
		t.Errorf("unknown name: %v", err)
	}
}

func TestCheck(t *testing.T) {
	e := newEnv(t)
	good := e.write("defs/good.md", reviewer)
	warn := e.write("defs/sub/warn.md", "---\nname: warn\ndescription: w\nmaxTurns: lots\n---\n")
	bad := e.write("other/bad.md", "---\nname: -bad\ndescription: b\n---\n")
	docs := e.write("other/README.md", "# not an agent\n")

	out, stderr, err := e.run("check", filepath.Dir(good))
	if err != nil {
		t.Fatalf("warnings only must exit 0: %v", err)
	}
	if want := warn + ":4: warning: invalid maxTurns \"lots\"; ignored — it must be a positive whole number\n"; out != want {
		t.Errorf("out %q, want %q", out, want)
	}
	if !strings.Contains(stderr, "2 file(s), 2 agent(s): 0 error(s), 1 warning(s)") {
		t.Errorf("stderr %q", stderr)
	}

	out, _, err = e.run("check", bad, docs, good)
	if exitCode(err) != 1 {
		t.Errorf("errors must exit 1, got %v", err)
	}
	for _, s := range []string{bad + ":2: error: invalid name \"-bad\"", docs + ":1: warning: no frontmatter"} {
		if !strings.Contains(out, s) {
			t.Errorf("check output lacks %q:\n%s", s, out)
		}
	}

	_, _, err = e.run("check", filepath.Join(e.proj, "missing.md"))
	if exitCode(err) != 1 {
		t.Errorf("missing path: %v", err)
	}

	// No paths: what Load finds.
	e.write(".claude/agents/broken.md", "---\nname: x\ndescription: a: b\n<commentary>\n---\n")
	out, _, err = e.run("check")
	if exitCode(err) != 1 || !strings.Contains(out, "broken.md:4: error: frontmatter is not valid YAML") {
		t.Errorf("check without paths: %v\n%s", err, out)
	}
}

func TestBadFlagAgents(t *testing.T) {
	e := newEnv(t)
	_, _, err := e.run("--agents", `{"a": `)
	if exitCode(err) != 1 {
		t.Errorf("bad --agents: %v", err)
	}
}
