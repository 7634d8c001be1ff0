package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the module path; the tables below name packages relative to
// it ("" is the root package).
const module = "github.com/cadre-dev/cadre"

// layers places every package of the module. A package may import only
// packages of a lower layer: an import within a layer, or upward, fails
// the test. Read from the bottom: leaves first, the command last.
var layers = []struct {
	pkgs []string
	what string
}{
	{[]string{"internal/safefs", "internal/gitcmd", "llm/internal/budget", "llm/internal/allocguard", "internal/sandbox/sandboxtest", "internal/remote/temporaltest", "internal/remote/remotebin", "tool/internal/genschemas"},
		"below the leaves: writes that follow no link, git that runs nothing the repository names, the retry budget a fallback shares, the adapters' allocation guards' measure, the sandbox tests' outside directory, the Temporal dev server tests start, where the companion binary cadre-remote is, the generator of the tool schema table"},
	{[]string{"llm", "mcp", "task", "internal/plugin", "internal/text", "internal/textdist", "internal/proclife", "internal/worktree", "internal/tasklist"},
		"leaves: provider-neutral messages, MCP's public types, the task registry, the plugin format, text helpers, process lifetime, git worktrees, the team task list"},
	{[]string{"prompts"},
		"the model-facing texts (on the task registry's states)"},
	{[]string{"llm/internal/retry", "llm/llmtest", "llm/pricing", "tool", "transcript", "internal/workspace", "internal/compact", "internal/remote/workspace"},
		"on llm alone (or on a leaf): the tool contract, transcripts, facts about the working directory, the pure parts of compaction, a remote agent's git workspace (clone, worktree, bundle)"},
	{[]string{"llm/anthropic", "llm/openai", "permission", "skills", "tool/builtin", "internal/sandbox", "internal/telemetry", "internal/telemetry/otlpexport"},
		"provider adapters; permissions, skills and the built-in tools over the tool contract"},
	{[]string{"agentdef", "hooks", "internal/sdkproto", "internal/mcpx", "internal/telemetry/otelsetup", "internal/telemetry/otlptest"},
		"agent definitions, hooks, the SDK's stream protocol, MCP clients"},
	{[]string{"run", "internal/loop", "internal/spawn"},
		"the public vocabulary of a run, the query loop, the pure spawn decisions"},
	{[]string{"internal/engine/hub", "internal/engine/tasktools", "internal/engine/executor", "internal/engine/tasklisttools"},
		"the engine's parts that know no agent: the event hub between streams, the task tools and the Agent tool's schema, the team task list tools, the executor seam (a child's spawn request as plain data and the interface that runs it)"},
	{[]string{"internal/engine", "internal/engine/executor/executortest", "internal/remote/agentwf", "internal/remote/bridge"},
		"the agent tree: the spawn path, a child's lifecycle, notifications, the task tools; the root delegates to it. Beside it the executor conformance suite, which only tests import, and a remote agent's Temporal workflow and activities; the remote executor of the cadre binary, which speaks to cadre-remote bridge over stdio"},
	{[]string{"", "internal/remote/temporalexec"},
		"the root: the embedder's API (Config, New, Runtime); beside it the Temporal executor (a workflow per child), which only the companion binary cadre-remote reaches"},
	{[]string{"config", "internal/tui", "internal/remote/remotecmd"},
		"over the root: settings and trust to a cadre.Config; the terminal UI, a consumer of the public API; cadre-remote's command line (worker, bridge)"},
	{[]string{"internal/cli/agentscmd", "internal/cli/skillscmd", "internal/cli/permcmd", "internal/cli/hookscmd"},
		"the CLI's subcommands"},
	{[]string{"internal/cli/mcpcmd", "internal/cli/trustcmd", "internal/cli/worktreecmd", "internal/cli/configcmd", "internal/cli/workercmd"},
		"the CLI's subcommands that reuse agentscmd's listing"},
	{[]string{"internal/cli"},
		"the command line"},
	{[]string{"cmd/cadre", "cmd/cadre-remote"},
		"main: calls cli.Main and nothing else; cadre-remote's main, remotecmd.Main"},
	{[]string{"internal/importrules", "docs"},
		"this test, and the docs' tests (test files only)"},
}

