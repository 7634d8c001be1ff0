// Package docs_test holds the docs to the code (issue 22): the README and
// every page under docs/ are read, every fenced block is sorted by its
// language, and each is exercised the way the page says it works —
// settings JSON through package config, agent definitions through
// agentdef, skills through skills, command lines against cadre's own
// --help and `cadre permissions check`, Go blocks by the compiler, captures
// of the terminal UI against its golden views. A block of a language no
// test knows fails, so no example goes unchecked.
package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"mvdan.cc/sh/v3/shell"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/cli"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// mainEnv makes the test binary run as cadre itself (cli.Main), as
// internal/cli's tests do, so the docs' command lines run against the real
// command without a separate build.
const mainEnv = "CADRE_DOCS_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// block is one fenced code block of a page.
type block struct {
	file string // relative to the repository root
	line int    // of the opening fence, 1-based
	lang string
	text string
}

func (b block) String() string { return b.file + ":" + itoa(b.line) + " (```" + b.lang + ")" }

func itoa(n int) string { return strconv.Itoa(n) }

// pages are the README and every page of docs/, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	list, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range list {
		out = append(out, "docs/"+f)
	}
	return out
}

// read returns a file relative to the repository root.
func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// examplePages are the pages whose blocks are examples; the benchmark
// history records figures, not examples.
func examplePages(t *testing.T) []string {
	return slices.DeleteFunc(pages(t), func(p string) bool { return p == "docs/benchmarks-history.md" })
}

// blocks returns the fenced blocks of a page.
func blocks(t *testing.T, rel string) []block {
	t.Helper()
	var out []block
	var cur *block
	var body []string
	for i, l := range strings.Split(read(t, rel), "\n") {
		if !strings.HasPrefix(l, "```") {
			if cur != nil {
				body = append(body, l)
			}
			continue
		}
		if cur == nil {
			cur = &block{file: rel, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(l, "```"))}
			body = nil
			continue
		}
		cur.text = strings.Join(body, "\n")
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		t.Fatalf("%s: a fence opened and never closed", cur)
	}
	return out
}

