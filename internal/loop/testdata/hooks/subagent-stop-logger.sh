#!/bin/bash
# SubagentStop hook: log which sub-agent finished, with its transcript, in
# the style Claude Code users publish.
input=$(cat)
agent_id=$(echo "$input" | jq -r '.agent_id')
agent_type=$(echo "$input" | jq -r '.agent_type')
transcript=$(echo "$input" | jq -r '.agent_transcript_path')
last=$(echo "$input" | jq -r '.last_assistant_message')
mkdir -p "$CLAUDE_PROJECT_DIR/.claude"
echo "$agent_type $agent_id $transcript: $last" >> "$CLAUDE_PROJECT_DIR/.claude/subagents.log"
