package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// protectedTargets are paths whose change could grant permissions or run
// code later (relative to the project, or under $HOME).
var protectedTargets = []string{
	".mcp.json", "CLAUDE.md", "AGENTS.md", "CLAUDE.local.md", ".claude/settings.json", ".claude/settings.local.json",
	".claude/agents/x.md", ".cadre/settings.json", ".cadre/hooks/h.sh", ".git/config", ".git/hooks/pre-commit",
	"$HOME/.claude/settings.json", "$HOME/.claude.json", "$HOME/.config/cadre/settings.json",
}

// TestProtectedFilesAsk: edits of protected files through Write, Edit,
// MultiEdit, NotebookEdit and Bash ask in every mode but bypassPermissions
// — acceptEdits and a whole-tool allow rule included — and are denied
// where no one can ask (dontAsk, background agents).
func TestProtectedFilesAsk(t *testing.T) {
	f := newFixture(t)
	var cases []checkCase
	abs := func(p string) string {
		if filepath.IsAbs(f.expand(p)) {
			return p
		}
		return "$CWD/" + p
	}
	for _, p := range protectedTargets {
		inputs := map[string]string{
			"Write":        fileIn("file_path", abs(p)),
			"Edit":         fileIn("file_path", abs(p)),
			"MultiEdit":    fileIn("file_path", abs(p)),
			"NotebookEdit": fileIn("notebook_path", abs(p)),
		}
		bash := []string{
			"echo '{}' > " + abs(p), "echo x >> " + abs(p), "echo x | tee " + abs(p), "cp a.txt " + abs(p),
			"mv a.txt " + abs(p), "sed -i s/a/b/ " + abs(p), "rm " + abs(p), "dd if=a.txt of=" + abs(p),
			"python3 gen.py " + abs(p), "touch " + abs(p),
		}
		for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeDontAsk, ModeBypassPermissions, ModePlan} {
			want := Ask
			switch mode {
			case ModeDontAsk, ModePlan:
				want = Deny
			case ModeBypassPermissions:
				want = Allow
			}
			for tl, in := range inputs {
				cases = append(cases, checkCase{name: "protected " + tl, mode: mode, allow: []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}, tool: tl, input: in, want: want})
			}
			for _, cmd := range bash {
				cases = append(cases, checkCase{name: "protected Bash", mode: mode, allow: []string{"Bash"}, input: bashIn(cmd), want: want})
			}
		}
	}
	// The same edits elsewhere in the project run in acceptEdits; agent
	// memory and worktrees are ordinary files; reads are not edits.
	for _, p := range []string{"src/CLAUDE.md", "docs.md", ".claude/agent-memory/x/MEMORY.md", ".cadre/worktrees/w/.mcp.json", "$HOME/.claude/agent-memory/x/MEMORY.md"} {
		cases = append(cases, checkCase{name: "ordinary file", mode: ModeAcceptEdits, dirs: []string{"$HOME/.claude/agent-memory"}, tool: "Write", input: fileIn("file_path", abs(p)), want: Allow})
	}
	for _, cmd := range []string{"echo x > notes.txt", "cp a.txt b.txt", "cat .mcp.json", "git add .mcp.json", "grep x CLAUDE.md"} {
		cases = append(cases, checkCase{name: "ordinary Bash", mode: ModeAcceptEdits, allow: []string{"Bash"}, input: bashIn(cmd), want: Allow})
	}
	// An Edit rule that names the path allows it.
	cases = append(cases,
		checkCase{name: "named by an Edit rule", mode: ModeAcceptEdits, allow: []string{"Edit(./.mcp.json)"}, tool: "Write", input: fileIn("file_path", "$CWD/.mcp.json"), want: Allow},
		checkCase{name: "named by an Edit rule, Bash", mode: ModeAcceptEdits, allow: []string{"Bash", "Edit(./.mcp.json)"}, input: bashIn("echo '{}' > .mcp.json"), want: Allow},
	)
	runCases(t, f, cases)
}

// TestProtectedFilesDeniedInBackground: a background agent cannot ask,
// so a protected edit is denied in acceptEdits.
func TestProtectedFilesDeniedInBackground(t *testing.T) {
	f := newFixture(t)
	s := newSession(t, f, ModeAcceptEdits, nil, true, nil)
	for _, req := range []Request{
		{Tool: "Write", Input: json.RawMessage(fileIn("file_path", filepath.Join(f.cwd, ".mcp.json")))},
		{Tool: "Edit", Input: json.RawMessage(fileIn("file_path", filepath.Join(f.cwd, ".claude", "settings.json")))},
		{Tool: "Bash", Input: json.RawMessage(bashIn("echo x > AGENTS.md"))},
	} {
		out, err := s.Authorize(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if out.Allowed || out.Message == "" {
			t.Errorf("%s %s in the background: allowed=%v (%s), want a denial", req.Tool, req.Input, out.Allowed, out.Message)
		}
	}
	// An ordinary edit still runs.
	out, err := s.Authorize(context.Background(), Request{Tool: "Write", Input: json.RawMessage(fileIn("file_path", filepath.Join(f.cwd, "notes.md")))})
	if err != nil || !out.Allowed {
		t.Fatalf("ordinary write in the background: %+v %v", out, err)
	}
}
