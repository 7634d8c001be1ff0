#!/bin/sh
# PreToolUse hook of the agent-teams fixture: a Bash command that contains
# "rm -rf" is refused (exit 2, reason on stderr); anything else passes.
input=$(cat)
case "$input" in
*"rm -rf"*)
	echo "agent-teams guard: rm -rf is not allowed" >&2
	exit 2
	;;
esac
exit 0
