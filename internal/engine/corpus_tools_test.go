package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/tool"
)

// oracleEntry is one line of the corpus oracle: how Claude Code 2.1.328
// loads a corpus file (see ../shared/corpus/ORACLE.md).
type oracleEntry struct {
	File      string `json:"file"`
	Loaded    bool   `json:"loaded"`
	AgentType string `json:"agentType"`
	ToolsNote string `json:"tools_note"`
}

// notInCadreYet are tool names corpus agents use that come with features
// outside this pool: team tools (S-11) arrive with teams, and
// interactive-only tools are never a sub-agent's (S-5.1).
var notInCadreYet = []string{tool.SendMessage, tool.TaskCreate, tool.TaskUpdate, tool.TaskList, tool.TaskGet,
	tool.TeamCreate, tool.TeamDelete, tool.AskUserQuestion, tool.ExitPlanMode}

// splitNote splits a tools note on ", " outside parentheses.
func splitNote(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '(':
			depth++
		case s[i] == ')' && depth > 0:
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], ", "):
			out = append(out, s[start:i])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

// TestCorpusAgentsGetTheToolsTheyName loads every corpus agent Claude Code
// loads, through the runtime's own tool computation (the one a spawn
// uses), and checks its effective tools against the oracle's tools note:
// "All tools" is every tool of the main agent, "All tools except D" all
// but D, and a list is exactly the tools it names (plus Read, Write and
// Edit for an agent with memory). Every name in a list that is not an MCP
// tool or a team/interactive tool must exist in cadre's pool: nothing a
// real agent file asks for is silently missing.
func TestCorpusAgentsGetTheToolsTheyName(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..", "shared", "corpus")
	f, err := os.Open(filepath.Join(root, "claude-agents-oracle.jsonl"))
	if err != nil {
		t.Skipf("needs the agent corpus (../shared/corpus beside the repository, which .ci/run requires): %v", err)
	}
	defer f.Close()
	h := newHarness(t)
	cfg := h.config()
	cfg.NoTranscript = true
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// What a sub-agent can be given: the main agent's tools but its task
	// tools (TaskStop, TaskOutput, SendMessage act on the session's tasks).
	pool := slices.DeleteFunc(rt.mainPool.Names(), func(n string) bool {
		return n == tool.TaskStop || n == tool.TaskOutput || n == tool.SendMessage
	})
	checked, aliased, named := 0, 0, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var o oracleEntry
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		if !o.Loaded {
			continue
		}
		path := filepath.Join(root, "claude-agents", o.File)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		def, diags := agentdef.ParseFile(path, data, agentdef.SourceProject)
		if def == nil {
			t.Errorf("%s: Claude Code loads it, cadre does not: %v", o.File, diags)
			continue
		}
		got := toolsFor(rt, def)
		note := o.ToolsNote
		if note == "All tools" && def.Tools != nil && !def.AllTools() {
			// Where cadre deliberately differs (S-4.3): a misspelled tools
			// key (allowedTools), which Claude Code ignores, is used as the
			// list, with a warning, so the agent gets no more than its
			// author wrote; and an empty list means no tools.
			var raws []string
			for _, e := range def.Tools {
				raws = append(raws, e.Raw)
			}
			note = strings.Join(raws, ", ")
			if len(raws) == 0 {
				note = "None" // `tools: []` means none in cadre (S-4.3); Claude Code reads it as all
			}
			aliased++
		}
		var want []string
		switch {
		case note == "All tools":
			want = pool
		case note == "None":
		case strings.HasPrefix(note, "All tools except "):
			except := splitNote(strings.TrimPrefix(note, "All tools except "))
			for _, name := range pool {
				if !slices.ContainsFunc(except, func(e string) bool { return spawn.EntryMatches(agentdef.ParseToolEntry(e), name) }) {
					want = append(want, name)
				}
			}
		default:
			entries := splitNote(note)
			if def.Memory != "" {
				// Memory adds Read, Write and Edit unless disallowed (S-4.7).
				for _, name := range []string{tool.Read, tool.Write, tool.Edit} {
					if !slices.ContainsFunc(def.DisallowedTools, func(e agentdef.ToolEntry) bool { return e.Name == name }) {
						entries = append(entries, name)
					}
				}
			}
			for _, raw := range entries {
				e := agentdef.ParseToolEntry(raw)
				if e.IsMCP() || slices.Contains(notInCadreYet, tool.Canonical(e.Name)) {
					continue
				}
				named[tool.Canonical(e.Name)]++
				if !slices.ContainsFunc(pool, func(n string) bool { return spawn.EntryMatches(e, n) }) {
					t.Errorf("%s names %q, which cadre's pool does not have", o.File, raw)
				}
			}
			for _, name := range pool {
				if slices.ContainsFunc(entries, func(e string) bool { return spawn.EntryMatches(agentdef.ParseToolEntry(e), name) }) {
					want = append(want, name)
				}
			}
		}
		if diff := cmp.Diff(want, got.Tools); diff != "" {
			t.Errorf("%s (note %q): effective tools (-want +got):\n%s", o.File, o.ToolsNote, diff)
		}
		for _, u := range got.Unknown {
			e := agentdef.ParseToolEntry(u)
			if !e.IsMCP() && !slices.Contains(notInCadreYet, tool.Canonical(e.Name)) {
				t.Errorf("%s: entry %q matches no tool", o.File, u)
			}
		}
		checked++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if checked < 450 || aliased > 30 {
		t.Fatalf("%d corpus agents checked, %d of them by a misspelled tools key", checked, aliased)
	}
	// The tools the issue counted are named and present.
	for name, atLeast := range map[string]int{tool.LS: 49, tool.Skill: 48, tool.MultiEdit: 37, tool.WebFetch: 29, tool.WebSearch: 26, tool.TodoWrite: 5, tool.NotebookEdit: 3} {
		if named[name] < atLeast {
			t.Errorf("%s named by %d corpus agents, want at least %d", name, named[name], atLeast)
		}
	}
}

// corpusTools is what a definition gets from the main agent at depth 1:
// its tools, and its entries that name no tool of the session.
type corpusTools struct {
	Tools, Unknown []string
}

// toolsFor computes what def gets when rt's main agent spawns it.
func toolsFor(rt *Runtime, def *agentdef.Definition) corpusTools {
	parent := rt.mainPool.Names()
	c := spawn.ComputeCeiling(spawn.CeilingInput{ParentTools: parent, ParentPerms: glueOf(rt).rootPerms(), Def: def, Depth: 1, MaxDepth: rt.gate.Limits().MaxDepth})
	out := corpusTools{Tools: c.Tools}
	for _, e := range def.EffectiveTools() {
		if !slices.ContainsFunc(parent, func(n string) bool { return spawn.EntryMatches(e, n) }) {
			raw := e.Raw
			if raw == "" {
				raw = e.Name
			}
			out.Unknown = append(out.Unknown, raw)
		}
	}
	return out
}
