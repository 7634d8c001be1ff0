package transcript

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cadre-dev/cadre/internal/safefs"
	"github.com/cadre-dev/cadre/llm"
)

// Journal writes every transcript and metadata file of a session from one
// goroutine, so agents hand their lines over and go on instead of waiting
// for the disk: creating files is the slowest step of starting a
// sub-agent. Lines for one file are written in the order they were
// appended, each with a single write. Close drains everything and reports
// the first error.
//
// Descriptors do not grow with the number of agents: at most maxOpen
// transcripts are open at once, the least recently written one closed to
// open another (S-15.3, issue 23: a thousand agents under a descriptor
// limit of 256).
//
// A write that fails (a full disk, an I/O error) leaves no partial record:
// the file is cut back to its size before the write. The file's later
// lines are refused with that error, so its agent ends with it; the other
// files go on. A file whose last line was torn by an earlier crash gets a
// newline before its first new record, so the record starts a line of its
// own (Scan skips the torn one).
//
// Durability, exactly: a line handed over is queued, not written. A
// process killed (kill -9, a crash) before the journal's goroutine wrote
// it loses it, and so does one killed before Close drained the queue.
// Written waits for the queue: the lines are then in the file and survive
// the process, but not a machine crash. Sync also fsyncs them (and Close
// does, for the files it closes), so they survive that too. A run syncs
// its transcripts before its Result; an agent checks its own files with
// Written when it ends; and a notification is marked delivered in the
// task journal only after the lines that carry it were written (the
// engine's writtenFirst), so a killed process never leaves a notification
// marked delivered that no transcript holds.
type Journal struct {
	ops  chan journalOp
	done chan struct{}

	// mu guards closed and the closing of ops: senders hold it shared
	// while they hand an op over, so Close never closes under them.
	mu     sync.RWMutex
	closed bool

	errMu sync.Mutex
	err   error
	// failed holds the error of each file a write to failed.
	failed map[string]error

	// maxOpen bounds the open transcripts; open opens one for appending
	// (openAppend; a test replaces it to fail writes).
	maxOpen int
	open    func(path string) (appendFile, error)
	// holdWait is how long a released hold's ops may wait for the
	// others (hold.go).
	holdWait time.Duration
	// reopen opens a closed transcript again to sync it (safefs in
	// production; a test counts the calls).
	reopen func(path string) (syncFile, error)
}

// syncFile is a transcript opened again only to be synced.
type syncFile interface {
	Sync() error
	Close() error
}

// ErrJournalClosed is what a Journal's methods return once it is closed
// (Close wrote everything queued before).
var ErrJournalClosed = errors.New("transcript journal is closed")

