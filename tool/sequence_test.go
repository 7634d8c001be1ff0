package tool

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// Calls that reach their turn in any order take it in call order; a call
// that finishes without taking it (Pass) does not hold the others up; a
// context outside a batch never waits.
func TestSequenceTurnsInCallOrder(t *testing.T) {
	t.Parallel()
	const n = 8
	seq := NewSequence(n)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- { // started last call first
		wg.Add(1)
		go func() {
			defer wg.Done()
			turn := seq.Turn(i)
			if i == 3 {
				seq.Pass(i) // finished without taking a turn
				return
			}
			if err := turn.Await(context.Background()); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			turn.Done()
			turn.Done() // harmless twice
		}()
	}
	wg.Wait()
	if want := []int{0, 1, 2, 4, 5, 6, 7}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if err := (Turn{}).Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewSequence(2).Turn(1).Await(ctx); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}
