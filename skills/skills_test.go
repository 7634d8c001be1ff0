package skills

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillFile(name, desc, body string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n"
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		want       *Skill
		diags      []string // substrings, in order
	}{
		{name: "full", data: "\xef\xbb\xbf---\r\nname: pdf\r\ndescription: Fill PDF forms. Use for .pdf files.\r\nallowed-tools: Read, Bash(python3:*) Grep\r\nlicense: MIT\r\n---\r\n# PDF\r\n\r\nRun scripts/fill.py.\r\n",
			want: &Skill{Name: "pdf", Description: "Fill PDF forms. Use for .pdf files.", AllowedTools: []string{"Read", "Bash(python3:*)", "Grep"}, Body: "# PDF\n\nRun scripts/fill.py."}},
		{name: "list tools, dir name", data: "---\ndescription: d\nallowed-tools:\n  - Read\n  - Write\n---\nbody",
			want:  &Skill{Name: "dir", Description: "d", AllowedTools: []string{"Read", "Write"}, Body: "body"},
			diags: []string{"1: warning: no name in the frontmatter"}},
		{name: "unknown key", data: "---\nname: a\ndescription: d\ncolour: red\n---\nb",
			want: &Skill{Name: "a", Description: "d", Body: "b"}, diags: []string{`4: warning: unknown frontmatter key "colour"`}},
		{name: "no frontmatter", data: "# just markdown", diags: []string{"1: error: no frontmatter"}},
		{name: "unclosed frontmatter", data: "---\nname: a\ndescription: d\n", diags: []string{"error: no frontmatter"}},
		{name: "bad yaml", data: "---\nname: [a\n---\nb", diags: []string{"error: frontmatter is not valid YAML"}},
		{name: "no description", data: "---\nname: a\n---\nb", diags: []string{"error: description is required"}},
		{name: "bad name", data: "---\nname: ../x\ndescription: d\n---\nb", diags: []string{"2: error: name \"../x\" may hold only"}},
		{name: "name not a string", data: "---\nname: [1]\ndescription: d\n---\nb", diags: []string{"error: name must be a string"}},
		{name: "empty body", data: "---\nname: a\ndescription: d\n---\n", want: &Skill{Name: "a", Description: "d"}, diags: []string{"warning: the skill has no instructions"}},
		{name: "bad allowed-tools", data: "---\nname: a\ndescription: d\nallowed-tools: {x: 1}\n---\nb", want: &Skill{Name: "a", Description: "d", Body: "b"}, diags: []string{"warning: allowed-tools must be a string or a list"}},
		{name: "not utf8", data: "---\nname: a\xff\n---\n", diags: []string{"error: the file is not valid UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := Parse("/s/dir/SKILL.md", "dir", []byte(tc.data))
			if tc.want != nil {
				tc.want.Path = "/s/dir/SKILL.md"
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("skill (-want +got):\n%s", diff)
			}
			if len(diags) != len(tc.diags) {
				t.Fatalf("diagnostics %v, want %d", diags, len(tc.diags))
			}
			for i, d := range diags {
				if !strings.Contains(d.String(), tc.diags[i]) {
					t.Errorf("diagnostic %q lacks %q", d, tc.diags[i])
				}
			}
		})
	}
}

