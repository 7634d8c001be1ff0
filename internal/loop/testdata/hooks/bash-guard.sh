#!/bin/bash
# PreToolUse hook (matcher "Bash"): refuse destructive commands, in the
# style Claude Code users publish. Exit 2 blocks the call; stderr goes to
# the model.
input=$(cat)
command=$(echo "$input" | jq -r '.tool_input.command // empty')
if echo "$command" | grep -Eq '(^|[;&| ])rm +-[a-zA-Z]*r[a-zA-Z]*f'; then
  echo "Blocked: 'rm -rf' is not allowed here. Delete specific files instead." >&2
  exit 2
fi
exit 0
