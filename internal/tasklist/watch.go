package tasklist

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Watch makes the Store notice changes other processes (or other Stores)
// make to its directory, so a teammate waiting on Changed wakes for a
// task another process created or released. The watch is in place when
// Watch returns; run then delivers its events, closing Changed's channel
// at each, until ctx ends (the caller runs it in a goroutine it owns).
func (s *Store) Watch() (run func(ctx context.Context) error, err error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watch task list %s: %w", s.dir, err)
	}
	const mask = syscall.IN_MOVED_TO | syscall.IN_DELETE | syscall.IN_CLOSE_WRITE
	if _, err := syscall.InotifyAddWatch(fd, s.dir, mask); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("watch task list %s: %w", s.dir, err)
	}
	// A non-blocking descriptor goes to Go's poller, so Close ends a Read.
	f := os.NewFile(uintptr(fd), "inotify:"+s.dir)
	return func(ctx context.Context) error {
		stop := context.AfterFunc(ctx, func() { f.Close() })
		defer stop()
		buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, os.ErrClosed) {
					f.Close()
					return ctx.Err()
				}
				f.Close()
				return fmt.Errorf("watch task list %s: %w", s.dir, err)
			}
			if n > 0 && taskEvent(buf[:n]) {
				s.mu.Lock()
				s.notify()
				s.mu.Unlock()
			}
		}
	}, nil
}

// taskEvent reports whether a batch of inotify events touches a task
// file (<id>.json): temporary files and the lock are not changes.
func taskEvent(b []byte) bool {
	for len(b) >= syscall.SizeofInotifyEvent {
		// struct inotify_event: wd, mask, cookie, len (4 bytes each), name.
		end := syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:16]))
		if end > len(b) {
			return false
		}
		name := b[syscall.SizeofInotifyEvent:end]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if id, ok := cutJSON(string(name)); ok && ValidID(id) {
			return true
		}
		b = b[end:]
	}
	return false
}

func cutJSON(name string) (string, bool) {
	if len(name) > 5 && name[len(name)-5:] == ".json" {
		return name[:len(name)-5], true
	}
	return "", false
}