// tree builds home and a git repository with skills at every level.
func tree(t *testing.T) (home, repo, cwd string) {
	t.Helper()
	root := t.TempDir()
	home = filepath.Join(root, "home")
	repo = filepath.Join(root, "repo")
	cwd = filepath.Join(repo, "sub")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(home, ".claude", "skills", "shared", "SKILL.md"), skillFile("shared", "from ~/.claude", "A"))
	write(t, filepath.Join(home, ".claude", "skills", "only-claude-user", "SKILL.md"), skillFile("only-claude-user", "u1", "U1"))
	write(t, filepath.Join(home, ".config", "cadre", "skills", "shared", "SKILL.md"), skillFile("shared", "from ~/.config/cadre", "B"))
	write(t, filepath.Join(repo, ".claude", "skills", "shared", "SKILL.md"), skillFile("shared", "from repo .claude", "C"))
	write(t, filepath.Join(repo, ".cadre", "skills", "shared", "SKILL.md"), skillFile("shared", "from repo .cadre", "D"))
	write(t, filepath.Join(cwd, ".claude", "skills", "shared", "SKILL.md"), skillFile("shared", "from sub .claude", "E"))
	write(t, filepath.Join(cwd, ".claude", "skills", "pdf", "SKILL.md"), skillFile("pdf", "PDF forms", "Run scripts/fill.py on the form."))
	write(t, filepath.Join(cwd, ".claude", "skills", "pdf", "scripts", "fill.py"), "print(1)\n")
	write(t, filepath.Join(cwd, ".claude", "skills", "pdf", "reference.md"), "ref\n")
	write(t, filepath.Join(cwd, ".claude", "skills", "pdf", ".hidden"), "x\n")
	write(t, filepath.Join(cwd, ".claude", "skills", "broken", "SKILL.md"), "no frontmatter\n")
	write(t, filepath.Join(cwd, ".claude", "skills", "not-a-skill", "README.md"), "x\n")
	// Outside the repository: never read.
	write(t, filepath.Join(root, ".claude", "skills", "outside", "SKILL.md"), skillFile("outside", "o", "O"))
	return home, repo, cwd
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	home, repo, cwd := tree(t)
	set, err := Load(context.Background(), LoadOptions{Cwd: cwd, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range set.Active() {
		names = append(names, s.Name+"="+string(s.Source))
	}
	want := []string{"only-claude-user=" + string(SourceUserClaude), "pdf=" + string(SourceProjectClaude), "shared=" + string(SourceProjectClaude)}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("active (-want +got):\n%s", diff)
	}
	if got := set.Get("shared"); got.Description != "from sub .claude" || got.Dir != filepath.Join(cwd, ".claude", "skills", "shared") {
		t.Fatalf("shared = %+v", got)
	}
	// Every shadowed copy names what shadows it, lowest first.
	var chain []string
	for _, s := range set.All() {
		if s.Name == "shared" {
			chain = append(chain, s.Description+" -> "+s.ShadowedBy)
		}
	}
	wantChain := []string{
		"from ~/.claude -> " + filepath.Join(home, ".config", "cadre", "skills", "shared", "SKILL.md"),
		"from ~/.config/cadre -> " + filepath.Join(repo, ".claude", "skills", "shared", "SKILL.md"),
		"from repo .claude -> " + filepath.Join(repo, ".cadre", "skills", "shared", "SKILL.md"),
		"from repo .cadre -> " + filepath.Join(cwd, ".claude", "skills", "shared", "SKILL.md"),
		"from sub .claude -> ",
	}
	if diff := cmp.Diff(wantChain, chain); diff != "" {
		t.Fatalf("shadowing (-want +got):\n%s", diff)
	}
	ds := set.Diagnostics()
	if len(ds) != 1 || !strings.Contains(ds[0].String(), filepath.Join("broken", "SKILL.md")+":1: error: no frontmatter") {
		t.Fatalf("diagnostics: %v", ds)
	}
	// The listing is deterministic and sorted.
	l1, l2 := set.Listing(), set.Listing()
	if l1 != l2 || !strings.Contains(l1, "- only-claude-user: u1\n- pdf: PDF forms\n- shared: from sub .claude\n</available_skills>") {
		t.Fatalf("listing:\n%s", l1)
	}
}

