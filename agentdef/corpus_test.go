package agentdef

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpusDir finds ../shared/corpus next to the module root. A fresh clone
// has no corpus beside it, so the tests that need it skip, saying so;
// .ci/run refuses to run without it, so in CI they always run.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the module root (go.mod) above the test directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(c, "claude-agents-oracle.jsonl")); err != nil {
		t.Skipf("needs the agent corpus at %s (../shared/corpus beside the repository, which .ci/run requires): %v", c, err)
	}
	return c
}

// oracleRecord is one line of claude-agents-oracle.jsonl.
type oracleRecord struct {
	File        string   `json:"file"`
	Loaded      bool     `json:"loaded"`
	AgentType   *string  `json:"agentType"`
	Description *string  `json:"description"`
	ToolsNote   *string  `json:"tools_note"`
	Warnings    []string `json:"warnings"`
	Reason      string   `json:"reason"`
	Frontmatter string   `json:"frontmatter"`
}

func readOracle(t testing.TB, corpus string) []oracleRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(corpus, "claude-agents-oracle.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []oracleRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var r oracleRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("oracle line %d: %v", len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var quotedKey = regexp.MustCompile(`"([^"]+)"`)

// oracleUnknownKeys extracts the keys of Claude Code's unknown-key
// warnings.
func oracleUnknownKeys(ws []string) []string {
	var keys []string
	for _, w := range ws {
		i := strings.Index(w, "does not recognize or apply: ")
		if i < 0 {
			continue
		}
		rest := w[i:]
		if j := strings.Index(rest, " (did you mean"); j >= 0 {
			rest = rest[:j]
		}
		for _, m := range quotedKey.FindAllStringSubmatch(rest, -1) {
			keys = append(keys, m[1])
		}
	}
	sort.Strings(keys)
	return keys
}

var ourUnknownKey = regexp.MustCompile(`^unknown key "([^"]+)"`)

func ourUnknownKeys(ds []Diagnostic) []string {
	var keys []string
	for _, d := range ds {
		if m := ourUnknownKey.FindStringSubmatch(d.Message); m != nil {
			keys = append(keys, m[1])
		}
	}
	sort.Strings(keys)
	return keys
}

func hasDiag(ds []Diagnostic, sev Severity, substr string) bool {
	for _, d := range ds {
		if d.Severity == sev && strings.Contains(d.Message, substr) {
			return true
		}
	}
	return false
}

// TestCorpusOracle checks every corpus file against what Claude Code does
// with it, allowing only the documented places where cadre does better.
func TestCorpusOracle(t *testing.T) {
	corpus := corpusDir(t)
	recs := readOracle(t, corpus)
	if len(recs) != 476 {
		t.Fatalf("oracle has %d records, want 476", len(recs))
	}
	loaded := 0
	for _, r := range recs {
		path := filepath.Join(corpus, "claude-agents", r.File)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		def, diags := ParseFile(r.File, data, SourceProject)
		for _, d := range diags {
			if d.File != r.File {
				t.Errorf("%s: diagnostic names file %q", r.File, d.File)
			}
			if d.Line < 1 {
				t.Errorf("%s: diagnostic without a line: %s", r.File, d)
			}
		}
		if def != nil {
			loaded++
		}
		switch {
		case r.Loaded:
			if def == nil {
				t.Errorf("%s: Claude Code loads it, we do not: %v", r.File, diags)
				continue
			}
			if def.Name != *r.AgentType {
				t.Errorf("%s: name %q, want %q", r.File, def.Name, *r.AgentType)
			}
			if def.Description != *r.Description {
				t.Errorf("%s: description differs:\n%s", r.File, cmp.Diff(*r.Description, def.Description))
			}
			note := ToolsNote(def)
			switch {
			case note == *r.ToolsNote:
			case hasDiag(diags, SeverityWarning, "used as the tools list") && *r.ToolsNote == "All tools":
				// Deviation: a misspelled tools key narrows instead of
				// being ignored.
				if def.Tools == nil {
					t.Errorf("%s: misspelled tools key not used", r.File)
				}
			case hasDiag(diags, SeverityWarning, "gives this agent no tools") && *r.ToolsNote == "All tools" && note == "None":
				// Deviation: tools: [] means none (S-4.3).
			default:
				t.Errorf("%s: tools note %q, want %q", r.File, note, *r.ToolsNote)
			}
			want := oracleUnknownKeys(r.Warnings)
			if r.Frontmatter == "parsed-after-requote" && hasDiag(diags, SeverityWarning, "is example text after a one-line description") {
				// Deviation: example lines are not turned into keys.
				want = slicesDelete(want, "user")
			}
			if got := ourUnknownKeys(diags); !cmp.Equal(want, got, cmpEmpty) {
				t.Errorf("%s: unknown keys %v, want %v", r.File, got, want)
			}
			if r.Frontmatter == "parsed-after-requote" && !hasDiag(diags, SeverityWarning, "not strict YAML") {
				t.Errorf("%s: fallback parse without a warning", r.File)
			}
			if hasDiag(diags, SeverityError, "") {
				t.Errorf("%s: loaded with errors: %v", r.File, diags)
			}
		case r.Frontmatter == "none":
			if def != nil {
				t.Errorf("%s: no frontmatter but loaded as %q", r.File, def.Name)
			}
		case r.Frontmatter == "yaml-error":
			if def != nil {
				t.Errorf("%s: unparsable frontmatter but loaded", r.File)
			}
			if len(diags) != 1 || diags[0].Severity != SeverityError || diags[0].Line < 2 || !strings.Contains(diags[0].Message, "not valid YAML") {
				t.Errorf("%s: want one error naming the line, got %v", r.File, diags)
			}
		case strings.Contains(r.Reason, "no 'name'"):
			base := strings.TrimSuffix(filepath.Base(r.File), ".md")
			if def == nil || def.Name != base {
				t.Errorf("%s: want it loaded under its file name %q, got %v %v", r.File, base, def, diags)
			}
			if !hasDiag(diags, SeverityWarning, "has no \"name\"") {
				t.Errorf("%s: no warning about the missing name: %v", r.File, diags)
			}
		default:
			t.Errorf("%s: unexpected oracle record (reason %q)", r.File, r.Reason)
		}
	}
	// 459 loaded by Claude Code, plus the 7 without a name.
	if loaded != 466 {
		t.Errorf("loaded %d files, want 466", loaded)
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
})

func slicesDelete(s []string, x string) []string {
	var out []string
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// TestCorpusLineEndings re-parses every corpus file with CRLF line
// endings, a BOM, and without its final newline; the definitions must not
// change.
func TestCorpusLineEndings(t *testing.T) {
	corpus := corpusDir(t)
	for _, r := range readOracle(t, corpus) {
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			t.Fatal(err)
		}
		want, wantDiags := ParseFile(r.File, data, SourceProject)
		variants := map[string][]byte{
			"crlf":      bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")),
			"bom":       append([]byte("\uFEFF"), data...),
			"nofinalnl": bytes.TrimRight(data, "\n"),
		}
		for name, v := range variants {
			got, gotDiags := ParseFile(r.File, v, SourceProject)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (%s): definition differs:\n%s", r.File, name, diff)
			}
			if diff := cmp.Diff(wantDiags, gotDiags); diff != "" {
				t.Errorf("%s (%s): diagnostics differ:\n%s", r.File, name, diff)
			}
		}
	}
}