// allBlocks returns the blocks of every example page in one language.
func allBlocks(t *testing.T, lang string) []block {
	t.Helper()
	var out []block
	for _, p := range examplePages(t) {
		for _, b := range blocks(t, p) {
			if b.lang == lang {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no ```%s block in the docs: the test reads the wrong files", lang)
	}
	return out
}

// TestEveryBlockHasAChecker: a block in a language no test below reads
// would be an example nobody checks.
func TestEveryBlockHasAChecker(t *testing.T) {
	t.Parallel()
	known := []string{"sh", "json", "json stream", "markdown", "go", "text"}
	for _, p := range examplePages(t) {
		for _, b := range blocks(t, p) {
			if b.lang == "" && p == "docs/architecture.md" {
				continue // the package picture: TestArchitectureNamesRealPackages
			}
			if !slices.Contains(known, b.lang) {
				t.Errorf("%s: no test checks a block of language %q (use one of %v)", b, b.lang, known)
			}
		}
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestEveryPageIsLinkedAndEveryLinkResolves: the README is the way in, so
// every page of docs/ is linked from it, and no relative link of any page
// (anchors included) points nowhere.
func TestEveryPageIsLinkedAndEveryLinkResolves(t *testing.T) {
	t.Parallel()
	readme := read(t, "README.md")
	for _, p := range pages(t)[1:] {
		if !strings.Contains(readme, "]("+p+")") {
			t.Errorf("README.md does not link %s", p)
		}
	}
	n := 0
	for _, p := range pages(t) {
		for _, m := range linkRE.FindAllStringSubmatch(read(t, p), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			rel := p
			if file != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(p), file))
				if _, err := os.Stat(filepath.Join("..", rel)); err != nil {
					t.Errorf("%s: link %s: %v", p, target, err)
					continue
				}
			}
			if anchor != "" && !slices.Contains(anchors(t, rel), anchor) {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s (it has %v)", p, target, rel, anchor, anchors(t, rel))
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d relative links found: the link pattern is wrong", n)
	}
}

// anchors returns the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, rel string) []string {
	t.Helper()
	var out []string
	inFence := false
	for _, l := range strings.Split(read(t, rel), "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var s strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				s.WriteRune(r)
			case r == ' ':
				s.WriteRune('-')
			}
		}
		out = append(out, s.String())
	}
	return out
}

// TestReadmeKeepsTheTwoCommands: the README's build command and test
// command are the ones a fresh machine runs, and the test command is the
// one .ci/run runs.
func TestReadmeKeepsTheTwoCommands(t *testing.T) {
	t.Parallel()
	var sh []string
	for _, b := range blocks(t, "README.md") {
		if b.lang == "sh" {
			sh = append(sh, b.text)
		}
	}
	const build = "CGO_ENABLED=0 go build -o bin/cadre ./cmd/cadre && ./bin/cadre --help"
	const test = "go test -race -shuffle=on ./..."
	if len(sh) < 2 || sh[0] != build || sh[1] != test {
		t.Fatalf("the README's first two sh blocks are not the build and the test command:\n%q", sh)
	}
	if !slices.Contains(strings.Split(read(t, ".ci/run"), "\n"), test) {
		t.Errorf(".ci/run does not run the README's test command %q", test)
	}
}

// runCadre runs the test binary as cadre in dir with an empty HOME.
func runCadre(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	// atexit_sleep_ms=0: a -race build otherwise sleeps a second at exit,
	// in cadre and in its reaper, for every command line checked.
	cmd.Env = []string{mainEnv + "=1", "HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"GORACE=atexit_sleep_ms=0"}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("cadre %v: %v", args, err)
		}
		return o.String(), e.String(), ee.ExitCode()
	}
	return o.String(), e.String(), 0
}

// command is what `cadre PATH --help` says about one command.
type command struct {
	subcommands []string
	flags       []string // "--name" and "-x"
}

var (
	subcommandRE = regexp.MustCompile(`^  ([a-z][a-z-]*)\s+\S`)
	flagRE       = regexp.MustCompile(`^\s+(?:(-[a-zA-Z]), )?(--[a-zA-Z][a-zA-Z0-9-]*)`)
)

// helpOf runs `cadre PATH --help` and reads its commands and flags.
func helpOf(t *testing.T, cache map[string]command, path []string) command {
	t.Helper()
	key := strings.Join(path, " ")
	if c, ok := cache[key]; ok {
		return c
	}
	out, errOut, code := runCadre(t, t.TempDir(), append(slices.Clone(path), "--help")...)
	if code != 0 {
		t.Fatalf("cadre %s --help: exit %d\n%s", key, code, errOut)
	}
	var c command
	section := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
			section = l
			continue
		}
		switch section {
		case "Available Commands:":
			if m := subcommandRE.FindStringSubmatch(l); m != nil {
				c.subcommands = append(c.subcommands, m[1])
			}
		case "Flags:", "Global Flags:":
			if m := flagRE.FindStringSubmatch(l); m != nil {
				if m[1] != "" {
					c.flags = append(c.flags, m[1])
				}
				c.flags = append(c.flags, m[2])
			}
		}
	}
	if len(c.flags) == 0 {
		t.Fatalf("cadre %s --help lists no flags:\n%s", key, out)
	}
	cache[key] = c
	return c
}

// cadreLine is one cadre invocation of a docs sh block.
type cadreLine struct {
	where string
	args  []string
}

// cadreLines returns every command line of the docs' sh blocks that runs
// cadre, its arguments split as the shell splits them.
func cadreLines(t *testing.T) []cadreLine {
	t.Helper()
	var out []cadreLine
	for _, b := range allBlocks(t, "sh") {
		for i, l := range strings.Split(b.text, "\n") {
			for _, part := range strings.Split(l, "|") {
				part = strings.TrimSpace(part)
				if c, _, ok := strings.Cut(part, " #"); ok {
					part = c
				}
				for _, seg := range strings.Split(part, "&&") {
					words, err := shell.Fields(strings.TrimSpace(seg), func(string) string { return "" })
					if err != nil || len(words) == 0 {
						continue
					}
					if words[0] != "cadre" && words[0] != "./bin/cadre" {
						continue
					}
					out = append(out, cadreLine{where: b.file + ":" + itoa(b.line+1+i), args: words[1:]})
				}
			}
		}
	}
	return out
}

// prose returns a page without its fenced blocks.
func prose(t *testing.T, rel string) string {
	t.Helper()
	var out []string
	inFence := false
	for _, l := range strings.Split(read(t, rel), "\n") {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// proseCadreLines returns the command lines the text quotes in
// backquotes (`cadre worktrees merge AGENT-ID [--cherry-pick]`), optional
// parts' brackets dropped.
func proseCadreLines(t *testing.T) []cadreLine {
	t.Helper()
	var out []cadreLine
	for _, p := range examplePages(t) {
		for _, span := range proseFlagRE.FindAllString(prose(t, p), -1) {
			span = strings.NewReplacer("`", "", "[", " ", "]", " ", "\n", " ").Replace(span)
			if !strings.HasPrefix(span, "cadre ") || strings.Contains(span, "<") {
				continue
			}
			words, err := shell.Fields(span, func(string) string { return "" })
			if err != nil {
				t.Errorf("%s: `%s`: %v", p, span, err)
				continue
			}
			out = append(out, cadreLine{where: p + ": `" + span + "`", args: words[1:]})
		}
	}
	return out
}

// TestCommandLinesNameRealFlags: every cadre command line in the docs
// names subcommands and flags `cadre … --help` lists.
func TestCommandLinesNameRealFlags(t *testing.T) {
	t.Parallel()
	cache := map[string]command{}
	lines := append(cadreLines(t), proseCadreLines(t)...)
	if len(lines) < 40 {
		t.Fatalf("only %d cadre command lines found", len(lines))
	}
	for _, l := range lines {
		var path []string
		c := helpOf(t, cache, nil)
		positional := false
		for _, a := range l.args {
			if !positional && !strings.HasPrefix(a, "-") && slices.Contains(c.subcommands, a) {
				path = append(path, a)
				c = helpOf(t, cache, path)
				continue
			}
			if !strings.HasPrefix(a, "-") || a == "-" {
				positional = true
				continue
			}
			name, _, _ := strings.Cut(a, "=")
			if !slices.Contains(c.flags, name) {
				t.Errorf("%s: cadre %s has no flag %s (it has %v)", l.where, strings.Join(path, " "), name, c.flags)
			}
		}
	}
}

var proseFlagRE = regexp.MustCompile("`[^`]*`")
var flagNameRE = regexp.MustCompile(`(?:^|[\s/(\[])(--[a-zA-Z][a-zA-Z0-9-]*)`)

// TestProseFlagsExist: a flag the text names in backquotes is one some
// cadre command lists, or one cadre accepts without listing it (the
// Claude Agent SDK's flags cadre takes and ignores).
func TestProseFlagsExist(t *testing.T) {
	t.Parallel()
	cache := map[string]command{}
	known := map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		c := helpOf(t, cache, path)
		for _, f := range c.flags {
			known[f] = true
		}
		for _, s := range c.subcommands {
			if s != "help" && s != "completion" {
				walk(append(slices.Clone(path), s))
			}
		}
	}
	walk(nil)
	checked := 0
	var hidden []string
	for _, p := range examplePages(t) {
		for _, span := range proseFlagRE.FindAllString(prose(t, p), -1) {
			span = strings.Trim(span, "`")
			if !strings.HasPrefix(span, "--") && !strings.HasPrefix(span, "cadre ") && !strings.HasPrefix(span, "-p") {
				continue // another program's flags (git, npm)
			}
			for _, m := range flagNameRE.FindAllStringSubmatch(span, -1) {
				f := m[1]
				checked++
				if known[f] {
					continue
				}
				// Not listed: cadre must still accept it (a hidden SDK
				// flag); all of them are tried in one run below.
				hidden = append(hidden, p+": "+f)
				known[f] = true
			}
		}
	}
	if len(hidden) > 0 {
		args := []string{}
		for _, h := range hidden {
			_, f, _ := strings.Cut(h, ": ")
			args = append(args, f+"=1")
		}
		if _, errOut, code := runCadre(t, t.TempDir(), append(args, "--version")...); code != 0 {
			t.Errorf("cadre refuses a flag the docs name and no `cadre … --help` lists (%v): %s", hidden, strings.TrimSpace(errOut))
		}
	}
	if checked < 50 {
		t.Errorf("only %d flags found in the text: the pattern is wrong", checked)
	}
}