func TestPreload(t *testing.T) {
	t.Parallel()
	home, _, cwd := tree(t)
	set, err := Load(context.Background(), LoadOptions{Cwd: cwd, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	text, missing := set.Preload([]string{"pdf", "nope", "pdf", "shared"})
	if diff := cmp.Diff([]string{"nope"}, missing); diff != "" {
		t.Fatalf("missing: %s", diff)
	}
	if i, j := strings.Index(text, `<skill name="pdf"`), strings.Index(text, `<skill name="shared"`); i < 0 || j < i || strings.Count(text, `<skill name="pdf"`) != 1 || !strings.Contains(text, "Run scripts/fill.py on the form.") {
		t.Fatalf("preload text:\n%s", text)
	}
	// Only the first 32 names count.
	names := make([]string, 40)
	for i := range names {
		names[i] = "x" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	names[35] = "pdf"
	if text, missing := set.Preload(names); text != "" || len(missing) != MaxPreloaded {
		t.Fatalf("preload past 32: %q, %d missing", text, len(missing))
	}
	if text, _ := set.Preload(nil); text != "" {
		t.Fatalf("no skills preloaded yet text %q", text)
	}
}

func TestSkillTool(t *testing.T) {
	t.Parallel()
	home, _, cwd := tree(t)
	set, err := Load(context.Background(), LoadOptions{Cwd: cwd, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	sk := NewTool(set)
	if !sk.ReadOnly() || sk.Spec().Name != tool.Skill {
		t.Fatal("Skill tool must be named Skill and read-only")
	}
	run := func(in string) tool.Output {
		out, err := sk.Run(context.Background(), &tool.Env{Cwd: cwd}, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := run(`{"skill":"pdf","args":"form.pdf"}`)
	dir := filepath.Join(cwd, ".claude", "skills", "pdf")
	for _, want := range []string{`Skill "pdf" is loaded`, "Its directory is " + dir, "- reference.md\n- scripts/fill.py\n", "Arguments given with the skill: form.pdf", "<skill name=\"pdf\">\nRun scripts/fill.py on the form.\n</skill>"} {
		if out.IsError || !strings.Contains(out.Text, want) {
			t.Errorf("Skill output lacks %q:\n%s", want, out.Text)
		}
	}
	if strings.Contains(out.Text, ".hidden") || strings.Contains(out.Text, "- SKILL.md") {
		t.Errorf("hidden file or SKILL.md listed:\n%s", out.Text)
	}
	for in, want := range map[string]string{
		`{"skill":"nope"}`: `no skill "nope"; the skills are: only-claude-user, pdf, shared`,
		`{"skill":" "}`:    "skill is required",
		`{"name":"pdf"}`:   "invalid input",
	} {
		if out := run(in); !out.IsError || !strings.Contains(out.Text, want) {
			t.Errorf("%s: %+v", in, out)
		}
	}
	empty, _ := NewTool(&Set{}).Run(context.Background(), nil, json.RawMessage(`{"skill":"x"}`))
	if !strings.Contains(empty.Text, "no skills are installed") {
		t.Fatalf("empty set: %q", empty.Text)
	}
	// The spec does not depend on the skills, so request bytes stay stable.
	a, _ := json.Marshal(NewTool(set).Spec())
	b, _ := json.Marshal(NewTool(&Set{}).Spec())
	if string(a) != string(b) {
		t.Fatal("Skill spec depends on the skill set")
	}
}

// TestSkillThroughLoop drives the agent loop against the scripted model
// server: the model loads a skill, gets its body back as the tool result,
// and answers.
func TestSkillThroughLoop(t *testing.T) {
	t.Parallel()
	home, _, cwd := tree(t)
	set, err := Load(context.Background(), LoadOptions{Cwd: cwd, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "test", HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Script("fill the form", llmtest.ToolUse(tool.Skill, map[string]any{"skill": "pdf"}), llmtest.Text("Filled."))
	cfg := loop.Config{Model: m, ModelID: "claude-test", System: "You help.\n\n" + set.Listing(), Tools: tool.NewPool(NewTool(set)), Env: &tool.Env{Cwd: cwd, Files: tool.NewFileState()}}
	var res *loop.Result
	for ev, err := range loop.Run(context.Background(), cfg, []llm.Message{llm.UserText("fill the form")}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == loop.Done {
			res = ev.Result
		}
	}
	if res == nil || res.Text != "Filled." {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].System, "- pdf: PDF forms") {
		t.Fatalf("requests: %d; system %q", len(reqs), reqs[0].System)
	}
	results := reqs[1].LastToolResults()
	if len(results) != 1 || results[0].IsError || !strings.Contains(results[0].ResultText(), "Run scripts/fill.py on the form.") {
		t.Fatalf("tool result sent back: %+v", results)
	}
}
