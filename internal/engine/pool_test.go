package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// corpusDefs parses the shared corpus and returns the definitions that
// declare tools or disallowedTools, one per name and tools shape.
func corpusDefs(t *testing.T) []*agentdef.Definition {
	t.Helper()
	root := filepath.Join("..", "..", "..", "shared", "corpus", "claude-agents")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("needs the agent corpus at %s (../shared/corpus beside the repository, which .ci/run requires): %v", root, err)
	}
	seen := map[string]bool{}
	var out []*agentdef.Definition
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		def, _ := agentdef.ParseFile(path, b, agentdef.SourceProject)
		if def == nil || (def.Tools == nil && def.DisallowedTools == nil) {
			return nil
		}
		// One definition per distinct tools shape keeps the test fast
		// while covering every shape the corpus has.
		shape := fmt.Sprint(def.Tools == nil, def.Tools, "|", def.DisallowedTools == nil, def.DisallowedTools)
		if seen[def.Name] || seen[shape] {
			return nil
		}
		seen[shape] = true
		for _, b := range agentdef.Builtins() {
			if b.Name == def.Name {
				return nil
			}
		}
		seen[def.Name] = true
		out = append(out, def)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TestChildToolListsMatchTheCeiling spawns every built-in agent and every
// corpus definition that declares tools, all from one parent turn, and
// checks that the tools each child was offered on the wire, with the
// deferred ones its system prompt names, are exactly the ones the ceiling
// computed — and that the ceiling only narrows.
func TestChildToolListsMatchTheCeiling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	defs := append(agentdef.Builtins(), corpusDefs(t)...)
	if len(defs) < 30 {
		t.Fatalf("only %d definitions with tools found in the corpus", len(defs))
	}
	var calls []llmtest.Call
	for i, d := range defs {
		key := fmt.Sprintf("POOL-%04d", i)
		calls = append(calls, llmtest.Call{Name: "Agent", Input: agentCall(d.Name, key+": report your tools")})
		h.srv.Script(key, llmtest.Text("ok"))
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("done"))
	cfg := h.config()
	cfg.Agents = defs
	cfg.Limits = Limits{MaxRunning: len(defs) + 1, MaxTotal: len(defs) + 1}
	_, res, rt := mustRun(t, cfg, "MAIN")
	// A definition that runs in the background (the built-in verification
	// agent) may still be running when the main agent has answered: wait
	// for it before reading its request.
	for {
		ch := rt.bg.reg.Changed()
		if rt.bg.reg.Live() == 0 {
			break
		}
		<-ch
	}
	parentTools := rt.mainPool.Names()
	spawned, background := 0, 0
	for i, d := range defs {
		reqs := h.srv.RequestsFor(fmt.Sprintf("POOL-%04d", i))
		c := spawn.ComputeCeiling(spawn.CeilingInput{ParentTools: parentTools, ParentPerms: glueOf(rt).rootPerms(), Def: d, Depth: 1, MaxDepth: DefaultMaxDepth})
		if len(c.Tools) == 0 {
			if len(reqs) != 0 {
				t.Errorf("%s: a child with no tools was started", d.Name)
			}
			continue
		}
		spawned++
		if d.Background {
			background++
		}
		if len(reqs) != 1 {
			t.Errorf("%s: %d requests", d.Name, len(reqs))
			continue
		}
		if diff := cmp.Diff(ceilingOnWire(c.Tools), wireTools(reqs[0])); diff != "" {
			t.Errorf("%s (%s): tools (-ceiling +sent or deferred):\n%s", d.Name, d.Path, diff)
		}
		for _, name := range wireTools(reqs[0]) {
			if _, ok := rt.mainPool.Get(name); !ok {
				t.Errorf("%s: got %s, which the parent does not have", d.Name, name)
			}
		}
	}
	// Every foreground child ended before the main agent's answer; a
	// background one may have ended before it or after.
	if c := res.Subagents.Completed; c < spawned-background || c > spawned {
		t.Fatalf("completed %d, want %d to %d (stats %+v)", c, spawned-background, spawned, res.Subagents)
	}
}