var decisionRE = regexp.MustCompile(`^# → (allow|ask|deny)(?: by (.+))?$`)

// permissionFixture is a project with the files the permission examples
// talk about.
func permissionFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{".env": "KEY=1\n", "secrets/key.txt": "s\n", "a.go": "package a\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type decision struct{ Decision, Rule, Reason string }

func check(t *testing.T, dir string, args ...string) decision {
	t.Helper()
	out, errOut, code := runCadre(t, dir, append([]string{"permissions", "check", "--cwd", dir}, args...)...)
	if code != 0 {
		t.Fatalf("cadre permissions check %q: exit %d: %s", args, code, errOut)
	}
	var d decision
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("cadre permissions check %q: %v\n%s", args, err, out)
	}
	return d
}

// TestPermissionExamplesDecideAsWritten: each `cadre permissions check`
// example is followed by the decision it gives (and the rule that gives
// it); the real checker must agree.
func TestPermissionExamplesDecideAsWritten(t *testing.T) {
	t.Parallel()
	dir := permissionFixture(t)
	n := 0
	for _, b := range allBlocks(t, "sh") {
		lines := strings.Split(b.text, "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "cadre permissions check ") {
				continue
			}
			if i+1 >= len(lines) || !decisionRE.MatchString(lines[i+1]) {
				t.Errorf("%s line %d: a permissions check example without a `# → decision` line under it", b, i+1)
				continue
			}
			want := decisionRE.FindStringSubmatch(lines[i+1])
			words, err := shell.Fields(strings.TrimPrefix(l, "cadre permissions check "), func(string) string { return "" })
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			got := check(t, dir, words...)
			n++
			if got.Decision != want[1] || got.Rule != want[2] {
				t.Errorf("%s: %s\n gives %s by %q (%s), the page says %s by %q", b, l, got.Decision, got.Rule, got.Reason, want[1], want[2])
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d permission examples found", n)
	}
}

// settingsBlock loads one JSON block as --settings in a fresh project
// with the home directory given, and returns the environment it used.
func settingsBlock(t *testing.T, b block, home, project string, env map[string]string) (cadre.Config, func(string) string) {
	t.Helper()
	dir := t.TempDir()
	if project != "" {
		dir = filepath.Join(home, project)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "XDG_STATE_HOME":
			return filepath.Join(home, "state")
		case "ANTHROPIC_API_KEY":
			if v, ok := env[k]; ok {
				return v
			}
			return "test"
		}
		return env[k]
	}
	cfg, diags, err := config.Load(context.Background(), dir, config.Options{Getenv: getenv, Home: home, SettingsJSON: b.text,
		ManagedDir: filepath.Join(home, "managed"), ClaudeManagedDir: filepath.Join(home, "claude-managed")})
	if err != nil {
		t.Fatalf("%s: config.Load: %v", b, err)
	}
	for _, d := range diags {
		t.Errorf("%s: %s", b, d)
	}
	return cfg, getenv
}

