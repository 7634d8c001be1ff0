package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Journal writes every transcript and metadata file of a session from one
// goroutine, so agents hand their lines over and go on instead of waiting
// for the disk: creating files is the slowest step of starting a
// sub-agent. Lines for one file are written in the order they were
// appended, each with a single write. Close drains everything and reports
// the first error.
type Journal struct {
	ops  chan journalOp
	done chan struct{}

	// mu guards closed and the closing of ops: senders hold it shared
	// while they hand an op over, so Close never closes under them.
	mu     sync.RWMutex
	closed bool

	errMu sync.Mutex
	err   error
}

// journalOp is one write: a line appended to path, a new whole file, or a
// whole file replaced atomically.
type journalOp struct {
	path    string
	data    []byte
	replace bool
	create  bool
	// synced, when set, is closed once every op before it was written.
	synced chan struct{}
}

// NewJournal starts a journal. Its goroutine ends at Close.
func NewJournal() *Journal {
	j := &Journal{ops: make(chan journalOp, 256), done: make(chan struct{})}
	go j.loop()
	return j
}

func (j *Journal) loop() {
	defer close(j.done)
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			// Synced before it is closed: the record survives a crash of
			// the machine right after the run.
			if err := f.Sync(); err != nil {
				j.fail(fmt.Errorf("sync transcript: %w", err))
			}
			if err := f.Close(); err != nil {
				j.fail(fmt.Errorf("close transcript: %w", err))
			}
		}
	}()
	for op := range j.ops {
		if op.synced != nil {
			for _, f := range files {
				if err := f.Sync(); err != nil {
					j.fail(fmt.Errorf("sync transcript: %w", err))
				}
			}
			close(op.synced)
			continue
		}
		if op.create {
			if err := createFile(op.path, op.data); err != nil {
				j.fail(err)
			}
			continue
		}
		if op.replace {
			if err := replaceFile(op.path, op.data); err != nil {
				j.fail(err)
			}
			continue
		}
		f := files[op.path]
		if f == nil {
			var err error
			if f, err = openAppend(op.path); err != nil {
				j.fail(err)
				continue
			}
			files[op.path] = f
		}
		if _, err := f.Write(op.data); err != nil {
			j.fail(fmt.Errorf("write transcript %s: %w", op.path, err))
		}
	}
}

func openAppend(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create transcript dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	return f, nil
}

// createFile writes a new file in one step: nothing can be reading a file
// that did not exist, so no temp file is needed.
func createFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create dir for %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// replaceFile writes data to path atomically (temp file + rename).
func replaceFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create dir for %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (j *Journal) fail(err error) {
	j.errMu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.errMu.Unlock()
}

// Err returns the first error a write met, if any.
func (j *Journal) Err() error {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	return j.err
}

// send queues op; it fails once the journal is closed or has failed.
func (j *Journal) send(op journalOp) error {
	if err := j.Err(); err != nil {
		return err
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.closed {
		return errors.New("transcript journal is closed")
	}
	j.ops <- op
	return nil
}

// Create queues writing a new file at path (agent metadata when the agent
// starts).
func (j *Journal) Create(path string, data []byte) error {
	return j.send(journalOp{path: path, data: append([]byte(nil), data...), create: true})
}

// Replace queues an atomic rewrite of the file at path (agent metadata).
func (j *Journal) Replace(path string, data []byte) error {
	return j.send(journalOp{path: path, data: append([]byte(nil), data...), replace: true})
}

// Sync waits until everything queued before it was written and synced
// to disk (the files stay open) and returns the first error any write met. A run syncs its
// transcripts before its result while background agents keep writing.
func (j *Journal) Sync() error {
	synced := make(chan struct{})
	if err := j.send(journalOp{synced: synced}); err != nil {
		return err
	}
	<-synced
	return j.Err()
}

// Close writes everything queued, closes the files and returns the first
// error any write met. It is safe to call more than once.
func (j *Journal) Close() error {
	j.mu.Lock()
	if !j.closed {
		j.closed = true
		close(j.ops)
	}
	j.mu.Unlock()
	<-j.done
	return j.Err()
}

// Transcript returns a recorder appending one agent's conversation to path
// through the journal.
func (j *Journal) Transcript(path, sessionID, agentID string, now func() time.Time) *JournalWriter {
	if now == nil {
		now = time.Now
	}
	return &JournalWriter{j: j, path: path, sessionID: sessionID, agentID: agentID, now: now}
}

// JournalWriter appends one agent's messages through a Journal. The entry
// is encoded by the caller, so the order of one agent's lines is the order
// of its calls.
type JournalWriter struct {
	j         *Journal
	path      string
	sessionID string
	agentID   string
	now       func() time.Time
}

// Path is the transcript file.
func (w *JournalWriter) Path() string { return w.path }

// AppendMessage queues one conversation message; see Writer.AppendMessage.
func (w *JournalWriter) AppendMessage(m llm.Message, model string, usage *llm.Usage) error {
	b, err := json.Marshal(Entry{
		Type: string(m.Role), SessionID: w.sessionID, AgentID: w.agentID,
		Timestamp: w.now().UTC().Format(time.RFC3339Nano), Message: &m, Model: model, Usage: usage,
	})
	if err != nil {
		return fmt.Errorf("encode transcript entry: %w", err)
	}
	return w.j.send(journalOp{path: w.path, data: append(b, '\n')})
}

// AppendEnd queues the entry that records how a run ended.
func (w *JournalWriter) AppendEnd(end RunEnd) error {
	b, err := json.Marshal(Entry{
		Type: EntryRunEnd, SessionID: w.sessionID, AgentID: w.agentID,
		Timestamp: w.now().UTC().Format(time.RFC3339Nano), RunEnd: &end,
	})
	if err != nil {
		return fmt.Errorf("encode transcript entry: %w", err)
	}
	return w.j.send(journalOp{path: w.path, data: append(b, '\n')})
}