// only names packages that just a few may import, whatever their layers.
// A pattern ending in "/..." covers the packages below it.
var only = []struct {
	pkg      string
	importer []string
	why      string
}{
	{"internal/cli", []string{"cmd/cadre"}, "the command line is main's alone; an embedder uses the root or config"},
	{"internal/cli/...", []string{"internal/cli", "internal/cli/..."}, "subcommands belong to the command line"},
	{"internal/tui", []string{"internal/cli"}, "the terminal UI loads only when the CLI starts it"},
	{"internal/telemetry/otelsetup", []string{"internal/cli", "internal/remote/remotecmd"}, "the OpenTelemetry SDK and exporters are linked only into the CLI and the companion binary's worker; an embedder brings its own providers"},
	{"internal/telemetry/otlpexport", []string{"internal/telemetry/otelsetup"}, "the OTLP exporters are built only by the CLI's telemetry set-up"},
	{"internal/sdkproto", []string{"internal/cli"}, "the SDKs' stream-json protocol is spoken by the CLI; the root has no edge to it"},
	{"config", []string{"internal/cli", "internal/cli/..."}, "settings files are read above the root; the runtime gets a cadre.Config"},
	{"llm/llmtest", []string{"internal/engine/executor/executortest"}, "the scripted model server is for tests only (and the executor conformance suite, which drives children with it)"},
	{"internal/engine/executor/executortest", nil, "the executor conformance suite is for tests only"},
	{"internal/remote/agentwf", []string{"internal/remote/temporalexec", "internal/remote/remotecmd"}, "the Temporal SDK is the companion binary's (cadre-remote), never the cadre binary's (issue 24's start-up cost)"},
	{"internal/remote/temporalexec", []string{"internal/remote/remotecmd"}, "the Temporal client is the companion binary's (cadre-remote), never the cadre binary's"},
	{"internal/remote/remotecmd", []string{"cmd/cadre-remote"}, "cadre-remote's command line is its main's alone"},
	{"internal/remote/temporaltest", nil, "the Temporal dev server is for tests only"},
	{"internal/telemetry/otlptest", nil, "the OTLP receiver is for tests only"},
}

// confined names packages that may import, within the module, only what
// the list allows.
var confined = []struct {
	pkg     string
	allowed []string
	why     string
}{
	{"llm/...", []string{"llm", "llm/..."}, "a provider adapter knows llm and nothing of agents"},
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

// packages lists the module's packages with their (non-test) imports
// inside the module, by path relative to the module.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		var mine []string
		for _, imp := range p.Imports {
			if rel, ok := relative(imp); ok {
				mine = append(mine, rel)
			}
		}
		rel, _ := relative(p.ImportPath)
		pkgs[rel] = mine
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages: %v", len(pkgs), pkgs)
	}
	return pkgs
}

// relative returns path relative to the module, and whether it is in it.
func relative(path string) (string, bool) {
	if path == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// matches reports whether the package rel is named by pattern.
func matches(pattern, rel string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(rel, base+"/")
	}
	return pattern == rel
}

// name spells a relative package path for a message.
func name(rel string) string {
	if rel == "" {
		return "the root package"
	}
	return rel
}

// layerOf returns the layer that places rel, or -1.
func layerOf(rel string) int {
	for i, l := range layers {
		if slices.Contains(l.pkgs, rel) {
			return i
		}
	}
	return -1
}

