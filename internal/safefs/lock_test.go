package safefs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A second holder waits for the lock and gives up when its context ends;
// once the first lets go, it gets it.
func TestLockWaitsAndStopsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(context.Background(), a, time.Millisecond, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Lock(ctx, b, time.Millisecond, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Fatalf("second lock while held: %v, want context.Canceled", err)
	}
	a.Close()
	if err := Lock(context.Background(), b, time.Millisecond, time.Millisecond); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
}
