#!/bin/bash
# PostToolUse hook (matcher "Edit|Write"): format the Go file that was just
# written, in the style Claude Code users publish.
file_path=$(jq -r '.tool_input.file_path // empty')
if [[ "$file_path" == *.go && -f "$file_path" ]]; then
  gofmt -w "$file_path"
fi
exit 0
