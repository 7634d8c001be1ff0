package safefs

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive flock on f, polling with a backoff that starts
// at first and doubles up to most: the callers' holders keep it for one
// short step (a read-modify-write, one git command), so polling is cheap,
// and unlike a blocking flock it stops when ctx does.
func Lock(ctx context.Context, f *os.File, first, most time.Duration) error {
	wait := first
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, most)
	}
}
