package engine

import (
	"errors"
	"slices"
	"testing"
)

func TestCloseRunsClosersLastFirstOnce(t *testing.T) {
	r := &Runtime{}
	var order []int
	e1, e2 := errors.New("one"), errors.New("two")
	glueOf(r).onClose(func() error { order = append(order, 1); return e1 })
	glueOf(r).onClose(func() error { order = append(order, 2); return e2 })
	err := r.Close()
	if !errors.Is(err, e1) || !errors.Is(err, e2) {
		t.Fatalf("Close() = %v, want both failures", err)
	}
	if want := []int{2, 1}; !slices.Equal(order, want) {
		t.Fatalf("closers ran in order %v, want %v", order, want)
	}
	if err := r.Close(); err != nil || len(order) != 2 {
		t.Fatalf("second Close() = %v after %v, want nothing run", err, order)
	}
	ran := false
	glueOf(r).onClose(func() error { ran = true; return nil })
	if !ran {
		t.Fatal("a closer registered after Close did not run at once")
	}
}
