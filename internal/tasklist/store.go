package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// Environment variables that choose the task list, in the order they
// are read: cadre's own, then Claude Code's.
const (
	EnvListID       = "CADRE_TASK_LIST_ID"
	EnvClaudeListID = "CLAUDE_CODE_TASK_LIST_ID"
)

// Files of a list directory besides the tasks.
const (
	lockFile   = ".lock"
	highWater  = ".highwatermark"
	maxListLen = 128
)

// ErrNotFound is returned for a task id the list does not hold.
var ErrNotFound = errors.New("task not found")

// ClaimedError is returned when an agent starts a task another agent
// owns.
type ClaimedError struct {
	ID    string
	Owner string
}

// Error implements error.
func (e *ClaimedError) Error() string {
	return fmt.Sprintf("task %s is already claimed by %s", e.ID, e.Owner)
}

// ListID chooses the id of the task list a session works: the
// environment's CADRE_TASK_LIST_ID or CLAUDE_CODE_TASK_LIST_ID, else the
// team's name, else "session-" and the first 8 characters of the session
// id. getenv may be nil.
func ListID(getenv func(string) string, team, sessionID string) string {
	if getenv != nil {
		for _, k := range []string{EnvListID, EnvClaudeListID} {
			if v := strings.TrimSpace(getenv(k)); v != "" {
				return v
			}
		}
	}
	if team != "" {
		return team
	}
	return "session-" + sessionID[:min(8, len(sessionID))]
}

// ValidListID reports whether id can name a list directory: letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 128.
func ValidListID(id string) bool {
	if id == "" || len(id) > maxListLen {
		return false
	}
	for i, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !ok && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Dir is the directory of task list listID under the state directory:
// <stateDir>/tasks/<listID>.
func Dir(stateDir, listID string) (string, error) {
	if stateDir == "" {
		return "", errors.New("task list: no state directory")
	}
	if !ValidListID(listID) {
		return "", fmt.Errorf("task list id %q: use letters, digits, '.', '_' and '-' (at most %d)", listID, maxListLen)
	}
	return filepath.Join(stateDir, "tasks", listID), nil
}

// Store is one task list on disk. It is safe for concurrent use, and any
// number of Stores, in this process or others, may share a directory.
type Store struct {
	dir string

	mu      sync.Mutex // serializes this Store's operations; guards changed
	changed chan struct{}
}

// Open opens (creating it if needed) the task list in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open task list %s: %w", dir, err)
	}
	return &Store{dir: dir, changed: make(chan struct{})}, nil
}

// Path is the list's directory.
func (s *Store) Path() string { return s.dir }

