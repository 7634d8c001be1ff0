package agentdef

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkDiags compares diagnostics with wants of the form
// "LINE SEVERITY substring".
func checkDiags(t *testing.T, ds []Diagnostic, wants []string) {
	t.Helper()
	if len(ds) != len(wants) {
		t.Errorf("got %d diagnostics, want %d:\n%s", len(ds), len(wants), dumpDiags(ds))
		return
	}
	for i, w := range wants {
		parts := strings.SplitN(w, " ", 3)
		got := fmt.Sprintf("%d %s", ds[i].Line, ds[i].Severity)
		if got != parts[0]+" "+parts[1] || (len(parts) == 3 && !strings.Contains(ds[i].Message, parts[2])) {
			t.Errorf("diagnostic %d = %s\nwant %q", i, ds[i], w)
		}
	}
}

func dumpDiags(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func raws(es []ToolEntry) []string {
	if es == nil {
		return nil
	}
	out := []string{}
	for _, e := range es {
		out = append(out, e.Raw)
	}
	return out
}

func md(front string) []byte {
	return []byte("---\n" + front + "---\nYou are a test agent.\n")
}

func TestToolsShapes(t *testing.T) {
	tests := []struct {
		name      string
		front     string
		tools     []string
		disallow  []string
		note      string
		all       bool
		wantDiags []string
	}{
		{name: "absent", front: "", tools: nil, note: "All tools", all: true},
		{name: "comma string", front: "tools: Read, Grep, Glob\n", tools: []string{"Read", "Grep", "Glob"}, note: "Read, Grep, Glob"},
		{name: "no spaces", front: "tools: Read,Write,Grep\n", tools: []string{"Read", "Write", "Grep"}, note: "Read, Write, Grep"},
		{name: "spaces only", front: "tools: Read Write  Grep\n", tools: []string{"Read", "Write", "Grep"}, note: "Read, Write, Grep"},
		{name: "rule content kept", front: "tools: Read, Bash(git diff:*, git log), Grep\n", tools: []string{"Read", "Bash(git diff:*, git log)", "Grep"}, note: "Read, Bash(git diff:*, git log), Grep"},
		{name: "yaml list", front: "tools:\n  - Read\n  - Bash(npm test:*)\n", tools: []string{"Read", "Bash(npm test:*)"}, note: "Read, Bash(npm test:*)"},
		{name: "flow list", front: "tools: [\"Read\", \"Grep\"]\n", tools: []string{"Read", "Grep"}, note: "Read, Grep"},
		{name: "list items split", front: "tools: [\"Grep, Glob\", Read]\n", tools: []string{"Grep", "Glob", "Read"}, note: "Grep, Glob, Read"},
		{name: "duplicates and unknown kept", front: "tools: FooTool, BarTool, Read, Read\n", tools: []string{"FooTool", "BarTool", "Read", "Read"}, note: "FooTool, BarTool, Read, Read",
			wantDiags: []string{`4 warning tools entry "FooTool" names no tool cadre knows; the agent does not get it`, `4 warning "BarTool" names no tool`}},
		{name: "misspelled tool", front: "tools: Reed, Grep(x), bash\ndisallowedTools: WebFetc\n", tools: []string{"Reed", "Grep(x)", "bash"}, disallow: []string{"WebFetc"}, note: "Reed, Grep(x), bash",
			wantDiags: []string{`4 warning "Reed" names no tool cadre knows (did you mean "Read"?)`, `4 warning "bash" names no tool cadre knows (did you mean "Bash"?)`,
				`5 warning disallowedTools entry "WebFetc" names no tool cadre knows (did you mean "WebFetch"?); it denies nothing`}},
		{name: "known names from the registry", front: "tools: Task(Explore), TodoWrite, NotebookEdit, mcp__gh\n", tools: []string{"Task(Explore)", "TodoWrite", "NotebookEdit", "mcp__gh"}, note: "Task(Explore), TodoWrite, NotebookEdit, mcp__gh"},
		{name: "star", front: "tools: \"*\"\n", tools: []string{"*"}, note: "All tools", all: true},
		{name: "star in list", front: "tools: Read, *\n", tools: []string{"Read", "*"}, note: "All tools", all: true},
		{name: "empty flow list is none", front: "tools: []\n", tools: []string{}, note: "None", wantDiags: []string{"4 warning no tools"}},
		{name: "empty string is none", front: "tools: \"\"\n", tools: []string{}, note: "None", wantDiags: []string{"4 warning no tools"}},
		{name: "bare key is none", front: "tools:\n", tools: []string{}, note: "None", wantDiags: []string{"4 warning no tools"}},
		{name: "non-string item", front: "tools: [Read, 3]\n", tools: []string{"Read"}, note: "Read", wantDiags: []string{"4 warning entry 3 is not a string"}},
		{name: "wrong type gives none", front: "tools: {Read: true}\n", tools: []string{}, note: "None", wantDiags: []string{"4 warning no tools until this is fixed"}},
		{name: "mcp entries", front: "tools: mcp__github, mcp__db__query, mcp__*\n", tools: []string{"mcp__github", "mcp__db__query", "mcp__*"}, note: "mcp__github, mcp__db__query, mcp__*"},
		{name: "disallowed only", front: "disallowedTools: Write, Edit\n", disallow: []string{"Write", "Edit"}, note: "All tools except Write, Edit", all: true},
		{name: "both", front: "tools: Read, Edit, Grep\ndisallowedTools: Edit\n", tools: []string{"Read", "Edit", "Grep"}, disallow: []string{"Edit"}, note: "Read, Grep"},
		{name: "both cancel", front: "tools: Read, Edit\ndisallowedTools: Read Edit\n", tools: []string{"Read", "Edit"}, disallow: []string{"Read", "Edit"}, note: "None"},
		{name: "star plus disallowed", front: "tools: \"*\"\ndisallowedTools: [Bash]\n", tools: []string{"*"}, disallow: []string{"Bash"}, note: "All tools except Bash", all: true},
		{name: "disallow star", front: "disallowedTools: \"*\"\n", disallow: []string{"*"}, note: "None", all: true, wantDiags: []string{"4 warning denies every tool"}},
		{name: "memory adds file tools", front: "tools: Grep\nmemory: project\n", tools: []string{"Grep"}, note: "Grep, Write, Edit, Read"},
		{name: "memory keeps present ones", front: "tools: Read, Grep\nmemory: user\n", tools: []string{"Read", "Grep"}, note: "Read, Grep, Write, Edit"},
		{name: "bad memory adds nothing", front: "tools: Grep\nmemory: global\n", tools: []string{"Grep"}, note: "Grep", wantDiags: []string{"5 warning invalid memory"}},
		{name: "memory with all tools", front: "memory: local\n", note: "All tools", all: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := ParseFile("a.md", md("name: a\ndescription: d\n"+tt.front), SourceProject)
			if def == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			if diff := cmp.Diff(tt.tools, raws(def.Tools)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.disallow, raws(def.DisallowedTools)); diff != "" {
				t.Errorf("disallowedTools (-want +got):\n%s", diff)
			}
			if got := ToolsNote(def); got != tt.note {
				t.Errorf("note %q, want %q", got, tt.note)
			}
			if def.AllTools() != tt.all {
				t.Errorf("AllTools = %v", def.AllTools())
			}
			checkDiags(t, diags, tt.wantDiags)
		})
	}
}

