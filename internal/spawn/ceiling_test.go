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

// TestChildModeTable: every declared child mode under every parent mode,
// in a session without and with bypass allowed (S-10.3, issue 29): a
// default or dontAsk parent lets the declared mode apply up to acceptEdits,
// and bypassPermissions only when bypass is allowed; any other parent
// imposes its mode; a dontAsk ancestor keeps the child from prompting.
func TestChildModeTable(t *testing.T) {
	t.Parallel()
	const (
		D  = permission.ModeDefault
		DA = permission.ModeDontAsk
		AE = permission.ModeAcceptEdits
		P  = permission.ModePlan
		BP = permission.ModeBypassPermissions
		AU = permission.ModeAuto
	)
	children := []permission.Mode{"", D, P, DA, AE, BP, AU}
	// want[parent] lists the effective mode per child, without bypass
	// allowed then with it.
	want := map[permission.Mode][2][]permission.Mode{
		D:  {{D, D, P, DA, AE, D, D}, {D, D, P, DA, AE, BP, D}},
		DA: {{DA, DA, P, DA, AE, DA, DA}, {DA, DA, P, DA, AE, BP, DA}},
		AE: {{AE, AE, AE, AE, AE, AE, AE}, {AE, AE, AE, AE, AE, AE, AE}},
		P:  {{P, P, P, P, P, P, P}, {P, P, P, P, P, P, P}},
		BP: {{BP, BP, BP, BP, BP, BP, BP}, {BP, BP, BP, BP, BP, BP, BP}},
		AU: {{AU, AU, AU, AU, AU, AU, AU}, {AU, AU, AU, AU, AU, AU, AU}},
	}
	deny := permission.Rule{Behavior: permission.Deny, Tool: "Bash", Content: "rm:*", Source: "managed.json"}
	for parent, rows := range want {
		for li, allow := range []bool{false, true} {
			for ci, child := range children {
				front := ""
				if child != "" {
					front = "permissionMode: " + string(child) + "\n"
				}
				got := ComputeCeiling(CeilingInput{ParentTools: []string{"Bash", "Read"},
					ParentPerms: permission.Effective{Mode: parent, Rules: []permission.Rule{deny}},
					Limits:      permission.SessionLimits{AllowBypass: allow}, Def: defOf(t, front), Depth: 1, MaxDepth: 3})
				w := rows[li][ci]
				if got.Perms.Mode != w {
					t.Errorf("parent %s, child %q, allowBypass %v: mode %s, want %s", parent, child, allow, got.Perms.Mode, w)
				}
				if got.Perms.NoPrompt != (parent == DA || w == DA) {
					t.Errorf("parent %s, child %q: NoPrompt %v", parent, child, got.Perms.NoPrompt)
				}
				if !slices.Contains(got.Perms.Rules, deny) {
					t.Errorf("parent %s, child %q: the parent's deny rule does not bind the child", parent, child)
				}
				if applied := child == "" || w == child; applied == (len(got.Warnings) > 0) {
					t.Errorf("parent %s, child %q: warnings %q", parent, child, got.Warnings)
				}
			}
		}
	}
	// Session limits still cap a declared mode.
	for _, lim := range []permission.SessionLimits{{AllowBypass: true, DisableBypass: true}, {AllowBypass: true, MaxMode: AE}} {
		got := ComputeCeiling(CeilingInput{ParentTools: []string{"Read"}, ParentPerms: permission.Effective{Mode: D},
			Limits: lim, Def: defOf(t, "permissionMode: bypassPermissions\n"), Depth: 1, MaxDepth: 3})
		if got.Perms.Mode == BP {
			t.Errorf("limits %+v: a declared bypassPermissions applied", lim)
		}
	}
	got := ComputeCeiling(CeilingInput{ParentTools: []string{"Read"}, ParentPerms: permission.Effective{Mode: D},
		Def: defOf(t, "permissionMode: bypassPermissions\n"), Depth: 1, MaxDepth: 3})
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "--allow-dangerously-skip-permissions") {
		t.Errorf("a declared bypassPermissions without bypass allowed says not why: %q", got.Warnings)
	}
}