// TestSettingsBlocksLoad: every JSON block is a settings file (or an
// mcpServers object) that package config loads with no diagnostic, every
// key of it in force (`cadre config` shows it, with no note saying it does
// nothing), and with the effect its page states.
func TestSettingsBlocksLoad(t *testing.T) {
	t.Parallel()
	type effect struct {
		contains string
		env      map[string]string
		setup    func(t *testing.T, home string)
		project  string // the project's directory below home; "" for one elsewhere
		check    func(t *testing.T, cfg cadre.Config, home string) string
	}
	effects := []effect{
		{contains: `"background": "default"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.Background != cadre.BackgroundDefault || cfg.Limits.MaxRunning != 8 {
				return "background " + string(cfg.Background) + ", running cap " + itoa(cfg.Limits.MaxRunning)
			}
			return ""
		}},
		{contains: `"autoCompactWindow": {"claude-haiku"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if c := cfg.Compaction; c.Window != 150000 || c.Windows["claude-haiku"] != 60000 || c.Windows["claude-sonnet-4-5"] != 120000 {
				return "compaction window " + itoa(int(c.Window)) + ", per model " + jsonString(c.Windows)
			}
			return ""
		}},
		{contains: `"coordinatorMode": true`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if !cfg.Coordinator {
				return "not a coordinator"
			}
			return ""
		}},
		{contains: `"teams": {"enabled": true`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if !cfg.Teams || cfg.TeamShutdownGrace.Milliseconds() != 30000 {
				return "teams not on, or not the grace given"
			}
			return ""
		}},
		{contains: `"forkSubagent": true`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if !cfg.ForkSubagent {
				return "fork path off"
			}
			return ""
		}},
		{contains: `"worktree": {"base": "default"}`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.WorktreeBase != "default" {
				return "worktree base " + cfg.WorktreeBase
			}
			return ""
		}},
		{contains: `"permissions"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			return "" // decided below, through cadre permissions check
		}},
		{contains: `"trustedWorkspaces": ["~/src/shop"]`, project: "src/shop", check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.Provenance == nil || !cfg.Provenance.Trusted {
				return "~/src/shop is not trusted: " + jsonString(cfg.Provenance)
			}
			return ""
		}},
		{contains: `"failIfUnavailable": true`, check: func(t *testing.T, cfg cadre.Config, home string) string {
			s := cfg.Sandbox
			if s == nil || !s.NoNetwork || !s.FailIfUnavailable || s.BackgroundOnly {
				return "sandbox " + jsonString(s)
			}
			return ""
		}},
		{contains: `"backgroundOnly": true`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.Sandbox == nil || !cfg.Sandbox.BackgroundOnly || cfg.Sandbox.NoNetwork {
				return "sandbox " + jsonString(cfg.Sandbox)
			}
			return ""
		}},
		{contains: `"model": "opus"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if !strings.HasPrefix(cfg.ModelID, "claude-opus") || cfg.Limits.MaxDepth != 2 || cfg.Limits.MaxRunning != 4 || !strings.Contains(cfg.SubagentModel, "haiku") {
				return "model " + cfg.ModelID + ", sub-agents " + cfg.SubagentModel + ", depth " + itoa(cfg.Limits.MaxDepth) + ", running " + itoa(cfg.Limits.MaxRunning)
			}
			return ""
		}},
		{contains: `"modelAliases"`, env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "CADRE_MODEL": "sonnet"}, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.ModelID != "qwen3-coder:30b" {
				return "model " + cfg.ModelID
			}
			return ""
		}},
		{contains: `"modelPrices"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			p, ok := cfg.Prices.Lookup("my-model")
			if !ok || p.Input != 1 || p.Output != 5 || p.CacheWrite != 1.25 || p.CacheRead != 0.1 {
				return "my-model's price " + jsonString(p)
			}
			return ""
		}},
		{contains: `"backend": "searxng"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if s, ok := cfg.WebSearch.(*builtin.SearXNG); !ok || s.BaseURL != "http://localhost:8888" {
				return "web search " + jsonString(cfg.WebSearch)
			}
			return ""
		}},
		{contains: `"smallModel"`, env: map[string]string{"BRAVE_SEARCH_API_KEY": "k"}, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if _, ok := cfg.WebSearch.(*builtin.Brave); !ok || cfg.SmallModel != "claude-haiku-4-5" {
				return "web search " + jsonString(cfg.WebSearch) + ", small model " + cfg.SmallModel
			}
			return ""
		}},
		{contains: `"enabledPlugins"`, setup: installPlugin, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			for _, d := range cfg.Agents {
				if d.Name == "agent-teams:team-reviewer" {
					return ""
				}
			}
			return "the installed plugin's agent agent-teams:team-reviewer is not loaded"
		}},
		// A worker's own settings (remote.md): one hook, one server; as a
		// launcher's settings they load the same way.
		{contains: `worker-bash-policy`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			var got []string
			for _, s := range cfg.MCPServers {
				got = append(got, s.Name+":"+string(s.Transport))
			}
			if cfg.Hooks == nil || cfg.Hooks.Len() != 1 || strings.Join(got, " ") != "memory:stdio" {
				return "hooks " + jsonString(cfg.Hooks.Entries()) + ", servers " + strings.Join(got, " ")
			}
			return ""
		}},
		{contains: `"mcpServers"`, env: map[string]string{"GITHUB_TOKEN": "t"}, check: func(t *testing.T, cfg cadre.Config, home string) string {
			var got []string
			for _, s := range cfg.MCPServers {
				got = append(got, s.Name+":"+string(s.Transport))
			}
			slices.Sort(got)
			if strings.Join(got, " ") != "files:stdio github:http legacy:sse" {
				return "servers " + strings.Join(got, " ")
			}
			return ""
		}},
		// The remote pages' connection settings: the keys in force are
		// checked below (cadre config); they make no spawn remote alone.
		{contains: `"address": "127.0.0.1:7233"`, check: remoteOnlyConnects},
		{contains: `"apiKeyEnv": "TEMPORAL_API_KEY"`, env: map[string]string{"TEMPORAL_API_KEY": "k"}, check: remoteOnlyConnects},
		{contains: `"hooks"`, check: func(t *testing.T, cfg cadre.Config, _ string) string {
			if cfg.Hooks == nil || cfg.Hooks.Len() != 2 {
				return "hooks " + jsonString(cfg.Hooks.Entries())
			}
			return ""
		}},
	}
	used := make([]bool, len(effects))
	for _, b := range allBlocks(t, "json") {
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(b.text), &top); err != nil {
			t.Errorf("%s: not a JSON object: %v", b, err)
			continue
		}
		var match []int
		for i, e := range effects {
			if strings.Contains(b.text, e.contains) {
				match = append(match, i)
			}
		}
		if len(match) == 0 {
			t.Errorf("%s: no effect check matches this block; add one to TestSettingsBlocksLoad", b)
			continue
		}
		e := effects[match[0]]
		used[match[0]] = true
		home := t.TempDir()
		if e.setup != nil {
			e.setup(t, home)
		}
		cfg, getenv := settingsBlock(t, b, home, e.project, e.env)
		if msg := e.check(t, cfg, home); msg != "" {
			t.Errorf("%s: not the effect the page states: %s", b, msg)
		}
		entries, diags, err := config.Effective(context.Background(), t.TempDir(), config.Options{Home: home, SettingsJSON: b.text, Getenv: getenv,
			ManagedDir: filepath.Join(home, "managed"), ClaudeManagedDir: filepath.Join(home, "claude-managed")})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for _, d := range diags {
			t.Errorf("%s: cadre config: %s", b, d)
		}
		for key := range top {
			found := false
			for _, en := range entries {
				if en.Key == key || strings.HasPrefix(en.Key, key+".") {
					found = true
					if en.Note != "" {
						t.Errorf("%s: %s has no effect in cadre: %s", b, en.Key, en.Note)
					}
				}
			}
			if !found {
				t.Errorf("%s: key %s is not in force (cadre config does not show it)", b, key)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("the effect check for blocks holding %s matches no block", effects[i].contains)
		}
	}
}

