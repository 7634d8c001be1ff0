package agentdef_test

import (
	"fmt"

	"github.com/cadre-dev/cadre/agentdef"
)

func ExampleParseFile() {
	file := []byte(`---
name: reviewer
description: Reviews a diff for bugs
tools: Read, Grep, Bash(git diff:*)
allowed-tools: Write
modle: opus
---
You review diffs.
`)
	def, diags := agentdef.ParseFile("reviewer.md", file, agentdef.SourceProject)
	fmt.Println(def.Name, "|", agentdef.ToolsNote(def), "|", def.Body)
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// reviewer | Read, Grep, Bash(git diff:*) | You review diffs.
	// reviewer.md:5: warning: unknown key "allowed-tools" (did you mean "tools"?); ignored because "tools" is set
	// reviewer.md:6: warning: unknown key "modle" (did you mean "model"?); ignored
}

func ExampleListing() {
	defs := agentdef.Builtins()
	fmt.Print(agentdef.Listing(defs[2:3]))
	// Output:
	// - Plan: A read-only software architect that studies the codebase and returns a step-by-step implementation plan, the files it touches and the trade-offs involved. Use it to think a change through before anyone edits code. (Tools: All tools except Agent, ExitPlanMode, Edit, MultiEdit, Write, NotebookEdit)
}
