// Package tasklist is a team's shared task list (S-11, issue 25 point 4):
// tasks with decimal ids, a status, an owner and dependencies kept both
// ways, stored one JSON file per task in a directory of the state
// directory, in Claude Code's layout (<id>.json, .highwatermark, .lock).
//
// Every change runs under an exclusive file lock on the directory's .lock
// and writes through a temporary file renamed over the task's, so two
// processes (or two Stores in one process) on one directory never lose an
// update, and a claim never gives one task to two owners.
package tasklist

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Status is where a task stands.
type Status string

// The statuses of a task. Deleted is only ever asked for: a deleted
// task's file is removed.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Deleted    Status = "deleted"
)

// Valid reports whether s is a status a task can be set to.
func (s Status) Valid() bool {
	switch s {
	case Pending, InProgress, Completed, Deleted:
		return true
	}
	return false
}

// Task is one task of a list, as stored and as TaskGet shows it.
type Task struct {
	// ID is the task's decimal id, unique in its list for ever (ids of
	// deleted tasks are not reused).
	ID string `json:"id"`
	// Subject is a short title in the imperative.
	Subject string `json:"subject"`
	// Description says what is to be done.
	Description string `json:"description"`
	// ActiveForm is the subject in the present continuous, shown while
	// the task is in progress.
	ActiveForm string `json:"activeForm,omitempty"`
	// Owner is the name of the agent working on the task; "" is unowned.
	Owner string `json:"owner,omitempty"`
	// Status is pending, in_progress or completed.
	Status Status `json:"status"`
	// Blocks are the tasks that cannot start before this one is done.
	Blocks []string `json:"blocks"`
	// BlockedBy are the tasks this one waits for.
	BlockedBy []string `json:"blockedBy"`
	// Metadata is free-form data the model attached.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// maxTaskFile bounds a task file; a larger one is refused as damaged.
const maxTaskFile = 1 << 20

// ParseTask decodes the task file of task id. Files come from disk, where
// another process or a person may have written anything: a file that is
// not a task of that id, or holds a status or link that cannot be, is an
// error naming the problem.
func ParseTask(id string, data []byte) (Task, error) {
	if len(data) > maxTaskFile {
		return Task{}, fmt.Errorf("task %s: file is %d bytes, more than %d", id, len(data), maxTaskFile)
	}
	var t Task
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&t); err != nil {
		return Task{}, fmt.Errorf("task %s: %w", id, err)
	}
	if dec.More() {
		return Task{}, fmt.Errorf("task %s: data after the task object", id)
	}
	if t.ID != id {
		return Task{}, fmt.Errorf("task %s: file holds id %q", id, t.ID)
	}
	if !ValidID(t.ID) {
		return Task{}, fmt.Errorf("task %q: id is not a decimal number", t.ID)
	}
	switch t.Status {
	case Pending, InProgress, Completed:
	default:
		return Task{}, fmt.Errorf("task %s: status %q is not pending, in_progress or completed", id, t.Status)
	}
	for _, links := range [][]string{t.Blocks, t.BlockedBy} {
		for _, l := range links {
			if !ValidID(l) {
				return Task{}, fmt.Errorf("task %s: link %q is not a task id", id, l)
			}
		}
	}
	if t.Blocks == nil {
		t.Blocks = []string{}
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	return t, nil
}

// ValidID reports whether id is a task id: a decimal number from 1, no
// leading zero, that fits an int64.
func ValidID(id string) bool {
	if id == "" || id[0] == '0' || len(id) > 18 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// num is a valid id's number.
func num(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// sortIDs sorts ids by number.
func sortIDs(ids []string) {
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(num(a), num(b)) })
}

// clone is a deep copy of t.
func (t Task) clone() Task {
	t.Blocks = slices.Clone(t.Blocks)
	t.BlockedBy = slices.Clone(t.BlockedBy)
	if t.Blocks == nil {
		t.Blocks = []string{}
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	if t.Metadata != nil {
		m := make(map[string]any, len(t.Metadata))
		for k, v := range t.Metadata {
			m[k] = v
		}
		t.Metadata = m
	}
	return t
}
