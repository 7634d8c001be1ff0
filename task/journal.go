package task

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
)

// Notification is how an ended background task reaches the agent that
// waits for it (S-7.3): written to the journal before it is queued, marked
// delivered once the request carrying it was answered, so it is delivered
// exactly once even across a crash (S-15.3).
type Notification struct {
	// Seq numbers the notifications of a session, in completion order.
	Seq int64 `json:"seq"`
	// To is the agent it is for ("main" for the main agent).
	To     string `json:"to"`
	TaskID string `json:"task_id"`
	// ToolUseID is the Agent call that started the task.
	ToolUseID   string `json:"tool_use_id"`
	AgentType   string `json:"agent_type,omitempty"`
	Description string `json:"description,omitempty"`
	Status      Status `json:"status"`
	OutputFile  string `json:"output_file,omitempty"`
	// Summary is a one-line account; Text is what the model reads.
	Summary string `json:"summary"`
	Text    string `json:"text"`
}

// record is one line of the journal.
type record struct {
	Op string `json:"op"`
	// Start (a background task began) and End (it ended).
	Task *Info `json:"task,omitempty"`
	// Notify.
	Note *Notification `json:"note,omitempty"`
	// Delivered: the notification numbered Seq.
	Seq int64 `json:"seq,omitempty"`
}

// Journal operations.
const (
	opStart     = "start"
	opEnd       = "end"
	opNotify    = "notify"
	opDelivered = "delivered"
)

// Journal is the session's task journal, tasks.jsonl: one JSON object a
// line, appended with one write each before the method returns (a process
// killed mid-run loses at most the line being written; a torn last line
// is ignored on replay). Records are written, not synced: they survive
// the process (kill -9), but a machine crash can lose the last of them. A
// write that fails is returned; the engine reports it on the run's
// Result and stream (EventWarning), since exactly-once delivery rests on
// these records. Safe for concurrent use.
type Journal struct {
	mu   sync.Mutex
	path string
	file *appendFile // nil in memory
	seq  int64
}

// Replay is what a journal held when it was opened: notifications that
// were written but never delivered, and background tasks that started but
// never ended (the process died under them), each in journal order.
type Replay struct {
	Undelivered []Notification
	Interrupted []Info
	// Ended are the background tasks that ended, each as its last run
	// ended, in journal order: they can be continued (S-8.2).
	Ended []Info
}

// OpenJournal opens (creating it and its directory if needed) the journal
// at path and replays what it holds.
func OpenJournal(path string) (*Journal, Replay, error) {
	rep, last, err := replay(path)
	if err != nil {
		return nil, Replay{}, err
	}
	file, err := openAppendFile("task journal", path)
	if err != nil {
		return nil, Replay{}, err
	}
	return &Journal{path: path, file: file, seq: last}, rep, nil
}

// replay reads the journal at path (missing is empty) and returns what
// is left open in it and the highest notification number used.
func replay(path string) (Replay, int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Replay{}, 0, nil
	}
	if err != nil {
		return Replay{}, 0, fmt.Errorf("task journal: %w", err)
	}
	var (
		notes    []Notification
		tasks    []Info
		ended    = map[string]bool{}
		endInfo  = map[string]*Info{}
		notified = map[string]bool{}
		done     = map[int64]bool{}
		last     int64
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var rec record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue // a torn line: the process died while writing it
		}
		switch rec.Op {
		case opStart:
			if rec.Task != nil {
				tasks = append(tasks, *rec.Task)
				delete(ended, rec.Task.ID)
				delete(notified, rec.Task.ID)
			}
		case opEnd:
			if rec.Task != nil {
				ended[rec.Task.ID] = true
				last := *rec.Task
				endInfo[rec.Task.ID] = &last
			}
		case opNotify:
			if rec.Note != nil {
				notes = append(notes, *rec.Note)
				notified[rec.Note.TaskID] = true
				last = max(last, rec.Note.Seq)
			}
		case opDelivered:
			done[rec.Seq] = true
		}
	}
	var rep Replay
	for _, n := range notes {
		if !done[n.Seq] {
			rep.Undelivered = append(rep.Undelivered, n)
		}
	}
	seen := map[string]bool{}
	for i := len(tasks) - 1; i >= 0; i-- {
		t := tasks[i]
		if seen[t.ID] {
			continue // an earlier run of a resumed agent
		}
		seen[t.ID] = true
		switch {
		case !ended[t.ID] && !notified[t.ID]:
			rep.Interrupted = append(rep.Interrupted, t)
		case ended[t.ID] && endInfo[t.ID] != nil:
			rep.Ended = append(rep.Ended, *endInfo[t.ID])
		}
	}
	slices.Reverse(rep.Interrupted)
	slices.Reverse(rep.Ended)
	return rep, last, nil
}

// MemoryJournal returns a journal that numbers notifications and keeps
// nothing, for a session without transcripts (nothing can be resumed).
func MemoryJournal() *Journal { return &Journal{} }

// Path is the journal's file ("" in memory).
func (j *Journal) Path() string { return j.path }

func (j *Journal) write(rec record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file == nil {
		return nil // in memory: numbers notifications, keeps nothing
	}
	return j.file.append(rec, false)
}

// Started records that a background task began.
func (j *Journal) Started(info Info) error { return j.write(record{Op: opStart, Task: &info}) }

// Ended records that a background task ended.
func (j *Journal) Ended(info Info) error { return j.write(record{Op: opEnd, Task: &info}) }

// Notify numbers n and records it; it must be called before n is queued
// for delivery.
func (j *Journal) Notify(n *Notification) error {
	j.mu.Lock()
	j.seq++
	n.Seq = j.seq
	j.mu.Unlock()
	return j.write(record{Op: opNotify, Note: n})
}

// Delivered records that the notification seq reached its agent.
func (j *Journal) Delivered(seq int64) error { return j.write(record{Op: opDelivered, Seq: seq}) }

// Close closes the file; later writes fail.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file == nil {
		return nil
	}
	return j.file.close()
}
