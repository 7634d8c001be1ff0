package cli

import (
	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// taskPending writes system/task_updated with status pending (the Claude
// Agent SDK's task_updated patch) for an Agent call queued behind the
// running cap (issue 29); its task_started follows when it gets a slot.
func (p *streamPrinter) taskPending(ev run.Event) error {
	in := ev.Task
	if in == nil {
		return nil
	}
	return p.write(taskUpdatedJSON{Type: "system", Subtype: "task_updated", TaskID: in.AgentID,
		Patch: taskPatch{Status: task.Pending, Description: in.Description},
		UUID:  uuid.NewString(), SessionID: p.session})
}