// remoteOnlyConnects: remote.temporal names a server; spawns become
// remote only through isolation: remote or --remote.
func remoteOnlyConnects(t *testing.T, cfg cadre.Config, _ string) string {
	if cfg.Remote.All || cfg.Remote.Executor != nil {
		return "remote settings alone made every spawn remote"
	}
	return ""
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// installPlugin installs the plugin the skills page enables the way Claude
// Code records it: ~/.claude/plugins/installed_plugins.json (version 2)
// naming its directory.
func installPlugin(t *testing.T, home string) {
	t.Helper()
	root := filepath.Join(home, "plugins", "agent-teams")
	files := map[string]string{
		filepath.Join(root, ".claude-plugin", "plugin.json"):                `{"name": "agent-teams", "version": "1.0.0", "description": "review in teams"}`,
		filepath.Join(root, "agents", "team-reviewer.md"):                   "---\nname: team-reviewer\ndescription: Reviews as part of a team.\n---\nYou review.\n",
		filepath.Join(home, ".claude", "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {"agent-teams@claude-code-plugins": [{"scope": "user", "installPath": "` + root + `", "version": "1.0.0"}]}}`,
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPermissionsBlockDecides: the permissions page's settings block,
// given as --settings, allows, asks and denies what it says.
func TestPermissionsBlockDecides(t *testing.T) {
	t.Parallel()
	var text string
	for _, b := range blocks(t, "docs/permissions.md") {
		if b.lang == "json" && strings.Contains(b.text, `"permissions"`) {
			text = b.text
		}
	}
	if text == "" {
		t.Fatal("docs/permissions.md has no permissions settings block")
	}
	dir := permissionFixture(t)
	// Beside the project, so its ./ rules name the project's files.
	file := filepath.Join(dir, "team-settings.json")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, input, decision, rule string }{
		{"Bash", `{"command":"go test ./..."}`, "allow", "Bash(go test:*)"},
		{"Bash", `{"command":"git push origin main"}`, "ask", "*"}, // the ask rule, or git's reach past the Read deny rules
		{"Bash", `{"command":"rm -rf build"}`, "deny", "Bash(rm:*)"},
		{"Read", `{"file_path":".env"}`, "deny", "Read(./.env)"},
		{"Read", `{"file_path":"secrets/key.txt"}`, "deny", "Read(./secrets/**)"},
		{"Edit", `{"file_path":"a.go","old_string":"package a","new_string":"package b"}`, "allow", ""}, // defaultMode acceptEdits
	} {
		got := check(t, dir, "--settings", file, "--tool", c.tool, "--input", c.input)
		if got.Decision != c.decision || (c.rule != "*" && got.Rule != c.rule) {
			t.Errorf("%s %s: %s by %q (%s), want %s by %q", c.tool, c.input, got.Decision, got.Rule, got.Reason, c.decision, c.rule)
		}
	}
}

// TestAgentAndSkillBlocksParse: every Markdown block is an agent
// definition (agentdef) or, on the skills page, a skill, and parses with
// no diagnostic.
func TestAgentAndSkillBlocksParse(t *testing.T) {
	t.Parallel()
	nameRE := regexp.MustCompile(`(?m)^name: (\S+)$`)
	for _, b := range allBlocks(t, "markdown") {
		m := nameRE.FindStringSubmatch(b.text)
		if m == nil {
			t.Errorf("%s: no name in the frontmatter", b)
			continue
		}
		if b.file == "docs/skills.md" {
			s, diags := skills.Parse("/p/.claude/skills/"+m[1]+"/SKILL.md", m[1], []byte(b.text+"\n"))
			for _, d := range diags {
				t.Errorf("%s: %s", b, d.Message)
			}
			if s == nil || s.Name != m[1] {
				t.Errorf("%s: did not load as skill %s", b, m[1])
			}
			continue
		}
		def, diags := agentdef.ParseFile("/p/.claude/agents/"+m[1]+".md", []byte(b.text+"\n"), agentdef.SourceProject)
		for _, d := range diags {
			t.Errorf("%s: %s: %s", b, d.Severity, d.Message)
		}
		if def == nil || def.Name != m[1] || def.Body == "" {
			t.Errorf("%s: did not load as agent %s with a prompt", b, m[1])
			continue
		}
		// Each scalar key of the frontmatter is what the definition holds.
		var fields map[string]any
		if err := json.Unmarshal([]byte(jsonString(def)), &fields); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.SplitN(b.text, "\n---", 2)[0], "\n") {
			k, v, ok := strings.Cut(l, ": ")
			got, known := fields[k]
			if !ok || !known || k == "description" {
				continue
			}
			switch g := got.(type) {
			case string, float64, bool:
				if gs := strings.Trim(jsonString(g), `"`); gs != v {
					t.Errorf("%s: %s is %s in the loaded definition, %s on the page", b, k, gs, v)
				}
			}
		}
		if len(def.Hooks) > 0 { // frontmatter hooks load as the agent's own
			hc, hdiags, err := hooks.ParseAgent(def.Hooks, b.file)
			if err != nil || len(hdiags) > 0 || hc.Len() == 0 {
				t.Errorf("%s: its hooks do not load: %v %v", b, err, hdiags)
			}
		}
	}
}

// TestGoBlocksCompile: every Go block is, word for word, code of
// library_test.go, which the compiler checks with this package.
func TestGoBlocksCompile(t *testing.T) {
	t.Parallel()
	src := read(t, "docs/library_test.go")
	for _, b := range allBlocks(t, "go") {
		if !strings.Contains(src, b.text) {
			t.Errorf("%s: not in docs/library_test.go word for word, so nothing compiles it", b)
		}
	}
}

// TestTextBlocksAreGoldenViews: every text block is a capture of the
// terminal UI, and each is one of its golden views as the UI draws it now.
func TestTextBlocksAreGoldenViews(t *testing.T) {
	t.Parallel()
	goldens, err := filepath.Glob("../internal/tui/testdata/*.golden")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden views: %v", err)
	}
	var views []string
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, trimView(string(b)))
	}
	for _, b := range allBlocks(t, "text") {
		if !slices.Contains(views, trimView(b.text)) {
			t.Errorf("%s: not one of the golden views in internal/tui/testdata", b)
		}
	}
}

