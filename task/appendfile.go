package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// appendFile is a JSON-lines file that records are appended to, the
// common part of the task journal and the mailbox journal: opened through
// no symbolic link, a torn last line an earlier process left ended first,
// each record written whole or cut back off. It is not safe for
// concurrent use: its owner holds a lock around it.
type appendFile struct {
	what string // how errors name the file: "task journal", "mailbox journal"
	path string
	f    *os.File // nil before the first record of a new file, and once closed
	// closed is set by close.
	closed bool
	size   int64 // the file's size after the last whole record
	err    error // a failed write: every later one fails with it
}

// openAppendFile opens the file at path for appending, named what in
// errors. A file that does not exist yet is created (with its directory)
// by its first record: most sessions never write one, and creating a
// file is the costliest step of a session's start (issue 24).
func openAppendFile(what, path string) (*appendFile, error) {
	a := &appendFile{what: what, path: path}
	f, err := safefs.OpenNoFollow(path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	a.f = f
	if err := a.endTornLine(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return a, nil
}

// create makes the file at its first record.
func (a *appendFile) create() error {
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("%s: %w", a.what, err)
	}
	f, err := safefs.OpenNoFollow(a.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", a.what, err)
	}
	a.f = f
	// Another process of the session may have made it meanwhile.
	if err := a.endTornLine(); err != nil {
		a.f = nil
		_ = f.Close()
		return err
	}
	return nil
}

// endTornLine ends a last line an earlier process left without its
// newline (it died, or the disk filled, in the middle of a write), so the
// next record starts on a line of its own instead of being glued to the
// torn one and lost with it. It also learns the file's size.
func (a *appendFile) endTornLine() error {
	info, err := a.f.Stat()
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.what, a.path, err)
	}
	a.size = info.Size()
	if a.size == 0 {
		return nil
	}
	r, err := os.Open(a.path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.what, a.path, err)
	}
	defer r.Close()
	var last [1]byte
	if _, err := r.ReadAt(last[:], a.size-1); err != nil {
		return fmt.Errorf("%s %s: %w", a.what, a.path, err)
	}
	if last[0] == '\n' {
		return nil
	}
	if _, err := a.f.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("%s %s: end the torn last line: %w", a.what, a.path, err)
	}
	a.size++
	return nil
}

// append writes rec as one line, and syncs it to disk when sync is set.
// A write that fails cuts the file back to before it (no partial record)
// and makes every later append fail too.
func (a *appendFile) append(rec any, sync bool) error {
	if a.closed {
		return errors.New(a.what + ": closed")
	}
	if a.err != nil {
		return a.err
	}
	if a.f == nil {
		if err := a.create(); err != nil {
			a.err = err
			return err
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%s: %w", a.what, err)
	}
	n, err := a.f.Write(append(b, '\n'))
	if err == nil && sync {
		err = a.f.Sync()
	}
	if err != nil {
		a.err = fmt.Errorf("%s %s: %w", a.what, a.path, err)
		if n > 0 {
			if terr := a.f.Truncate(a.size); terr != nil {
				a.err = fmt.Errorf("%w (and cutting the partial record failed: %v)", a.err, terr)
			}
		}
		return a.err
	}
	a.size += int64(n)
	return nil
}

// close closes the file; later appends fail. Closing twice is no error.
func (a *appendFile) close() error {
	a.closed = true
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
