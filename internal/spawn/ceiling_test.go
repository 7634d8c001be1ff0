package spawn

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
)

func defOf(t *testing.T, front string) *agentdef.Definition {
	t.Helper()
	d, diags := agentdef.ParseFile("/defs/x.md", []byte("---\nname: x\ndescription: d\n"+front+"---\nbody\n"), agentdef.SourceProject)
	if d == nil {
		t.Fatal(diags)
	}
	return d
}

func TestComputeCeiling(t *testing.T) {
	t.Parallel()
	parent := []string{"Agent", "AskUserQuestion", "Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}
	deny := func(tool, content string) permission.Rule {
		return permission.Rule{Behavior: permission.Deny, Tool: tool, Content: content, Source: "s.json"}
	}
	cases := []struct {
		name       string
		front      string
		depth      int
		background bool
		parentMode permission.Mode
		rules      []permission.Rule
		wantTools  []string
		wantTypes  []string
		wantMode   permission.Mode
		wantWarn   string
		wantNarrow []string
	}{
		{name: "no tools key inherits all but interactive", wantTools: []string{"Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}},
		{name: "explicit list", front: "tools: Read, Grep\n", wantTools: []string{"Grep", "Read"}},
		{name: "Task alias selects Agent", front: "tools: Task, Read\n", wantTools: []string{"Agent", "Read"}},
		{name: "disallowed removes", front: "disallowedTools: Write, Edit, Agent\n", wantTools: []string{"Bash", "Glob", "Grep", "Read", "mcp__gh__issue"}},
		{name: "mcp server pattern", front: "tools: mcp__gh, Read\n", wantTools: []string{"Read", "mcp__gh__issue"}},
		{name: "unknown entry warns", front: "tools: Read, Frobnicate\n", wantTools: []string{"Read"}, wantWarn: `"Frobnicate" matches no tool`},
		{name: "agent allow-list", front: "tools: Agent(Explore, Plan), Read\n", wantTools: []string{"Agent", "Read"}, wantTypes: []string{"Explore", "Plan"}},
		{name: "depth cap drops Agent", depth: 3, wantTools: []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}},
		{name: "parent whole-tool deny binds", rules: []permission.Rule{deny("Bash", "")}, wantTools: []string{"Agent", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}},
		{name: "background allow-list", background: true, wantTools: []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}},
		{name: "rule content narrows", front: "tools: Bash(git diff:*), Read\n", wantTools: []string{"Bash", "Read"}, wantNarrow: []string{"Bash"}},
		{name: "whole entry beats narrowing", front: "tools: Bash(git diff:*), Bash\n", wantTools: []string{"Bash"}},
		{name: "declared mode cannot widen", front: "permissionMode: bypassPermissions\n", parentMode: permission.ModeDefault, wantMode: permission.ModeDefault,
			wantTools: []string{"Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}, wantWarn: "was not applied"},
		{name: "parent mode imposed", front: "permissionMode: acceptEdits\n", parentMode: permission.ModePlan, wantMode: permission.ModePlan,
			wantTools: []string{"Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Write", "mcp__gh__issue"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pm := c.parentMode
			if pm == "" {
				pm = permission.ModeDefault
			}
			depth := c.depth
			if depth == 0 {
				depth = 1
			}
			got := ComputeCeiling(CeilingInput{ParentTools: parent, ParentPerms: permission.Effective{Mode: pm, Rules: c.rules},
				Def: defOf(t, c.front), Depth: depth, MaxDepth: 3, Background: c.background})
			if diff := cmp.Diff(c.wantTools, got.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantTypes, got.Types); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
			if c.wantMode != "" && got.Perms.Mode != c.wantMode {
				t.Errorf("mode %s, want %s", got.Perms.Mode, c.wantMode)
			}
			if c.wantWarn != "" && !strings.Contains(strings.Join(got.Warnings, "\n"), c.wantWarn) {
				t.Errorf("warnings %q lack %q", got.Warnings, c.wantWarn)
			}
			var narrowed []string
			for name := range got.Narrow {
				narrowed = append(narrowed, name)
			}
			if diff := cmp.Diff(c.wantNarrow, narrowed); diff != "" {
				t.Errorf("narrowed (-want +got):\n%s", diff)
			}
			// Never more than the parent, and every drop is explained.
			if len(got.Tools)+len(got.Dropped) != len(parent) {
				t.Errorf("%d granted + %d dropped != %d parent tools", len(got.Tools), len(got.Dropped), len(parent))
			}
			for _, r := range c.rules {
				if !slices.Contains(got.Perms.Rules, r) {
					t.Errorf("parent rule %v does not bind the child", r)
				}
			}
		})
	}
}

func TestDisallowedWithContentBecomesDenyRule(t *testing.T) {
	t.Parallel()
	got := ComputeCeiling(CeilingInput{ParentTools: []string{"Bash", "Read"}, ParentPerms: permission.Effective{Mode: permission.ModeDefault},
		Def: defOf(t, "disallowedTools: Bash(rm:*)\n"), Depth: 1, MaxDepth: 3})
	if diff := cmp.Diff([]string{"Bash", "Read"}, got.Tools); diff != "" {
		t.Fatalf("tools:\n%s", diff)
	}
	want := permission.Rule{Behavior: permission.Deny, Tool: "Bash", Content: "rm:*", Source: "/defs/x.md"}
	if !slices.Contains(got.Perms.Rules, want) {
		t.Fatalf("rules %+v", got.Perms.Rules)
	}
}