func TestToolEntry(t *testing.T) {
	tests := []struct {
		raw        string
		want       ToolEntry
		agents     []string
		agentsOK   bool
		server     string
		tool       string
		mcpOK      bool
		isWildcard bool
	}{
		{raw: "Read", want: ToolEntry{Raw: "Read", Name: "Read"}},
		{raw: " Bash(git diff:*) ", want: ToolEntry{Raw: "Bash(git diff:*)", Name: "Bash", Content: "git diff:*", HasContent: true}},
		{raw: "Bash()", want: ToolEntry{Raw: "Bash()", Name: "Bash", HasContent: true}},
		{raw: "Agent(Explore, reviewer)", want: ToolEntry{Raw: "Agent(Explore, reviewer)", Name: "Agent", Content: "Explore, reviewer", HasContent: true}, agents: []string{"Explore", "reviewer"}, agentsOK: true},
		{raw: "Task(Plan)", want: ToolEntry{Raw: "Task(Plan)", Name: "Task", Content: "Plan", HasContent: true}, agents: []string{"Plan"}, agentsOK: true},
		{raw: "Agent", want: ToolEntry{Raw: "Agent", Name: "Agent"}},
		{raw: "mcp__github", want: ToolEntry{Raw: "mcp__github", Name: "mcp__github"}, server: "github", mcpOK: true},
		{raw: "mcp__github__create_issue", want: ToolEntry{Raw: "mcp__github__create_issue", Name: "mcp__github__create_issue"}, server: "github", tool: "create_issue", mcpOK: true},
		{raw: "mcp__*", want: ToolEntry{Raw: "mcp__*", Name: "mcp__*"}, server: "*", mcpOK: true},
		{raw: "*", want: ToolEntry{Raw: "*", Name: "*"}, isWildcard: true},
		{raw: "(odd)", want: ToolEntry{Raw: "(odd)", Name: "(odd)"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			e := ParseToolEntry(tt.raw)
			if diff := cmp.Diff(tt.want, e); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			agents, ok := e.AgentTypes()
			if ok != tt.agentsOK || !cmp.Equal(agents, tt.agents) {
				t.Errorf("AgentTypes = %v, %v", agents, ok)
			}
			server, tool, ok := e.MCP()
			if ok != tt.mcpOK || server != tt.server || tool != tt.tool {
				t.Errorf("MCP = %q %q %v", server, tool, ok)
			}
			if e.IsWildcard() != tt.isWildcard {
				t.Errorf("IsWildcard = %v", e.IsWildcard())
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var back ToolEntry
			if err := json.Unmarshal(b, &back); err != nil || back != e {
				t.Errorf("JSON round trip: %s -> %+v (%v)", b, back, err)
			}
		})
	}
}

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		name  string
		front string
		check func(*Definition) bool
		diags []string
	}{
		{"effort ok", "effort: high\n", func(d *Definition) bool { return d.Effort == "high" }, nil},
		{"effort xhigh", "effort: xhigh\n", func(d *Definition) bool { return d.Effort == "xhigh" }, nil},
		{"effort bad", "effort: extreme\n", func(d *Definition) bool { return d.Effort == "" }, []string{"4 warning invalid effort \"extreme\"; ignored — valid values: low, medium, high, xhigh, max"}},
		{"permission ok", "permissionMode: acceptEdits\n", func(d *Definition) bool { return d.PermissionMode == "acceptEdits" }, nil},
		{"permission manual alias", "permissionMode: manual\n", func(d *Definition) bool { return d.PermissionMode == "default" }, nil},
		{"permission bubble", "permissionMode: bubble\n", func(d *Definition) bool { return d.PermissionMode == "" }, []string{"4 warning internal"}},
		{"permission bad", "permissionMode: yolo\n", func(d *Definition) bool { return d.PermissionMode == "" }, []string{"4 warning invalid permissionMode \"yolo\""}},
		{"maxTurns ok", "maxTurns: 12\n", func(d *Definition) bool { return d.MaxTurns == 12 }, nil},
		{"maxTurns string digits", "maxTurns: \"7\"\n", func(d *Definition) bool { return d.MaxTurns == 7 }, nil},
		{"maxTurns with comment", "maxTurns: 10   # cap\n", func(d *Definition) bool { return d.MaxTurns == 10 }, nil},
		{"maxTurns zero", "maxTurns: 0\n", func(d *Definition) bool { return d.MaxTurns == 0 }, []string{"4 warning positive whole number"}},
		{"maxTurns negative", "maxTurns: -3\n", func(d *Definition) bool { return d.MaxTurns == 0 }, []string{"4 warning invalid maxTurns -3"}},
		{"maxTurns fraction", "maxTurns: 2.5\n", func(d *Definition) bool { return d.MaxTurns == 0 }, []string{"4 warning invalid maxTurns 2.5"}},
		{"maxTurns word", "maxTurns: many\n", func(d *Definition) bool { return d.MaxTurns == 0 }, []string{"4 warning invalid maxTurns \"many\""}},
		{"memory bad", "memory: global\n", func(d *Definition) bool { return d.Memory == "" }, []string{"4 warning valid values: user, project, local"}},
		{"background true", "background: true\n", func(d *Definition) bool { return d.Background }, nil},
		{"background string", "background: \"false\"\n", func(d *Definition) bool { return !d.Background }, nil},
		{"background bad", "background: sometimes\n", func(d *Definition) bool { return !d.Background }, []string{"4 warning use true or false"}},
		{"isolation ok", "isolation: worktree\n", func(d *Definition) bool { return d.Isolation == "worktree" }, nil},
		{"isolation bad", "isolation: docker\n", func(d *Definition) bool { return d.Isolation == "" }, []string{"4 warning invalid isolation"}},
		{"color ok", "color: Magenta\n", func(d *Definition) bool { return d.Color == "Magenta" }, nil},
		{"color hex", "color: \"#ff8800\"\n", func(d *Definition) bool { return d.Color == "#ff8800" }, nil},
		{"color list", "color: [color]\n", func(d *Definition) bool { return d.Color == "" }, []string{"4 warning invalid color (a list)"}},
		{"model ok", "model: claude-sonnet-4-5\n", func(d *Definition) bool { return d.Model == "claude-sonnet-4-5" }, nil},
		{"model inherit", "model: inherit\n", func(d *Definition) bool { return d.Model == "inherit" }, nil},
		{"model number", "model: 4\n", func(d *Definition) bool { return d.Model == "" }, []string{"4 warning \"model\" must be a string"}},
		{"model empty", "model: \"\"\n", func(d *Definition) bool { return d.Model == "" }, []string{"4 warning \"model\" is empty"}},
		{"initialPrompt", "initialPrompt: start here\n", func(d *Definition) bool { return d.InitialPrompt == "start here" }, nil},
		{"initialPrompt bad", "initialPrompt: [a]\n", func(d *Definition) bool { return d.InitialPrompt == "" }, []string{"4 warning \"initialPrompt\" must be a string"}},
		{"omitInstructions", "omitInstructions: true\n", func(d *Definition) bool { return d.OmitInstructions }, nil},
		{"omitClaudeMd", "omitClaudeMd: true\n", func(d *Definition) bool { return d.OmitInstructions }, nil},
		{"skills string", "skills: tdd, review\n", func(d *Definition) bool { return cmp.Equal(d.Skills, []string{"tdd", "review"}) }, nil},
		{"skills list", "skills:\n  - tdd\n  - 5\n", func(d *Definition) bool { return cmp.Equal(d.Skills, []string{"tdd"}) }, []string{"4 warning skills entry 5 is not a string"}},
		{"skills bad", "skills: {a: 1}\n", func(d *Definition) bool { return d.Skills == nil }, []string{"4 warning \"skills\" must be"}},
		{"requiredMcpServers", "requiredMcpServers: [github, db]\n", func(d *Definition) bool { return cmp.Equal(d.RequiredMCPServers, []string{"github", "db"}) }, nil},
		{"mcpServers names and inline", "mcpServers:\n  - github\n  - local:\n      command: node\n      args: [srv.js]\n  - 3\n",
			func(d *Definition) bool {
				return len(d.MCPServers) == 2 && string(d.MCPServers[0]) == `"github"` && string(d.MCPServers[1]) == `{"local":{"args":["srv.js"],"command":"node"}}`
			}, []string{"4 warning mcpServers entry 3"}},
		{"mcpServers mapping", "mcpServers:\n  b: {command: x}\n  a: {command: y}\n", func(d *Definition) bool {
			return len(d.MCPServers) == 2 && string(d.MCPServers[0]) == `{"a":{"command":"y"}}`
		}, nil},
		{"mcpServers bad", "mcpServers: 3\n", func(d *Definition) bool { return d.MCPServers == nil }, []string{"4 warning \"mcpServers\" must be"}},
		{"hooks", "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo hi\n", func(d *Definition) bool {
			return string(d.Hooks) == `{"Stop":[{"hooks":[{"command":"echo hi","type":"command"}]}]}`
		}, nil},
		{"hooks bad", "hooks: run.sh\n", func(d *Definition) bool { return d.Hooks == nil }, []string{"4 warning \"hooks\" must be a mapping"}},
		{"duplicate key last wins", "model: opus\nmodel: haiku\n", func(d *Definition) bool { return d.Model == "haiku" }, []string{"5 warning key \"model\" is repeated (first on line 4)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := ParseFile("a.md", md("name: a\ndescription: d\n"+tt.front), SourceProject)
			if def == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			if !tt.check(def) {
				got, _ := json.Marshal(def)
				t.Errorf("unexpected definition: %s", got)
			}
			checkDiags(t, diags, tt.diags)
		})
	}
}