// trimView drops trailing spaces and the blank lines around a view.
func trimView(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// TestFirstSubagentRuns runs the README's first sub-agent: its definition
// in .claude/agents, loaded with package config as `cadre -p` loads it,
// and the main agent's Agent call gets a reviewer with exactly the four
// tools and the model the definition names.
func TestFirstSubagentRuns(t *testing.T) {
	t.Parallel()
	var def string
	for _, b := range blocks(t, "README.md") {
		if b.lang == "markdown" {
			def = b.text + "\n"
		}
	}
	if def == "" {
		t.Fatal("the README has no agent definition")
	}
	dir, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "reviewer.md"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{
		"description": "review the changes", "prompt": "REVIEW: review the uncommitted changes", "subagent_type": "reviewer",
	}), llmtest.Text("The reviewer found nothing."))
	srv.Script("REVIEW", llmtest.Text("No bugs; one test is missing."))
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.URL(), "HOME": home, "XDG_STATE_HOME": filepath.Join(home, "state")}
	cfg, diags, err := config.Load(context.Background(), dir, config.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		t.Errorf("config.Load: %s", d)
	}
	rt, err := cadre.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var receipt *run.Receipt
	var report, answer string
	for ev, err := range rt.Run(context.Background(), "MAIN: use the reviewer agent on my uncommitted changes") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case run.EventTaskStarted:
			r := ev.Task.Receipt
			receipt = &r
		case run.EventTaskCompleted:
			report = ev.Subagent.Text
		case run.EventResult:
			answer = ev.Result.Text
		}
	}
	if receipt == nil {
		t.Fatal("no sub-agent started")
	}
	tools := slices.Clone(receipt.Tools)
	slices.Sort(tools)
	if receipt.AgentType != "reviewer" || strings.Join(tools, ",") != "Bash,Glob,Grep,Read" || !strings.Contains(receipt.Model, "haiku") {
		t.Errorf("the reviewer started as %s with tools %v and model %s; the README says reviewer, its four tools, haiku",
			receipt.AgentType, receipt.Tools, receipt.Model)
	}
	if report != "No bugs; one test is missing." || answer != "The reviewer found nothing." {
		t.Errorf("report %q, answer %q", report, answer)
	}
}