// goldenRecord is the reviewed summary of one parsed corpus file.
type goldenRecord struct {
	File            string         `json:"file"`
	Loaded          bool           `json:"loaded"`
	Name            string         `json:"name,omitempty"`
	Description     string         `json:"description,omitempty"`
	Tools           []ToolEntry    `json:"tools"`
	DisallowedTools []ToolEntry    `json:"disallowedTools"`
	ToolsNote       string         `json:"toolsNote,omitempty"`
	Fields          map[string]any `json:"fields,omitempty"`
	BodyBytes       int            `json:"bodyBytes,omitempty"`
	BodySHA256      string         `json:"bodySha256,omitempty"`
	Diagnostics     []string       `json:"diagnostics,omitempty"`
}

// TestCorpusGolden records the parse of every corpus file in
// testdata/corpus.golden.jsonl (regenerate with -update and review the
// diff).
func TestCorpusGolden(t *testing.T) {
	corpus := corpusDir(t)
	var buf bytes.Buffer
	for _, r := range readOracle(t, corpus) {
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			t.Fatal(err)
		}
		def, diags := ParseFile(r.File, data, SourceProject)
		g := goldenRecord{File: r.File, Loaded: def != nil}
		for _, d := range diags {
			g.Diagnostics = append(g.Diagnostics, strings.TrimPrefix(d.String(), r.File+":"))
		}
		if def != nil {
			g.Name, g.Description = def.Name, def.Description
			g.Tools, g.DisallowedTools = def.Tools, def.DisallowedTools
			g.ToolsNote = ToolsNote(def)
			g.Fields = map[string]any{}
			put := func(k string, v any, zero bool) {
				if !zero {
					g.Fields[k] = v
				}
			}
			put("model", def.Model, def.Model == "")
			put("effort", def.Effort, def.Effort == "")
			put("permissionMode", def.PermissionMode, def.PermissionMode == "")
			put("maxTurns", def.MaxTurns, def.MaxTurns == 0)
			put("memory", def.Memory, def.Memory == "")
			put("background", def.Background, !def.Background)
			put("isolation", def.Isolation, def.Isolation == "")
			put("color", def.Color, def.Color == "")
			put("initialPrompt", def.InitialPrompt, def.InitialPrompt == "")
			put("omitInstructions", def.OmitInstructions, !def.OmitInstructions)
			put("skills", def.Skills, def.Skills == nil)
			put("mcpServers", def.MCPServers, def.MCPServers == nil)
			put("requiredMcpServers", def.RequiredMCPServers, def.RequiredMCPServers == nil)
			put("hooks", def.Hooks, def.Hooks == nil)
			if len(g.Fields) == 0 {
				g.Fields = nil
			}
			g.BodyBytes = len(def.Body)
			sum := sha256.Sum256([]byte(def.Body))
			g.BodySHA256 = hex.EncodeToString(sum[:8])
		}
		line, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	golden := filepath.Join("testdata", "corpus.golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(buf.String(), "\n")); diff != "" {
		t.Errorf("corpus parse differs from %s (run with -update and review):\n%s", golden, diff)
	}
}

