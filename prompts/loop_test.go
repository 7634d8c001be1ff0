package prompts

import (
	"errors"
	"strings"
	"testing"
)

func TestLoopTextsGolden(t *testing.T) {
	t.Parallel()
	golden(t, "loop_texts", strings.Join([]string{
		ToolInputNotJSON("Read", `{"file_path": "a.go"`),
		NoSuchTool("Wirte", []string{"Read", "Write", "Bash"}),
		NoSuchTool("Read", nil),
		ToolDenied("Bash"),
		ToolCrashed("Glob", errors.New("index out of range [3] with length 3")),
		ToolFailedSilently,
		ToolNoOutput,
		MaxTurnsReached(12),
	}, "\n"))
}

func TestSpawnPathTextsGolden(t *testing.T) {
	t.Parallel()
	golden(t, "spawn_path_texts", strings.Join([]string{
		SubagentCrashed("nil map write"),
		AgentEndedWithoutResult(),
		AgentStoppedEarly(),
		DeniedCall("Bash", `{"command":"rm -rf build"}`, "no rule allows it and a background agent cannot ask"),
		NoTools("db-reader", []string{DroppedInteractiveOnly, DroppedTaskTools, DroppedInBackground, DroppedNotInTools,
			DroppedNoMCPServer, DroppedDisallowed("Bash"), DroppedByRule("WebFetch"), DroppedNestingLimit(3, 3)}),
	}, "\n"))
}
