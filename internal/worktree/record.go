package worktree

import (
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

// recordVersion is the format of the record files.
const recordVersion = 1

// record is what cadre writes beside each worktree it creates
// (`.cadre/worktrees/agent-<id>.json`): enough for a later process to tell
// whether the agent still runs and whether the tree holds work. It is
// written before `git worktree add` and removed after the worktree and
// its branch, so a crash at any point leaves a record for every tree.
type record struct {
	Version    int       `json:"version"`
	AgentID    string    `json:"agent_id"`
	SessionID  string    `json:"session_id,omitempty"`
	Path       string    `json:"path"`
	Branch     string    `json:"branch"`
	Base       Base      `json:"base"`
	BaseRef    string    `json:"base_ref,omitempty"`
	BaseCommit string    `json:"base_commit"`
	CreatedAt  time.Time `json:"created_at"`
	Owner      Owner     `json:"owner"`
	// EndedAt is set when the last lease is released and the tree is kept
	// because it holds changes.
	EndedAt time.Time `json:"ended_at,omitzero"`
}

// Owner identifies the process that holds a worktree, well enough to tell
// after a crash whether it still runs: a pid alone may be reused, so the
// process's start time and the machine's boot id come with it.
type Owner struct {
	Host   string `json:"host,omitempty"`
	BootID string `json:"boot_id,omitempty"`
	PID    int    `json:"pid"`
	// Start is the process's start time in clock ticks after boot
	// (/proc/<pid>/stat field 22); 0 where /proc is not available.
	Start uint64 `json:"start,omitempty"`
}

// selfOwner is this process as the owner of the worktrees it makes: the
// same for the whole process, so read once (its host name, boot id and
// start time were ~10 KB and 50 allocations in every Runtime).
var selfOwner = sync.OnceValue(readSelfOwner)

// readSelfOwner describes the current process.
func readSelfOwner() Owner {
	host, _ := os.Hostname()
	pid := os.Getpid()
	start, _ := procStart(pid)
	return Owner{Host: host, BootID: bootID(), PID: pid, Start: start}
}

// alive reports whether the owner process still runs. A process on
// another machine, or one that cannot be checked, counts as alive: cadre
// only removes what it knows to be abandoned.
func (o Owner) alive(self Owner) bool {
	if o.PID <= 0 {
		return false
	}
	if o.Host != self.Host {
		return true // another machine's processes cannot be checked
	}
	if o.BootID != "" && self.BootID != "" && o.BootID != self.BootID {
		return false // a reboot has ended every process of the last boot
	}
	if err := syscall.Kill(o.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if o.Start == 0 {
		return true
	}
	start, err := procStart(o.PID)
	if err != nil {
		// The process ended between the two checks, or /proc is gone.
		return !errors.Is(err, os.ErrNotExist)
	}
	return start == o.Start
}

// procStart reads a process's start time from /proc/<pid>/stat.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// the fields after the last ')' start at field 3.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	const startField = 22 - 3
	if len(f) <= startField {
		return 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseUint(f[startField], 10, 64)
}

// bootID is the kernel's id of this boot ("" where not available).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordPath is the record of the tree at path.
func recordPath(treePath string) string { return treePath + ".json" }

// writeRecord writes rec atomically (a temporary file renamed over the
// old one), so a reader never sees half a record.
func writeRecord(rec *record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode worktree record: %w", err)
	}
	path := recordPath(rec.Path)
	// The record lies in the trees directory, below the main tree's top
	// level; no component there may be a link (issue 23).
	if err := safefs.WriteFileAtomic(treeRoot(rec.Path), path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write worktree record: %w", err)
	}
	return nil
}

// treeRoot is the main working tree's top level of the tree at treePath
// (<root>/.cadre/worktrees/agent-<id>).
func treeRoot(treePath string) string {
	root := filepath.Dir(treePath)
	for range strings.Split(TreesDir, "/") {
		root = filepath.Dir(root)
	}
	return root
}

// readRecord reads the record of the tree at treePath. The tree's path
// is where the record lies, whatever the file says, so an edited record
// cannot point cadre at a directory outside the trees directory.
func readRecord(treePath string) (*record, error) {
	path := recordPath(treePath)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("read worktree record %s: %w", path, err)
	}
	if rec.Version != recordVersion || rec.AgentID == "" || rec.Path == "" || rec.Branch == "" || rec.BaseCommit == "" {
		return nil, fmt.Errorf("read worktree record %s: missing fields or unknown version %d", path, rec.Version)
	}
	rec.Path = treePath
	return &rec, nil
}

// removeRecord deletes a record; a record already gone is not an error.
func removeRecord(treePath string) error {
	if err := os.Remove(recordPath(treePath)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove worktree record: %w", err)
	}
	return nil
}
