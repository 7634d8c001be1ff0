#!/bin/sh
# PreToolUse hook of the agent-teams fixture: a Bash command that contains
# "rm -rf" is refused (exit 2, reason on stderr); anything else passes.
# It needs CLAUDE_PLUGIN_ROOT, as Claude Code sets it for plugin hooks.
if [ ! -f "$CLAUDE_PLUGIN_ROOT/.claude-plugin/plugin.json" ]; then
	echo "CLAUDE_PLUGIN_ROOT is not this plugin's directory" >&2
	exit 1
fi
input=$(cat)
case "$input" in
*"rm -rf"*)
	echo "agent-teams guard: rm -rf is not allowed" >&2
	exit 2
	;;
esac
exit 0
