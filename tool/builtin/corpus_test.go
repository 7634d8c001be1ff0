package builtin_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// runtimeTools are the tools the runtime adds beside the built-in pool:
// the Agent tool (and its old name Task), and the task tools of
// background agents.
var runtimeTools = []string{tool.Agent, tool.Task, tool.TaskStop, tool.TaskOutput}

// teamTools come with teams (S-11), not with the tool pool.
var teamTools = map[string]bool{tool.SendMessage: true, tool.TaskCreate: true, tool.TaskUpdate: true, tool.TaskList: true, tool.TaskGet: true,
	tool.TeamCreate: true, tool.TeamDelete: true}

// TestCorpusToolsExist: every tool a loadable corpus agent names in
// `tools` or `disallowedTools` — MCP tools, team tools and the
// interactive-only tools no sub-agent ever gets (S-5.1) aside — is one
// cadre has: the built-in pool, the Skill tool, or a tool the runtime adds.
func TestCorpusToolsExist(t *testing.T) {
	t.Parallel()
	corpus := filepath.Join("..", "..", "..", "shared", "corpus")
	f, err := os.Open(filepath.Join(corpus, "claude-agents-oracle.jsonl"))
	if err != nil {
		t.Skipf("needs the agent corpus (../shared/corpus beside the repository, which .ci/run requires): %v", err)
	}
	defer f.Close()
	have := map[string]bool{}
	for _, tl := range builtin.Tools(builtin.Config{}) {
		have[tl.Spec().Name] = true
	}
	have[skills.NewTool(nil).Spec().Name] = true
	for _, n := range runtimeTools {
		have[n] = true
	}
	unknown := map[string][]string{}
	fromRuntime, interactive := map[string]int{}, map[string]int{}
	agents, named := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var rec struct {
			File   string `json:"file"`
			Loaded bool   `json:"loaded"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if !rec.Loaded {
			continue
		}
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", rec.File))
		if err != nil {
			t.Fatal(err)
		}
		def, _ := agentdef.ParseFile(rec.File, data, agentdef.SourceProject)
		if def == nil {
			t.Errorf("%s: loadable in Claude Code but not parsed", rec.File)
			continue
		}
		agents++
		for _, e := range append(append([]agentdef.ToolEntry(nil), def.Tools...), def.DisallowedTools...) {
			name := e.Name
			if name == "" || name == "*" || tool.IsMCP(name) || teamTools[name] {
				continue
			}
			if in, ok := tool.Lookup(name); ok && in.InteractiveOnly {
				interactive[name]++
				continue
			}
			named++
			if !have[name] {
				unknown[name] = append(unknown[name], rec.File)
				continue
			}
			if name == tool.Agent || name == tool.Task || name == tool.TaskStop || name == tool.TaskOutput {
				fromRuntime[name]++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if agents < 400 {
		t.Fatalf("only %d loadable agents read; the corpus has about 459", agents)
	}
	var names []string
	for n := range unknown {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		files := unknown[n]
		t.Errorf("tool %q (named by %d agents, e.g. %s) exists nowhere in cadre", n, len(files), strings.Join(files[:min(3, len(files))], ", "))
	}
	t.Logf("%d agents, %d tool names checked; named tools the runtime adds: %v; interactive-only, never given to sub-agents: %v", agents, named, fromRuntime, interactive)
}
