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
	// - Plan: Read-only architect: a step-by-step implementation plan with its files and trade-offs. (Tools: All tools except Agent, ExitPlanMode, Edit, MultiEdit, Write, NotebookEdit)
}