// Changed returns a channel closed at the next change this Store makes
// (a task created, updated, claimed, released or deleted). A teammate
// waiting for work waits on it, then calls ClaimNext.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// notify wakes everyone waiting on Changed. s.mu must be held.
func (s *Store) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// locked runs f holding s.mu and the directory's file lock, with the
// list's tasks read fresh from disk; f returns whether it changed any.
func (s *Store) locked(ctx context.Context, f func(l *list) (changed bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lf, err := safefs.OpenNoFollow(filepath.Join(s.dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("task list lock: %w", err)
	}
	defer lf.Close()
	if err := safefs.Lock(ctx, lf, 100*time.Microsecond, 20*time.Millisecond); err != nil {
		return fmt.Errorf("wait for the task list lock of %s: %w", s.dir, err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	l, err := load(s.dir)
	if err != nil {
		return err
	}
	changed, err := f(l)
	if changed {
		s.notify()
	}
	return err
}

// NewTask is what TaskCreate gives.
type NewTask struct {
	Subject     string
	Description string
	ActiveForm  string
	Metadata    map[string]any
}

// Create adds a pending, unowned task with the next id.
func (s *Store) Create(ctx context.Context, n NewTask) (Task, error) {
	if strings.TrimSpace(n.Subject) == "" {
		return Task{}, errors.New("create task: subject is empty")
	}
	var out Task
	err := s.locked(ctx, func(l *list) (bool, error) {
		next := l.high + 1
		for id := range l.tasks {
			next = max(next, num(id)+1)
		}
		t := Task{ID: strconv.FormatInt(next, 10), Subject: n.Subject, Description: n.Description, ActiveForm: n.ActiveForm,
			Status: Pending, Blocks: []string{}, BlockedBy: []string{}}
		for k, v := range n.Metadata {
			if v != nil {
				if t.Metadata == nil {
					t.Metadata = map[string]any{}
				}
				t.Metadata[k] = v
			}
		}
		if err := l.write(t); err != nil {
			return false, err
		}
		if err := l.writeHigh(next); err != nil {
			return true, err
		}
		out = t.clone()
		return true, nil
	})
	return out, err
}

// Get returns task id; ErrNotFound when the list does not hold it.
func (s *Store) Get(ctx context.Context, id string) (Task, error) {
	var out Task
	err := s.locked(ctx, func(l *list) (bool, error) {
		t, ok := l.tasks[id]
		if !ok {
			return false, fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		out = t.clone()
		return false, nil
	})
	return out, err
}

// List returns every task, by id.
func (s *Store) List(ctx context.Context) ([]Task, error) {
	var out []Task
	err := s.locked(ctx, func(l *list) (bool, error) {
		for _, id := range l.ids() {
			out = append(out, l.tasks[id].clone())
		}
		return false, nil
	})
	return out, err
}

// OpenBlockers are the tasks of t.BlockedBy that the list holds and that
// are not completed, given the whole list.
func OpenBlockers(t Task, all []Task) []string {
	out := []string{}
	for _, b := range t.BlockedBy {
		for _, o := range all {
			if o.ID == b && o.Status != Completed {
				out = append(out, b)
				break
			}
		}
	}
	return out
}

// Update is what TaskUpdate changes; nil and empty fields are left alone.
type Update struct {
	Subject     *string
	Description *string
	ActiveForm  *string
	// Owner sets the owner; "" clears it.
	Owner *string
	// Status "" leaves the status; Deleted removes the task.
	Status Status
	// AddBlocks and AddBlockedBy add dependencies, kept both ways.
	AddBlocks    []string
	AddBlockedBy []string
	// Metadata is merged into the task's; a nil value deletes its key.
	Metadata map[string]any
}

// StatusChange is a task's status before and after an update.
type StatusChange struct {
	From Status `json:"from"`
	To   Status `json:"to"`
}

// Result is what an update did.
type Result struct {
	// Task is the task after the update (before it, when deleted).
	Task Task
	// UpdatedFields names the fields that changed, in TaskUpdate's names.
	UpdatedFields []string
	// StatusChange is set when the status changed.
	StatusChange *StatusChange
	// PreviousOwner is the owner before the update.
	PreviousOwner string
}

// OwnerChanged reports whether the update gave the task another owner.
func (r Result) OwnerChanged() bool { return r.Task.Owner != r.PreviousOwner && r.Task.Owner != "" }

// Update applies u to task id on behalf of caller (an agent name).
// Setting in_progress without an owner claims an unowned task for
// caller, and fails with a *ClaimedError when another agent owns it.
func (s *Store) Update(ctx context.Context, caller, id string, u Update) (Result, error) {
	if u.Status != "" && !u.Status.Valid() {
		return Result{}, fmt.Errorf("update task %s: status %q is not pending, in_progress, completed or deleted", id, u.Status)
	}
	var res Result
	err := s.locked(ctx, func(l *list) (bool, error) {
		t, ok := l.tasks[id]
		if !ok {
			return false, fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		res = Result{PreviousOwner: t.Owner, UpdatedFields: []string{}}
		if u.Status == Deleted {
			res.Task = t.clone()
			res.UpdatedFields = append(res.UpdatedFields, "deleted")
			res.StatusChange = &StatusChange{From: t.Status, To: Deleted}
			return true, l.remove(id)
		}
		for _, o := range append(copyIDs(u.AddBlocks), u.AddBlockedBy...) {
			if o == id {
				return false, fmt.Errorf("update task %s: a task cannot block itself", id)
			}
			if _, ok := l.tasks[o]; !ok {
				return false, fmt.Errorf("update task %s: linked task %s: %w", id, o, ErrNotFound)
			}
		}
		set := func(field string, dst *string, v *string) {
			if v != nil && *dst != *v {
				*dst = *v
				res.UpdatedFields = append(res.UpdatedFields, field)
			}
		}
		set("subject", &t.Subject, u.Subject)
		set("description", &t.Description, u.Description)
		set("activeForm", &t.ActiveForm, u.ActiveForm)
		owner := u.Owner
		if u.Status == InProgress && owner == nil && t.Owner != caller {
			if t.Owner != "" {
				return false, &ClaimedError{ID: id, Owner: t.Owner}
			}
			owner = &caller
		}
		set("owner", &t.Owner, owner)
		if u.Status != "" && u.Status != t.Status {
			res.StatusChange = &StatusChange{From: t.Status, To: u.Status}
			t.Status = u.Status
			res.UpdatedFields = append(res.UpdatedFields, "status")
		}
		touched := map[string]Task{}
		link := func(blocker, blocked string) bool {
			b, w := l.get(touched, blocker), l.get(touched, blocked)
			if blocker == id {
				b = t
			}
			if blocked == id {
				w = t
			}
			added := false
			if !contains(b.Blocks, blocked) {
				b.Blocks = append(b.Blocks, blocked)
				added = true
			}
			if !contains(w.BlockedBy, blocker) {
				w.BlockedBy = append(w.BlockedBy, blocker)
				added = true
			}
			if blocker == id {
				t = b
			} else {
				touched[blocker] = b
			}
			if blocked == id {
				t = w
			} else {
				touched[blocked] = w
			}
			return added
		}
		addedBlocks, addedBlockedBy := false, false
		for _, o := range u.AddBlocks {
			addedBlocks = link(id, o) || addedBlocks
		}
		for _, o := range u.AddBlockedBy {
			addedBlockedBy = link(o, id) || addedBlockedBy
		}
		if addedBlocks {
			res.UpdatedFields = append(res.UpdatedFields, "blocks")
		}
		if addedBlockedBy {
			res.UpdatedFields = append(res.UpdatedFields, "blockedBy")
		}
		if len(u.Metadata) > 0 {
			if t.Metadata == nil {
				t.Metadata = map[string]any{}
			}
			for k, v := range u.Metadata {
				if v == nil {
					delete(t.Metadata, k)
				} else {
					t.Metadata[k] = v
				}
			}
			if len(t.Metadata) == 0 {
				t.Metadata = nil
			}
			res.UpdatedFields = append(res.UpdatedFields, "metadata")
		}
		res.Task = t.clone()
		if len(res.UpdatedFields) == 0 {
			return false, nil
		}
		for _, o := range touched {
			if err := l.write(o); err != nil {
				return true, err
			}
		}
		return true, l.write(t)
	})
	return res, err
}

// copyIDs copies ids so appending to it never writes into the caller's.
func copyIDs(ids []string) []string { return append([]string(nil), ids...) }

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Delete removes task id and every link to it.
func (s *Store) Delete(ctx context.Context, id string) error {
	_, err := s.Update(ctx, "", id, Update{Status: Deleted})
	return err
}

// claimable reports whether t can be claimed by an idle teammate:
// pending, unowned and blocked by no open task.
func (l *list) claimable(t Task) bool {
	if t.Status != Pending || t.Owner != "" {
		return false
	}
	for _, b := range t.BlockedBy {
		if o, ok := l.tasks[b]; ok && o.Status != Completed {
			return false
		}
	}
	return true
}

// ClaimNext gives owner the lowest pending, unowned, unblocked task, set
// in progress; false when there is none. Two claimers never get one task.
func (s *Store) ClaimNext(ctx context.Context, owner string) (Task, bool, error) {
	if owner == "" {
		return Task{}, false, errors.New("claim a task: no owner")
	}
	var out Task
	var ok bool
	err := s.locked(ctx, func(l *list) (bool, error) {
		for _, id := range l.ids() {
			t := l.tasks[id]
			if !l.claimable(t) {
				continue
			}
			t.Owner, t.Status = owner, InProgress
			if err := l.write(t); err != nil {
				return false, err
			}
			out, ok = t.clone(), true
			return true, nil
		}
		return false, nil
	})
	return out, ok, err
}

// HasClaimable reports whether some task is pending, unowned and
// unblocked.
func (s *Store) HasClaimable(ctx context.Context) (bool, error) {
	var ok bool
	err := s.locked(ctx, func(l *list) (bool, error) {
		for _, t := range l.tasks {
			if l.claimable(t) {
				ok = true
				break
			}
		}
		return false, nil
	})
	return ok, err
}

// Release gives back the open tasks of owner (a teammate shut down):
// pending and unowned again. It returns the tasks released, by id.
func (s *Store) Release(ctx context.Context, owner string) ([]Task, error) {
	if owner == "" {
		return nil, errors.New("release tasks: no owner")
	}
	var out []Task
	err := s.locked(ctx, func(l *list) (bool, error) {
		for _, id := range l.ids() {
			t := l.tasks[id]
			if t.Owner != owner || t.Status == Completed {
				continue
			}
			t.Owner, t.Status = "", Pending
			if err := l.write(t); err != nil {
				return len(out) > 0, err
			}
			out = append(out, t.clone())
		}
		return len(out) > 0, nil
	})
	return out, err
}

// list is a list's tasks as read under the lock.
type list struct {
	dir   string
	tasks map[string]Task
	high  int64
}

// load reads every task file of dir. A file that is not a task is an
// error naming it: the list is not worked on half-read.
func load(dir string) (*list, error) {
	l := &list{dir: dir, tasks: map[string]Task{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read task list %s: %w", dir, err)
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		data, err := readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		t, err := ParseTask(id, data)
		if err != nil {
			return nil, fmt.Errorf("task list %s: %w", dir, err)
		}
		l.tasks[id] = t
	}
	if data, err := readFile(filepath.Join(dir, highWater)); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 {
			l.high = n
		}
	}
	return l, nil
}

// readFile reads a file of the list through no link, at most
// maxTaskFile+1 bytes.
func readFile(path string) ([]byte, error) {
	f, err := safefs.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, 0, 512)
	for len(buf) <= maxTaskFile {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	return buf, nil
}

// ids lists the tasks' ids by number.
func (l *list) ids() []string {
	out := make([]string, 0, len(l.tasks))
	for id := range l.tasks {
		out = append(out, id)
	}
	sortIDs(out)
	return out
}

// get returns task id from touched, else from the list.
func (l *list) get(touched map[string]Task, id string) Task {
	if t, ok := touched[id]; ok {
		return t
	}
	return l.tasks[id].clone()
}

// write stores t atomically.
func (l *list) write(t Task) error {
	data, err := marshal(t)
	if err != nil {
		return fmt.Errorf("write task %s: %w", t.ID, err)
	}
	if err := writeAtomic(l.dir, t.ID+".json", data); err != nil {
		return err
	}
	l.tasks[t.ID] = t
	return nil
}

// writeHigh records the highest id ever given.
func (l *list) writeHigh(n int64) error {
	l.high = n
	return writeAtomic(l.dir, highWater, []byte(strconv.FormatInt(n, 10)))
}

// remove deletes task id's file and strips every link to it.
func (l *list) remove(id string) error {
	if err := os.Remove(filepath.Join(l.dir, id+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	delete(l.tasks, id)
	for _, oid := range l.ids() {
		o := l.tasks[oid]
		if !contains(o.Blocks, id) && !contains(o.BlockedBy, id) {
			continue
		}
		o = o.clone()
		o.Blocks = without(o.Blocks, id)
		o.BlockedBy = without(o.BlockedBy, id)
		if err := l.write(o); err != nil {
			return err
		}
	}
	return nil
}

func without(ids []string, id string) []string {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// writeAtomic writes name in dir through a synced temporary file renamed
// over it, so a reader sees the old file or the new, never half of one.
func writeAtomic(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// marshal renders a task file.
func marshal(t Task) ([]byte, error) {
	if t.Blocks == nil {
		t.Blocks = []string{}
	}
	if t.BlockedBy == nil {
		t.BlockedBy = []string{}
	}
	b, err := json.MarshalIndent(t, "", "  ")
	return append(b, '\n'), err
}