// TestLibraryExamplesRun runs the Go library page's functions: the
// config.Load path against the scripted model, the by-hand constructor,
// and the llmtest set-up with its sub-agent.
func TestLibraryExamplesRun(t *testing.T) {
	home := t.TempDir()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("", llmtest.Text("The parser test is added."))
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Setenv("CADRE_PROVIDER", "")
	t.Setenv("CADRE_MODEL", "")
	if err := runInProject(context.Background(), t.TempDir(), "add a test for the parser"); err != nil {
		t.Errorf("runInProject: %v", err)
	}

	rt, err := newRuntime(t.TempDir())
	if err != nil {
		t.Fatalf("newRuntime: %v", err)
	}
	rt.Close()

	rt, scripted, err := scriptedRuntime(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer scripted.Close()
	defer rt.Close()
	var tasks int
	var answer string
	for ev, err := range rt.Run(context.Background(), "MAIN: where is the configuration loaded?") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventTaskCompleted && ev.Subagent.Text == "Load in config.go reads it." {
			tasks++
		}
		if ev.Type == run.EventResult {
			answer = ev.Result.Text
		}
	}
	if tasks != 1 || answer != "It is loaded in config.go." {
		t.Errorf("sub-agent reports %d, answer %q", tasks, answer)
	}
}

var packageRE = regexp.MustCompile(`\b(?:cmd|internal|llm|tool)(?:/[a-z0-9]+)+\b`)