// TestCorpusDuplicates loads the two corpus repositories that reuse agent
// names as one project directory each: exactly one definition per name is
// active, the others are recorded as shadowed and warned about.
func TestCorpusDuplicates(t *testing.T) {
	corpus := corpusDir(t)
	for _, repo := range []string{"affaan-m__everything-claude-code", "cwoodruff__dotnet-claude-workshop-content"} {
		t.Run(repo, func(t *testing.T) {
			proj := t.TempDir()
			if err := os.Mkdir(filepath.Join(proj, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			agents := filepath.Join(proj, ".claude", "agents")
			if err := os.MkdirAll(agents, 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(corpus, "claude-agents", repo)
			entries, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".md") {
					continue
				}
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(agents, e.Name()), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			set, err := Load(context.Background(), LoadOptions{Cwd: proj, ManagedDir: filepath.Join(proj, "none"), NoBuiltins: true})
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, d := range set.All() {
				count[d.Name]++
			}
			dups := 0
			for name, n := range count {
				if n < 2 {
					continue
				}
				dups++
				active := set.Get(name)
				if active == nil || active.ShadowedBy != "" || len(active.Shadows) != n-1 {
					t.Errorf("%s: want one active definition shadowing %d others, got %v", name, n-1, active != nil && active.ShadowedBy == "")
				}
				for _, d := range set.All() {
					if d.Name == name && d != active {
						if d.ShadowedBy != active.Path {
							t.Errorf("%s: %s shadowed by %q, want %q", name, d.Path, d.ShadowedBy, active.Path)
						}
						if !hasFileDiag(set.Diagnostics(), d.Path, "is also defined in") {
							t.Errorf("%s: no warning for shadowed %s", name, d.Path)
						}
					}
				}
			}
			if dups == 0 {
				t.Error("expected duplicate names in this repository")
			}
			if len(set.Active()) != len(count) {
				t.Errorf("%d active for %d names", len(set.Active()), len(count))
			}
		})
	}
}

func hasFileDiag(ds []Diagnostic, file, substr string) bool {
	for _, d := range ds {
		if d.File == file && strings.Contains(d.Message, substr) {
			return true
		}
	}
	return false
}

// TestFastPathAgrees parses every corpus frontmatter both ways: where the
// fast path accepts a block, go-yaml must give the same fields. It also
// reports how many blocks take the fast path.
func TestFastPathAgrees(t *testing.T) {
	corpus := corpusDir(t)
	fastN, invalidN, requoteN := 0, 0, 0
	for _, r := range readOracle(t, corpus) {
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			t.Fatal(err)
		}
		sp, ok := splitFrontmatter(normalize(data))
		if !ok {
			continue
		}
		fast, status, _ := fastBlock(sp.block, sp.blockLine)
		slow, _, err := slowBlock(sp.block, sp.blockLine)
		switch status {
		case fastBail:
			continue
		case fastInvalid:
			invalidN++
			if err == nil {
				t.Errorf("%s: fast path says invalid, go-yaml accepts it", r.File)
			}
			continue
		}
		fastN++
		if err != nil {
			t.Errorf("%s: fast path accepted a block go-yaml rejects: %v", r.File, err)
			continue
		}
		if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(field{})); diff != "" {
			t.Errorf("%s: fast path differs (-slow +fast):\n%s", r.File, diff)
		}
		// The fallback's re-quoted block too.
		if r.Frontmatter == "parsed-after-requote" {
			continue
		}
	}
	for _, r := range readOracle(t, corpus) {
		if r.Frontmatter != "parsed-after-requote" && r.Frontmatter != "yaml-error" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			t.Fatal(err)
		}
		sp, _ := splitFrontmatter(normalize(data))
		requoted, _ := requote(sp.block)
		fast, status, _ := fastBlock(requoted, sp.blockLine)
		if status != fastOK {
			continue
		}
		requoteN++
		slow, _, err := slowBlock(requoted, sp.blockLine)
		if err != nil {
			t.Errorf("%s: fast path accepted a re-quoted block go-yaml rejects: %v", r.File, err)
			continue
		}
		if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(field{})); diff != "" {
			t.Errorf("%s: fast path differs on the re-quoted block (-slow +fast):\n%s", r.File, diff)
		}
	}
	t.Logf("%d re-quoted blocks and %d invalid blocks take the fast path", requoteN, invalidN)
	t.Logf("%d corpus blocks take the fast path", fastN)
	if fastN < 350 {
		t.Errorf("only %d blocks take the fast path", fastN)
	}
}