// appendFile is an open transcript: an *os.File in production.
type appendFile interface {
	Write(p []byte) (int, error)
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// maxOpen is how many transcripts a journal keeps open at once.
const maxOpen = 16

// journalOp is one write: a line appended to path, a new whole file, or a
// whole file replaced atomically.
type journalOp struct {
	path    string
	data    []byte
	replace bool
	create  bool
	// grow rewrites the file in place (rewriteFile).
	grow bool
	// synced, when set, is closed once every op before it was written,
	// and synced to disk unless noSync.
	synced chan struct{}
	noSync bool
	// keepHeld leaves the held ops held (a test's look at the files);
	// paths writes only the held ops of these files (Written).
	keepHeld bool
	paths    []string
	// release closes path's file: its agent has ended.
	release bool
	// mkdir makes the directory path (MakeDir).
	mkdir bool
	// hold registers a Hold (its paths' ops wait), or with unhold
	// releases it (hold.go).
	hold   *Hold
	unhold bool
}

// NewJournal starts a journal. Its goroutine ends at Close.
func NewJournal() *Journal {
	j := newJournal(func(path string) (appendFile, error) { return openAppend(path) })
	go j.loop()
	return j
}

func newJournal(open func(string) (appendFile, error)) *Journal {
	return &Journal{ops: make(chan journalOp, 256), done: make(chan struct{}), failed: map[string]error{}, maxOpen: maxOpen, open: open, holdWait: holdWait,
		reopen: func(path string) (syncFile, error) { return safefs.OpenNoFollow(path, os.O_WRONLY|os.O_APPEND, 0) }}
}

// openFile is a transcript the journal holds open.
type openFile struct {
	f    appendFile
	size int64
	used uint64 // the op count when it was last written, for eviction
}

// files is the journal goroutine's set of open transcripts. Only the
// goroutine uses it.
type files struct {
	j    *Journal
	open map[string]*openFile
	// unsynced are files closed since the last sync: a sync opens them
	// again to flush them.
	unsynced map[string]bool
	// checked are files whose end was checked for a torn line.
	checked map[string]bool
	clock   uint64
	// held are the ops waiting for their agent's first request (hold.go).
	held holds
}

func (j *Journal) loop() {
	defer close(j.done)
	fs := &files{j: j, open: map[string]*openFile{}, unsynced: map[string]bool{}, checked: map[string]bool{}}
	// Synced before it is closed: the record survives a crash of the
	// machine right after the run.
	defer fs.sync(true)
	for {
		op, ok := fs.next(j.ops)
		if !ok {
			fs.flushAll() // held lines too: Close writes everything
			return
		}
		switch {
		case op.hold != nil:
			fs.holdOp(op) // hold.go
		case op.mkdir:
			// A failure shows at the first file made in it.
			_ = os.MkdirAll(op.path, 0o700)
		case op.synced != nil:
			switch {
			case op.keepHeld:
			case op.paths != nil:
				fs.writeHeldFor(op.paths) // hold.go: Written's own files
			default:
				fs.flushAll() // everything queued before, held or not
			}
			if !op.noSync {
				fs.sync(false)
			}
			close(op.synced)
		case fs.kept(op): // hold.go: an agent's file before its first request
		default:
			fs.do(op)
		}
	}
}

// do carries out one write op.
func (fs *files) do(op journalOp) {
	j := fs.j
	switch {
	case op.release:
		fs.close(op.path, false)
	case op.create:
		err := createFile(op.path, op.data)
		if tooManyFiles(err) && len(fs.open) > 0 {
			fs.closeAll()
			err = createFile(op.path, op.data)
		}
		if err != nil {
			j.failPath(op.path, err)
		}
	case op.grow:
		err := rewriteFile(op.path, op.data)
		if tooManyFiles(err) && len(fs.open) > 0 {
			fs.closeAll()
			err = rewriteFile(op.path, op.data)
		}
		if err != nil {
			j.failPath(op.path, err)
		}
	case op.replace:
		err := replaceFile(op.path, op.data)
		if tooManyFiles(err) && len(fs.open) > 0 {
			fs.closeAll()
			err = replaceFile(op.path, op.data)
		}
		if err != nil {
			j.failPath(op.path, err)
		}
	default:
		fs.append(op.path, op.data)
	}
}

// next returns the next op. While none is waiting it syncs the closed
// files (an ended agent's transcript is closed when its agent ends), so
// the run's last sync is left with the files still being written rather
// than every sub-agent's, and a waiting write is held up by one sync at
// most. Out of descriptors, the rest wait for a later turn (at the
// latest the run's last sync, which reports a failure).
func (fs *files) next(ops <-chan journalOp) (journalOp, bool) {
	for path := range fs.unsynced {
		if len(ops) > 0 {
			break
		}
		f, err := fs.j.reopen(path)
		if tooManyFiles(err) {
			break
		}
		delete(fs.unsynced, path)
		fs.flush(path, f, err)
	}
	for {
		if fs.held.timer == nil {
			op, ok := <-ops
			return op, ok
		}
		select {
		case op, ok := <-ops:
			return op, ok
		case <-fs.held.timer.C:
			fs.held.timer = nil
			fs.writeReleased() // hold.go: sent long enough ago
		}
	}
}

// append writes one record to path in a single write; on a failed or
// short write the file is cut back to its size before it.
func (fs *files) append(path string, data []byte) {
	if fs.j.pathErr(path) != nil {
		return // refused at send already, unless it failed since
	}
	of, err := fs.get(path)
	if err != nil {
		fs.j.failPath(path, err)
		return
	}
	fs.clock++
	of.used = fs.clock
	n, err := of.f.Write(data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		werr := fmt.Errorf("write transcript %s: %w", path, err)
		if n > 0 {
			if terr := of.f.Truncate(of.size); terr != nil {
				// The torn line stays; the next open ends it with a newline.
				werr = fmt.Errorf("%w (and cutting the partial record failed: %v)", werr, terr)
				delete(fs.checked, path)
			}
		}
		fs.close(path, false)
		fs.j.failPath(path, werr)
		return
	}
	of.size += int64(n)
}

// get returns path open for appending, opening it (and closing the least
// recently written file when maxOpen are open).
func (fs *files) get(path string) (*openFile, error) {
	if of := fs.open[path]; of != nil {
		return of, nil
	}
	if len(fs.open) >= fs.j.maxOpen {
		var oldest string
		var used uint64
		for p, of := range fs.open {
			if oldest == "" || of.used < used {
				oldest, used = p, of.used
			}
		}
		fs.close(oldest, false)
	}
	f, err := fs.j.open(path)
	if tooManyFiles(err) && len(fs.open) > 0 {
		// Out of descriptors: give back the ones the journal holds and
		// try once more.
		fs.closeAll()
		f, err = fs.j.open(path)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	of := &openFile{f: f, size: info.Size()}
	if !fs.checked[path] {
		fs.checked[path] = true
		if of.size > 0 && !endsWithNewline(path, of.size) {
			// A torn last line (a crash in a write): end it, so the next
			// record starts on a line of its own.
			if n, err := f.Write([]byte{'\n'}); err != nil || n != 1 {
				_ = f.Close()
				return nil, fmt.Errorf("end the torn last line of transcript %s: %w", path, cmpErr(err))
			}
			of.size++
		}
	}
	fs.open[path] = of
	return of, nil
}

func cmpErr(err error) error {
	if err == nil {
		return io.ErrShortWrite
	}
	return err
}

// endsWithNewline reports whether the file at path, of the given size,
// ends with '\n'. A file it cannot read is taken as ending well: the
// append that follows reports what is wrong with it.
func endsWithNewline(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// tooManyFiles reports whether err is the process or the system being
// out of descriptors.
func tooManyFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// closeAll closes every open transcript (synced later, see sync).
func (fs *files) closeAll() {
	for path := range fs.open {
		fs.close(path, false)
	}
}

// close closes path's file; synced says whether it was synced just now.
func (fs *files) close(path string, synced bool) {
	of := fs.open[path]
	if of == nil {
		return
	}
	delete(fs.open, path)
	if err := of.f.Close(); err != nil {
		fs.j.failPath(path, fmt.Errorf("close transcript %s: %w", path, err))
	}
	if !synced {
		fs.unsynced[path] = true
	}
}

// sync flushes every file written since the last sync to disk: the open
// ones, and the closed ones opened again for it. closeAll closes the open
// ones too (the journal is ending).
func (fs *files) sync(closeAll bool) {
	for path, of := range fs.open {
		if err := of.f.Sync(); err != nil {
			fs.j.failPath(path, fmt.Errorf("sync transcript %s: %w", path, err))
		}
		if closeAll {
			fs.close(path, true)
		}
	}
	for path := range fs.unsynced {
		fs.syncClosed(path)
	}
}

// syncClosed opens path, a file closed since the last sync, again to
// flush it to disk. Its lines are written; only the flush is missing, so
// a failure here is the journal's error, not one that refuses the file's
// later lines.
func (fs *files) syncClosed(path string) {
	delete(fs.unsynced, path)
	f, err := fs.j.reopen(path)
	fs.flush(path, f, err)
}

// flush syncs and closes f, path opened again (or the error opening it).
func (fs *files) flush(path string, f syncFile, err error) {
	if err != nil {
		fs.j.fail(fmt.Errorf("sync transcript %s: %w", path, err))
		return
	}
	if err := f.Sync(); err != nil {
		fs.j.fail(fmt.Errorf("sync transcript %s: %w", path, err))
	}
	_ = f.Close()
}

func openAppend(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create transcript dir: %w", err)
	}
	f, err := safefs.OpenNoFollow(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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
	if err := writeNoFollow(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeNoFollow writes data to path, created or truncated, refusing a
// link at path (it would redirect cadre's write elsewhere).
func writeNoFollow(path string, data []byte) error {
	f, err := safefs.OpenNoFollow(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceFile writes data to path atomically (temp file + rename).
func replaceFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create dir for %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := writeNoFollow(tmp, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// rewriteFile writes data over the file at path in place when data is
// at least as long as the file is: a record that only grows, as an
// agent's metadata does from its start to its end. No second inode is
// made and none is freed, where replaceFile makes a temp file and
// renames it (a create and an unlink per agent; creating files is the
// slowest step of the spawn path, and on ext4 every recently freed inode
// makes the next creates slower). One write at offset 0: a reader sees
// the old record, or for the instant of the write a mix of the two,
// never an empty or a missing file (the .meta.json reader treats a
// record it cannot parse as no agent). A missing file is created; a
// shorter record (or something that is not a regular file) goes through
// replaceFile.
func rewriteFile(path string, data []byte) error {
	f, err := safefs.OpenNoFollow(path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return createFile(path, data)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > int64(len(data)) {
		_ = f.Close()
		return replaceFile(path, data)
	}
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fail records err as the journal's first error, if it is.
func (j *Journal) fail(err error) {
	j.errMu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.errMu.Unlock()
}

// failPath records that a write to path failed: the journal's first
// error, and the error every later line for path is refused with.
func (j *Journal) failPath(path string, err error) {
	j.errMu.Lock()
	if j.err == nil {
		j.err = err
	}
	if _, ok := j.failed[path]; !ok {
		j.failed[path] = err
	}
	j.errMu.Unlock()
}

func (j *Journal) pathErr(path string) error {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	return j.failed[path]
}

// Err returns the first error a write met, if any.
func (j *Journal) Err() error {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	return j.err
}

// send queues op; it fails once the journal is closed, or when a write to
// the op's file has failed.
func (j *Journal) send(op journalOp) error {
	if op.path != "" {
		if err := j.pathErr(op.path); err != nil {
			return err
		}
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.closed {
		return ErrJournalClosed
	}
	j.ops <- op
	return nil
}

// MakeDir queues making the directory dir (and its parents): the
// session's directory of sub-agent files, made by the journal while the
// main agent's first request is in flight rather than on the way to it,
// or in the middle of its first children's start.
func (j *Journal) MakeDir(dir string) error {
	return j.send(journalOp{path: dir, mkdir: true})
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

// CreateOwned is Create for data the caller hands over: it must not
// change data afterwards, and the journal keeps it without a copy.
func (j *Journal) CreateOwned(path string, data []byte) error {
	return j.send(journalOp{path: path, data: data, create: true})
}

// ReplaceOwned is Replace for data the caller hands over (see CreateOwned).
func (j *Journal) ReplaceOwned(path string, data []byte) error {
	return j.send(journalOp{path: path, data: data, replace: true})
}

// GrowOwned queues rewriting the file at path in place with data, a
// record at least as long as the one there (an agent's metadata when it
// ends; see rewriteFile), for data the caller hands over (see
// CreateOwned).
func (j *Journal) GrowOwned(path string, data []byte) error {
	return j.send(journalOp{path: path, data: data, grow: true})
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

// Written waits until everything queued before it was written (not
// synced) and returns the error a write to any of paths met. An agent
// checks its own files with it when it ends. What a Hold keeps of other
// files stays held (with no paths, nothing does).
func (j *Journal) Written(paths ...string) error {
	done := make(chan struct{})
	if err := j.send(journalOp{synced: done, noSync: true, paths: paths}); err != nil {
		return err
	}
	<-done
	for _, p := range paths {
		if err := j.pathErr(p); err != nil {
			return err
		}
	}
	return nil
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

// Err returns the error a write of this transcript met, if any. Call it
// after the journal's Sync or Written to see every write queued before.
func (w *JournalWriter) Err() error { return w.j.pathErr(w.path) }

// Written waits until every line queued before it was written (not
// synced: the lines then survive the process, not yet a machine crash)
// and returns the error a write of this transcript met.
func (w *JournalWriter) Written() error { return w.j.Written(w.path) }

// AppendMessage queues one conversation message; see Writer.AppendMessage.
func (w *JournalWriter) AppendMessage(m llm.Message, model string, usage *llm.Usage) error {
	b, err := encodeLine(Entry{
		Type: string(m.Role), SessionID: w.sessionID, AgentID: w.agentID,
		Timestamp: w.now().UTC().Format(time.RFC3339Nano), Message: &m, Model: model, Usage: usage,
	})
	if err != nil {
		return fmt.Errorf("encode transcript entry: %w", err)
	}
	return w.j.send(journalOp{path: w.path, data: b})
}

// Release closes the transcript's file once what was queued before is
// written: its agent has ended, so it holds no descriptor until the run
// ends. A later append opens it again.
func (w *JournalWriter) Release() error {
	return w.j.send(journalOp{path: w.path, release: true})
}

// AppendCompact queues a compact_boundary entry; the messages appended
// after it are the compacted conversation.
func (w *JournalWriter) AppendCompact(b CompactBoundary) error {
	e, err := encodeLine(Entry{
		Type: EntryCompactBoundary, SessionID: w.sessionID, AgentID: w.agentID,
		Timestamp: w.now().UTC().Format(time.RFC3339Nano), Compact: &b,
	})
	if err != nil {
		return fmt.Errorf("encode transcript entry: %w", err)
	}
	return w.j.send(journalOp{path: w.path, data: e})
}

// AppendEnd queues the entry that records how a run ended.
func (w *JournalWriter) AppendEnd(end RunEnd) error {
	b, err := encodeLine(Entry{
		Type: EntryRunEnd, SessionID: w.sessionID, AgentID: w.agentID,
		Timestamp: w.now().UTC().Format(time.RFC3339Nano), RunEnd: &end,
	})
	if err != nil {
		return fmt.Errorf("encode transcript entry: %w", err)
	}
	return w.j.send(journalOp{path: w.path, data: b})
}