// TestArchitectureNamesRealPackages: the architecture page describes the
// packages as they are — every package path its picture and table name
// exists, and every package of the module is in its table.
func TestArchitectureNamesRealPackages(t *testing.T) {
	t.Parallel()
	page := read(t, "docs/architecture.md")
	named := map[string]bool{}
	for _, m := range packageRE.FindAllString(page, -1) {
		named[m] = true
	}
	// The table's first column names its packages.
	var table strings.Builder
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "| `") || strings.HasPrefix(l, "| root") {
			first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
			table.WriteString(first + "\n")
		}
	}
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9/]*)`").FindAllStringSubmatch(table.String(), -1) {
		named[m[1]] = true
	}
	for n := range named {
		if !isPackage(t, n) && !slices.Contains([]string{"cadre", "tasks.jsonl"}, n) {
			if _, err := os.Stat(filepath.Join("..", n)); err != nil || strings.Contains(n, "/") {
				t.Errorf("docs/architecture.md names %s, which is not a package of the module", n)
			}
		}
	}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() || path == ".." {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if isPackage(t, rel) && !strings.Contains(table.String(), "`"+rel+"`") {
			t.Errorf("package %s is not in docs/architecture.md's table", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isPackage reports whether the directory rel (from the root) holds Go
// files that are built (a //go:build ignore script is not a package).
func isPackage(t *testing.T, rel string) bool {
	t.Helper()
	list, _ := filepath.Glob(filepath.Join("..", rel, "*.go"))
	for _, f := range list {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build ignore") {
			return true
		}
	}
	return false
}

// TestPicturesAreTheGoldenViews: docs/images holds exactly the pictures
// scripts/goldensvg.go draws from the current golden views, byte for
// byte, and each is well-formed SVG. After a golden changes, run
// scripts/goldensvg.sh.
func TestPicturesAreTheGoldenViews(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cmd := exec.Command("go", "run", "../scripts/goldensvg.go", "-in", "../internal/tui/testdata", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run scripts/goldensvg.go: %v\n%s", err, b)
	}
	want, err := filepath.Glob(filepath.Join(out, "*.svg"))
	if err != nil || len(want) == 0 {
		t.Fatalf("goldensvg drew nothing: %v", err)
	}
	have, err := filepath.Glob("images/*.svg")
	if err != nil {
		t.Fatal(err)
	}
	var wantNames, haveNames []string
	for _, f := range want {
		wantNames = append(wantNames, filepath.Base(f))
	}
	for _, f := range have {
		haveNames = append(haveNames, filepath.Base(f))
	}
	if !slices.Equal(wantNames, haveNames) {
		t.Errorf("docs/images holds %v, the golden views make %v: run scripts/goldensvg.sh", haveNames, wantNames)
	}
	for _, f := range want {
		drawn, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("images", filepath.Base(f)))
		if err != nil {
			continue // reported above
		}
		if !bytes.Equal(drawn, committed) {
			t.Errorf("docs/images/%s is not what the golden view draws now: run scripts/goldensvg.sh", filepath.Base(f))
		}
		dec := xml.NewDecoder(bytes.NewReader(committed))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("docs/images/%s: not well-formed: %v", filepath.Base(f), err)
				break
			}
		}
	}
}

// TestStreamSampleIsRealOutput runs the scenario of the headless page's
// stream-json sample — the main agent asks Explore where the parser is —
// through the real command against the scripted model, and holds the
// sample to it: its lines come in this order, and every key they show is
// in the real line with a value of the same kind (type and subtype equal).
func TestStreamSampleIsRealOutput(t *testing.T) {
	t.Parallel()
	samples := allBlocks(t, "json stream")
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "map the code", "prompt": "EXPLORE: find the parser", "subagent_type": "Explore"}),
		llmtest.Text("The parser is in parse.go."))
	srv.Script("EXPLORE", llmtest.Text("parse.go holds it."))
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-p", "MAIN: where is the parser?", "--output-format", "stream-json", "--verbose")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{mainEnv + "=1", "HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"GORACE=atexit_sleep_ms=0", "ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cadre -p: %v", err)
	}
	var real []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		real = append(real, m)
	}
	for _, b := range samples {
		next := 0
		for i, l := range strings.Split(b.text, "\n") {
			var want map[string]any
			if err := json.Unmarshal([]byte(l), &want); err != nil {
				t.Fatalf("%s line %d: %v", b, i+1, err)
			}
			found := false
			for next < len(real) {
				got := real[next]
				next++
				if got["type"] == want["type"] && got["subtype"] == want["subtype"] {
					if msg := sameShape(want, got, ""); msg != "" {
						t.Errorf("%s line %d (%v %v): %s", b, i+1, want["type"], want["subtype"], msg)
					}
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s line %d: no %v %v line follows in the real output:\n%s", b, i+1, want["type"], want["subtype"], out)
			}
		}
	}
}

// sameShape reports how want is not a part of got: a key got lacks, or a
// value of another kind.
func sameShape(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + " is not an object"
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				return path + "." + k + " is not in the real output"
			}
			if msg := sameShape(v, gv, path+"."+k); msg != "" {
				return msg
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path + " is not an array"
		}
		for i, v := range w {
			if _, isObj := v.(map[string]any); !isObj {
				continue
			}
			match := false
			for _, gv := range g {
				if sameShape(v, gv, "") == "" {
					match = true
					break
				}
			}
			if !match {
				return path + "[" + strconv.Itoa(i) + "] matches no element of the real array"
			}
		}
	default:
		if (want == nil) != (got == nil) {
			return path + ": null in one, not the other"
		}
		if want != nil && jsonKind(want) != jsonKind(got) {
			return path + " is a " + jsonKind(got) + ", the sample shows a " + jsonKind(want)
		}
		if strings.HasSuffix(path, ".type") && want != got {
			return path + " is " + jsonString(got) + ", the sample says " + jsonString(want)
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "value"
}