func TestNameAndDescription(t *testing.T) {
	long := strings.Repeat("x", 257)
	tests := []struct {
		name     string
		file     string
		front    string
		wantName string // "" = not loaded
		wantDesc string
		diags    []string
	}{
		{name: "plain", front: "name: rev\ndescription: Reviews\n", wantName: "rev", wantDesc: "Reviews"},
		{name: "spaces and capitals kept", front: "name: Probe Eight Agent\ndescription: d\n", wantName: "Probe Eight Agent", wantDesc: "d"},
		{name: "unicode", front: "name: prüfer-x\ndescription: d\n", wantName: "prüfer-x", wantDesc: "d"},
		// Issue 9: a name becomes a directory name (agent memory), so
		// none may leave or add a directory.
		{name: "slash", front: "name: prüfer/x\ndescription: d\n", diags: []string{"2 error path separator"}},
		{name: "dotdot", front: "name: \"..\"\ndescription: d\n", diags: []string{"2 error invalid name \"..\""}},
		{name: "dot", front: "name: .\ndescription: d\n", diags: []string{"2 error directory"}},
		{name: "backslash", front: "name: 'a\\b'\ndescription: d\n", diags: []string{"2 error path separator"}},
		{name: "climb", front: "name: ../../.config/cadre\ndescription: d\n", diags: []string{"2 error path separator"}},
		{name: "control character", front: "name: \"a\\tb\"\ndescription: d\n", diags: []string{"2 error control character"}},
		{name: "dots inside are fine", front: "name: a..b.c\ndescription: d\n", wantName: "a..b.c", wantDesc: "d"},
		{name: "missing name uses file name", file: "dir/helper.md", front: "description: d\n", wantName: "helper", wantDesc: "d", diags: []string{"1 warning has no \"name\"; loaded as \"helper\""}},
		{name: "null name", file: "helper.md", front: "name:\ndescription: d\n", wantName: "helper", wantDesc: "d", diags: []string{"1 warning has no \"name\""}},
		{name: "empty name", file: "helper.md", front: "name: \"\"\ndescription: d\n", wantName: "helper", wantDesc: "d", diags: []string{"1 warning has no \"name\""}},
		{name: "number name", front: "name: 123\ndescription: d\n", wantName: "123", wantDesc: "d", diags: []string{"2 warning not a string; using \"123\""}},
		{name: "list name", file: "h.md", front: "name: [a]\ndescription: d\n", wantName: "h", wantDesc: "d", diags: []string{"2 warning must be a string, not a list"}},
		{name: "leading dash", front: "name: -x\ndescription: d\n", diags: []string{"2 error must not start with \"-\""}},
		{name: "too long", front: "name: " + long + "\ndescription: d\n", diags: []string{"2 error longer than 256"}},
		{name: "colon", front: "name: \"a:b\"\ndescription: d\n", diags: []string{"2 error reserved for plugin namespaces"}},
		{name: "fullwidth colon", front: "name: a：b\ndescription: d\n", diags: []string{"2 error reserved"}},
		{name: "capitalised keys are not keys", front: "Name: x\nDescription: d\n", file: "cap.md", diags: []string{"1 warning has no \"name\"", "1 error has no \"description\"", "2 warning unknown key \"Name\" (did you mean \"name\"?)", "3 warning unknown key \"Description\" (did you mean \"description\"?)"}},
		{name: "missing description", front: "name: x\n", diags: []string{"1 error has no \"description\""}},
		{name: "empty description", front: "name: x\ndescription: \"\"\n", diags: []string{"3 error non-empty string"}},
		{name: "number description", front: "name: x\ndescription: 5\n", diags: []string{"3 error non-empty string (got number)"}},
		{name: "whitespace description kept", front: "name: x\ndescription: \"   \"\n", wantName: "x", wantDesc: "   "},
		{name: "literal backslash n", front: "name: x\ndescription: one\\ntwo\n", wantName: "x", wantDesc: "one\ntwo"},
		{name: "escaped backslash n too", front: "name: x\ndescription: \"a\\\\nb\"\n", wantName: "x", wantDesc: "a\nb"},
		{name: "block scalar keeps final newline", front: "name: x\ndescription: |\n  line one\n  line two\n", wantName: "x", wantDesc: "line one\nline two\n"},
		{name: "folded scalar", front: "name: x\ndescription: >\n  line one\n  line two\n", wantName: "x", wantDesc: "line one line two\n"},
		{name: "comment stripped", front: "name: x  # the name\ndescription: d\n", wantName: "x", wantDesc: "d"},
		{name: "not a mapping", front: "- a\n- b\n", diags: []string{"2 error not a mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "a.md"
			}
			def, diags := ParseFile(file, md(tt.front), SourceProject)
			checkDiags(t, diags, tt.diags)
			if tt.wantName == "" {
				if def != nil {
					t.Fatalf("loaded as %q, want not loaded", def.Name)
				}
				return
			}
			if def == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			if def.Name != tt.wantName || def.Description != tt.wantDesc {
				t.Errorf("got %q / %q, want %q / %q", def.Name, def.Description, tt.wantName, tt.wantDesc)
			}
			if def.Body != "You are a test agent." {
				t.Errorf("body %q", def.Body)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name    string
		front   string
		tools   []string
		dis     []string
		refused bool
		diags   []string
	}{
		{name: "unknown no hint", front: "category: dev\n", tools: nil, diags: []string{"4 warning unknown key \"category\"; ignored"}},
		{name: "case hint", front: "Model: opus\n", diags: []string{"4 warning unknown key \"Model\" (did you mean \"model\"?)"}},
		{name: "kebab hint", front: "permission-mode: plan\n", diags: []string{"4 warning (did you mean \"permissionMode\"?)"}},
		{name: "snake hint", front: "max_turns: 3\n", diags: []string{"4 warning (did you mean \"maxTurns\"?)"}},
		{name: "typo hint", front: "descripton2: x\nmodle: opus\n", diags: []string{"4 warning unknown key \"descripton2\" (did you mean \"description\"?)", "5 warning unknown key \"modle\" (did you mean \"model\"?)"}},
		{name: "allowedTools narrows", front: "allowedTools: Read, Grep\n", tools: []string{"Read", "Grep"}, diags: []string{"4 warning unknown key \"allowedTools\" (did you mean \"tools\"?); used as the tools list"}},
		{name: "allowed-tools narrows", front: "allowed-tools: [Read]\n", tools: []string{"Read"}, diags: []string{"4 warning used as the tools list"}},
		{name: "tool narrows", front: "tool: Bash\n", tools: []string{"Bash"}, diags: []string{"4 warning used as the tools list"}},
		{name: "alias with tools present", front: "tools: Read\nallowedTools: Read, Bash\n", tools: []string{"Read"}, diags: []string{"5 warning ignored because \"tools\" is set"}},
		{name: "two tool aliases", front: "tool: Read\nallowed_tools: Bash\n", tools: []string{"Read"}, diags: []string{"4 warning used as the tools list", "5 warning ignored because \"tool\" is set"}},
		{name: "disallowed aliases add up", front: "disallowedTools: Bash\ndisallowed_tools: [Write]\ndeniedTools: Edit\n", dis: []string{"Bash", "Write", "Edit"}, diags: []string{"5 warning entries are denied too", "6 warning entries are denied too"}},
		{name: "bad disallowed alias refuses the agent", front: "disallowed-tools: {a: 1}\n", refused: true, diags: []string{"4 warning entries are denied too", "4 error \"disallowed-tools\" must be a string or a list"}},
		{name: "empty alias gives none", front: "allowedTools: []\n", tools: []string{}, diags: []string{"4 warning used as the tools list", "4 warning no tools"}},
		{name: "disallowed alias", front: "disallowed-tools: Bash\n", dis: []string{"Bash"}, diags: []string{"4 warning entries are denied too"}},
		{name: "hook event at top level", front: "PreToolUse: x\n", diags: []string{"4 warning hook events belong under \"hooks:\""}},
		{name: "claude-only key", front: "observer: true\n", diags: []string{"4 warning Claude Code setting cadre does not apply"}},
		{name: "tiny autoCompactWindow", front: "autoCompactWindow: 5\n", diags: []string{"4 warning invalid autoCompactWindow 5; ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := ParseFile("a.md", md("name: a\ndescription: d\n"+tt.front), SourceProject)
			checkDiags(t, diags, tt.diags)
			if tt.refused {
				if def != nil {
					t.Fatal("loaded, want refused")
				}
				return
			}
			if def == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			if diff := cmp.Diff(tt.tools, raws(def.Tools)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dis, raws(def.DisallowedTools)); diff != "" {
				t.Errorf("disallowedTools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	for k, want := range map[string]string{
		"Tools": "tools", "disallowed_tools": "disallowedTools", "effrot": "effort", "colour": "color",
		"category": "", "level": "", "thinking-level": "", "x": "", "memroy": "memory",
		"initial_prompt": "initialPrompt", "mcp-servers": "mcpServers",
	} {
		if got := suggest(k); got != want {
			t.Errorf("suggest(%q) = %q, want %q", k, got, want)
		}
	}
}

func TestFrontmatterShapes(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		desc  string // "" = not loaded
		body  string
		diags []string
	}{
		{name: "lf", data: "---\nname: a\ndescription: d\n---\nbody\n", desc: "d", body: "body"},
		{name: "crlf", data: "---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\nmore\r\n", desc: "d", body: "body\nmore"},
		{name: "bom", data: "\uFEFF---\nname: a\ndescription: d\n---\nbody", desc: "d", body: "body"},
		{name: "no final newline", data: "---\nname: a\ndescription: d\n---", desc: "d", body: ""},
		{name: "trailing spaces after delimiters", data: "---  \nname: a\ndescription: d\n---   \nbody", desc: "d", body: "body"},
		{name: "tab indented list", data: "---\nname: a\ndescription: d\ntools:\n\t- Read\n---\n", desc: "d", diags: []string{"5 warning indented with a tab"}},
		{name: "tabs inside value", data: "---\nname: a\ndescription: a\tb c \td\t# comment\nmodel:\topus\n---\n", desc: "a\tb c \td"},
		{name: "blank first line", data: "\n---\nname: a\ndescription: d\n---\n", diags: []string{"2 warning must start with \"---\" on the first line"}},
		{name: "no frontmatter", data: "# Just docs\n", diags: nil},
		{name: "unclosed", data: "---\nname: a\ndescription: d\n", diags: []string{"1 warning never closed"}},
		{name: "dash inside a line", data: "---\nname: a\ndescription: before---after\nmodel: opus\n---\nbody", desc: "before---after", body: "body", diags: []string{"3 warning would end the frontmatter in Claude Code"}},
		{name: "dash inside a line, no closing line", data: "---\nname: a\ndescription: before---after\nbody", desc: "before", body: "after\nbody", diags: []string{"3 warning put \"---\" on a line of its own"}},
		{name: "empty frontmatter", data: "---\n---\nbody", diags: []string{"1 warning has no \"name\"", "1 error has no \"description\""}},
		{name: "fallback one-line description", data: "---\nname: a\ndescription: Use this when: things happen. <example>user: hi</example>\ntools: Read\n---\n",
			desc: "Use this when: things happen. <example>user: hi</example>", diags: []string{"3 warning not strict YAML"}},
		{name: "fallback keeps backslashes and hashes", data: "---\nname: a\ndescription: Note: keep # this \\d text\\nnext\n---\n",
			desc: "Note: keep # this \\d text\nnext", diags: []string{"3 warning not strict YAML"}},
		{name: "fallback never makes example lines keys", data: "---\nname: a\ndescription: Use it: always.\\n<example>\nuser: \"do x\"\nassistant: \"ok\"\ntools: Read\n---\n",
			desc: "Use it: always.\n<example>", diags: []string{"3 warning not strict YAML", "4 warning example text", "5 warning example text"}},
		{name: "fallback with tabs", data: "---\nname: a\ndescription: x: y\ntools:\n\t- Read\n---\n", desc: "x: y", diags: []string{"3 warning not strict YAML"}},
		{name: "tab-indented continuation", data: "---\nname: a\ndescription: x\n\ty\n---\n", desc: "x y", diags: []string{"4 warning indented with a tab"}},
		{name: "anchor without alias is fine", data: "---\nname: a\ndescription: &d text\n---\n", desc: "text"},
		{name: "aliases refused", data: "---\nname: a\ndescription: d\nhooks:\n  x0: &a0 [lol, lol, lol]\n  x1: &a1 [*a0, *a0, *a0]\n  x2: [*a1, *a1, *a1]\n---\n", diags: []string{"6 error YAML aliases (*name) are not supported"}},
		{name: "frontmatter too large", data: "---\nname: a\ndescription: d\nhooks:\n" + strings.Repeat("  k: v\n", 6000) + "---\n", diags: []string{"2 error over the 32 KiB limit"}},
		{name: "too many lines", data: "---\nname: a\ndescription: d\nhooks:\n" + strings.Repeat("  - x\n  - [y]\n", 300) + "---\n", diags: []string{"2 error over the limit of 500"}},
		{name: "brackets too deep", data: "---\nname: a\ndescription: d\nhooks: {a: " + strings.Repeat("[", 100) + "}\n---\n", desc: "d", diags: []string{"4 warning brackets nest more than 64 deep", "4 warning \"hooks\" must be a mapping"}},
		{name: "fallback fails", data: "---\nname: a\ndescription: one: two\n<commentary>\nmore\n---\n", diags: []string{"4 error (\"<commentary>\") is neither"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := ParseFile("a.md", []byte(tt.data), SourceProject)
			checkDiags(t, diags, tt.diags)
			if tt.desc == "" {
				if def != nil {
					t.Fatalf("loaded, want not loaded")
				}
				return
			}
			if def == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			if def.Description != tt.desc || def.Body != tt.body {
				t.Errorf("got %q / %q, want %q / %q", def.Description, def.Body, tt.desc, tt.body)
			}
		})
	}
}

func TestPluginStripping(t *testing.T) {
	data := md("name: rev\ndescription: d\npermissionMode: bypassPermissions\nhooks:\n  Stop: []\nmcpServers: [github]\nmodel: haiku\n")
	def, diags := ParseFile("p.md", data, SourcePlugin)
	if def == nil {
		t.Fatalf("not loaded: %v", diags)
	}
	if def.PermissionMode != "" || def.Hooks != nil || def.MCPServers != nil || def.Model != "haiku" {
		t.Errorf("plugin fields not stripped: %+v", def)
	}
	checkDiags(t, diags, []string{
		"4 warning plugin agents cannot set \"permissionMode\"",
		"5 warning plugin agents cannot set \"hooks\"",
		"7 warning plugin agents cannot set \"mcpServers\"",
	})
}

func TestParseJSON(t *testing.T) {
	in := `{
  "reviewer": {
    "description": "Reviews diffs",
    "tools": ["Read", "Bash(git diff:*)"],
    "prompt": "  You review.  ",
    "maxTurns": 5,
    "background": true
  },
  "bad": {"description": ""},
  "weird": {"description": "w", "effort": "huge", "name": "other", "allowedTools": "Read"},
  "notobj": 3,
  "reviewer": {"description": "Second", "model": "opus"}
}`
	defs, diags, err := ParseJSON("--agents", []byte(in), SourceFlag)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"reviewer", "weird", "reviewer"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	r := defs[0]
	if r.Body != "You review." || r.MaxTurns != 5 || !r.Background || ToolsNote(r) != "Read, Bash(git diff:*)" || r.Source != SourceFlag || r.Path != "--agents" {
		t.Errorf("reviewer: %+v", r)
	}
	if defs[1].Effort != "" || raws(defs[1].Tools)[0] != "Read" {
		t.Errorf("weird: %+v", defs[1])
	}
	checkDiags(t, diags, []string{
		"9 error non-empty string",
		"10 warning \"name\" differs from the object key",
		"10 warning used as the tools list",
		"10 warning invalid effort",
		"11 error must be a JSON object",
		"12 warning defined twice (first on line 2)",
	})
	for _, bad := range []string{``, `[]`, `{"a": }`, `{"a": {}} x`, `"str"`} {
		if _, _, err := ParseJSON("--agents", []byte(bad), SourceFlag); err == nil {
			t.Errorf("ParseJSON(%q): no error", bad)
		}
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{File: "a.md", Line: 3, Severity: SeverityError, Message: "bad"}
	if got := d.String(); got != "a.md:3: error: bad" {
		t.Errorf("String = %q", got)
	}
	d.Line = 0
	if got := d.String(); got != "a.md: error: bad" {
		t.Errorf("String = %q", got)
	}
}
