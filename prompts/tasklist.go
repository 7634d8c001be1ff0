package prompts

import "fmt"

// The descriptions of the team task list tools (issue 25), shown only
// with teams on.
const (
	// TaskCreateTool describes TaskCreate.
	TaskCreateTool = `Adds a task to your team's shared task list. It starts pending with no owner. Give a short imperative subject, a description of what done means, and activeForm (the subject in the present continuous, shown while it is worked on). Use it to split multi-step work so teammates can claim the parts.`
	// TaskGetTool describes TaskGet.
	TaskGetTool = `Returns one task of the team's task list by id: subject, description, status, and the tasks it blocks and is blocked by.`
	// TaskListTool describes TaskList.
	TaskListTool = `Lists every task of the team's task list with its id, subject, status, owner and the open tasks blocking it. Call it after finishing a task to find the next one: prefer the lowest id that is pending, unowned and not blocked.`
	// TaskUpdateTool describes TaskUpdate.
	TaskUpdateTool = `Changes a task of the team's task list. Set status in_progress before you start a task (without owner it is claimed for you; a task another agent owns cannot be claimed), completed only when it is fully done, deleted to remove it. owner assigns it to a teammate by name. addBlocks / addBlockedBy add dependencies (kept on both tasks). metadata keys are merged; a null value removes a key.`
)

// TaskHookBlocked is TaskCreate's or TaskUpdate's error when a
// TaskCreated or TaskCompleted hook refused it.
func TaskHookBlocked(event, id, reason string) string {
	return fmt.Sprintf("A %s hook refused task #%s: %s", event, id, reason)
}

// TaskListUnavailable is the error of a task list tool that cannot open
// the team's list.
func TaskListUnavailable(err string) string {
	return "The team's task list is not available: " + err
}

// TaskClaimed starts the turn of an idle teammate that claimed task id
// from the team's list.
func TaskClaimed(id, subject, description string) string {
	s := fmt.Sprintf("You claimed task #%s from the team's task list: %s", id, subject)
	if description != "" {
		s += "\n\n" + description
	}
	return s + "\n\nWork on it now; set it completed with TaskUpdate when it is done, then check TaskList for the next one."
}

// TasksReleased tells the lead which open tasks of a teammate that
// stopped went back to pending and unowned.
func TasksReleased(teammate string, tasks []string) string {
	s := fmt.Sprintf("Teammate %s stopped; its open tasks are pending and unowned again:", teammate)
	for _, t := range tasks {
		s += "\n- " + t
	}
	return s
}

// TeammateKeepWorking starts the next turn of a teammate whose
// TeammateIdle hook kept it from going idle.
func TeammateKeepWorking(reason string) string {
	return "A TeammateIdle hook keeps you working instead of going idle: " + reason
}
