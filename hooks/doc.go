// Package hooks runs the user's hook commands at fixed points of a run,
// compatible with Claude Code's hooks so existing scripts carry over
// unchanged (S-14).
//
// # Configuration
//
// The `hooks` key of a settings file maps an event to matcher groups:
//
//	{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
//	    {"type": "command", "command": "./guard.sh", "timeout": 30}]}]}}
//
// Parse reads one such value, Merge those of several settings files
// (lowest precedence first; hooks add up, and managed settings can allow
// only their own), ParseAgent the `hooks` of an agent's frontmatter, where
// Stop means the agent's own SubagentStop. A matcher is tested against the
// event's matcher field (the tool name for tool events, the agent type for
// SubagentStart/Stop, the source for SessionStart…): "" or "*" matches
// everything, a value of letters, digits, "_" and "|" is a list of exact
// names ("Edit|Write"), anything else a regular expression searched for in
// the value ("mcp__.*").
//
// # Running
//
// One Dispatcher per Runtime holds the settings' hooks and the hooks
// registered later: an SDK's callbacks (Add) and an agent's frontmatter
// hooks for as long as that agent runs (AddForAgent, removed by the
// returned func on every exit path). ForAgent binds it to one agent; the
// binding fills in what every input carries, and is what the loop calls
// (loop.Config.Hooks). Every agent kind fires through the same dispatcher
// (S-14.3).
//
// The hooks that match an event run in parallel, each as /bin/sh -c in its
// own process group, in the agent's working directory, with the input as
// JSON on stdin and CLAUDE_PROJECT_DIR and CADRE_PROJECT_DIR set. Each has
// a timeout (60 s by default); at the timeout, or when the run ends, the
// whole process group is killed, so a hook that hangs never hangs the run.
// Identical commands matching one event run once; output is capped.
//
// # Answers
//
// Exit 0: stdout that is a JSON object is read as Claude Code's hook
// output (continue, stopReason, suppressOutput, systemMessage,
// decision/reason, hookSpecificOutput with permissionDecision,
// permissionDecisionReason, updatedInput, additionalContext, and
// PermissionRequest's decision); other stdout is context for
// UserPromptSubmit and SessionStart and the path for WorktreeCreate. Exit
// 2: the hook blocks, and its stderr is the feedback the model reads.
// Other exit codes are errors that block nothing; observers see them.
// Outcome combines the answers of all hooks of an event.
package hooks