// check returns one message for every broken rule in pkgs.
func check(pkgs map[string][]string) []string {
	var bad []string
	for rel := range pkgs {
		if layerOf(rel) < 0 {
			bad = append(bad, "package "+name(rel)+" is in no layer: place it in the layers table of internal/importrules")
		}
	}
	for _, l := range layers {
		for _, p := range l.pkgs {
			if _, ok := pkgs[p]; !ok {
				bad = append(bad, "the layers table names "+name(p)+", which is no package of the module: take it out")
			}
		}
	}
	for rel, imps := range pkgs {
		from := layerOf(rel)
		for _, imp := range imps {
			if to := layerOf(imp); from >= 0 && to >= from {
				bad = append(bad, name(rel)+" (layer "+strconv.Itoa(from)+": "+layers[from].what+") imports "+name(imp)+
					" (layer "+strconv.Itoa(to)+"): an edge within a layer or upward")
			}
			for _, o := range only {
				if matches(o.pkg, imp) && !slices.ContainsFunc(o.importer, func(p string) bool { return matches(p, rel) }) {
					bad = append(bad, name(rel)+" imports "+name(imp)+": "+o.why)
				}
			}
			for _, c := range confined {
				if matches(c.pkg, rel) && !slices.ContainsFunc(c.allowed, func(p string) bool { return matches(p, imp) }) {
					bad = append(bad, name(rel)+" imports "+name(imp)+": "+c.why)
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestImportRules holds DESIGN.md's arrows on the module as it is.
func TestImportRules(t *testing.T) {
	t.Parallel()
	for _, msg := range check(packages(t)) {
		t.Error(msg)
	}
}

// The checker itself finds each kind of broken rule: an upward edge, an
// edge within a layer, an unplaced package, a stale table entry, a
// forbidden importer, and an adapter reaching out of llm.
func TestCheckFindsBrokenRules(t *testing.T) {
	t.Parallel()
	good := map[string][]string{}
	for _, l := range layers {
		for _, p := range l.pkgs {
			good[p] = nil
		}
	}
	good["cmd/cadre"] = []string{"internal/cli"}
	good["internal/cli"] = []string{"", "config", "internal/tui", "internal/sdkproto", "internal/cli/agentscmd"}
	good["permission"] = []string{"tool", "prompts"}
	if bad := check(good); len(bad) != 0 {
		t.Fatalf("a graph that keeps the rules is refused: %v", bad)
	}
	cases := []struct {
		name string
		edit func(map[string][]string)
		want string
	}{
		{"upward to the root", func(g map[string][]string) { g["permission"] = append(g["permission"], "") },
			"permission (layer 4: provider adapters; permissions, skills and the built-in tools over the tool contract) imports the root package (layer 9)"},
		{"upward to the cli", func(g map[string][]string) { g["run"] = []string{"internal/cli"} }, "run imports internal/cli: the command line is main's alone"},
		{"within a layer", func(g map[string][]string) { g["tool"] = []string{"transcript"} }, "tool (layer 3:"},
		{"the root to sdkproto", func(g map[string][]string) { g[""] = []string{"internal/sdkproto"} }, "the root package imports internal/sdkproto: the SDKs' stream-json protocol"},
		{"the tui to the cli's subcommands", func(g map[string][]string) { g["internal/tui"] = []string{"internal/cli/agentscmd"} }, "internal/tui imports internal/cli/agentscmd: subcommands belong"},
		{"a new package", func(g map[string][]string) { g["internal/nowhere"] = nil }, "package internal/nowhere is in no layer"},
		{"a stale entry", func(g map[string][]string) { delete(g, "transcript") }, "the layers table names transcript, which is no package"},
		{"an adapter out of llm", func(g map[string][]string) { g["llm/openai"] = []string{"task"} }, "llm/openai imports task: a provider adapter knows llm"},
		{"llmtest outside tests", func(g map[string][]string) { g["internal/loop"] = []string{"llm/llmtest"} }, "internal/loop imports llm/llmtest: the scripted model server is for tests only"},
	}
	for _, tc := range cases {
		g := map[string][]string{}
		for k, v := range good {
			g[k] = slices.Clone(v)
		}
		tc.edit(g)
		bad := check(g)
		if !slices.ContainsFunc(bad, func(m string) bool { return strings.Contains(m, tc.want) }) {
			t.Errorf("%s: no message with %q in %q", tc.name, tc.want, bad)
		}
	}
}
