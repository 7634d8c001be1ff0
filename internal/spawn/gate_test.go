package spawn

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

func TestGateRefusesDepthAndTotal(t *testing.T) {
	t.Parallel()
	g := NewGate(Limits{MaxDepth: 2, MaxRunning: 1, MaxTotal: 3})
	if _, ref := g.Admit(2); ref == nil || ref.Limit != LimitDepth || ref.Message() != "Cannot start a sub-agent: nesting limit reached (depth 2 of 2). Do not retry; do the work yourself with your own tools." {
		t.Fatalf("depth: %+v", ref)
	}
	var tickets []*Ticket
	for i := range 3 {
		tk, ref := g.Admit(0)
		if ref != nil {
			t.Fatalf("spawn %d refused: %s", i, ref.Message())
		}
		tickets = append(tickets, tk)
	}
	if !tickets[1].Queued() || tickets[1].Position() != 1 || tickets[2].Position() != 2 || tickets[0].Queued() {
		t.Fatalf("positions %d %d %d", tickets[0].Position(), tickets[1].Position(), tickets[2].Position())
	}
	if _, ref := g.Admit(0); ref == nil || ref.Limit != LimitTotal || ref.Max != 3 {
		t.Fatalf("total: %+v", ref)
	}
	// A queued spawn withdrawn before it ran gives its place in the total
	// back.
	tickets[2].Release()
	if c := g.Counts(); c != (Counts{Running: 1, Queued: 1, Total: 2}) {
		t.Fatalf("counts %+v", c)
	}
	if _, ref := g.Admit(0); ref != nil {
		t.Fatalf("refused after a withdrawal: %s", ref.Message())
	}
}

func TestGateDefaults(t *testing.T) {
	t.Parallel()
	if got := NewGate(Limits{MaxRunning: -1}).Limits(); got != (Limits{MaxDepth: DefaultMaxDepth, MaxRunning: DefaultMaxRunning, MaxTotal: DefaultMaxTotal}) {
		t.Fatalf("%+v", got)
	}
}

// TestGateQueueIsFIFO admits more spawns than slots and checks that they
// start in the order they were admitted, each as a slot frees.
func TestGateQueueIsFIFO(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(Limits{MaxRunning: 2})
		const n = 8
		var order []int
		var mu sync.Mutex
		first, _ := g.Admit(0)
		second, _ := g.Admit(0)
		var wg sync.WaitGroup
		release := make([]chan struct{}, n)
		for i := range n {
			tk, _ := g.Admit(0)
			if tk.Position() != i+1 {
				t.Fatalf("position %d, want %d", tk.Position(), i+1)
			}
			release[i] = make(chan struct{})
			wg.Go(func() {
				if err := tk.Wait(context.Background()); err != nil {
					t.Error(err)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				<-release[i]
				tk.Release()
			})
		}
		started := func() []int {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(order)
		}
		if got := started(); len(got) != 0 {
			t.Fatalf("queued spawns started while both slots were held: %v", got)
		}
		// Free one slot at a time: each goes to the next in the queue.
		first.Release()
		want := []int{0}
		if got := started(); !slices.Equal(got, want) {
			t.Fatalf("started %v, want %v", got, want)
		}
		second.Release()
		want = append(want, 1)
		for i := range n {
			if got := started(); !slices.Equal(got, want) {
				t.Fatalf("started %v, want %v", got, want)
			}
			if c := g.Counts(); c.Running != 2 && c.Queued > 0 {
				t.Fatalf("a slot idles while spawns wait: %+v", c)
			}
			close(release[i])
			if i+2 < n {
				want = append(want, i+2)
			}
		}
		wg.Wait()
		if c := g.Counts(); c.Running != 0 || c.Queued != 0 || c.Total != n+2 {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestGateWaitCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(Limits{MaxRunning: 1})
		holder, _ := g.Admit(0)
		queued, _ := g.Admit(0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- queued.Wait(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Wait = %v", err)
		}
		if c := g.Counts(); c != (Counts{Running: 1, Total: 1}) {
			t.Fatalf("counts after withdrawal %+v", c)
		}
		queued.Release() // no-op after a withdrawal
		holder.Release()
		holder.Release() // idempotent
		if c := g.Counts(); c != (Counts{Total: 1}) {
			t.Fatalf("counts %+v", c)
		}
	})
}

// TestGateSuspendLendsTheSlot is the nested spawn that would deadlock a
// queue whose slots stay with waiting parents: one slot, a parent holding
// it spawns a child.
func TestGateSuspendLendsTheSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(Limits{MaxRunning: 1})
		parent, _ := g.Admit(0)
		other, _ := g.Admit(0) // a sibling waiting in the queue
		parent.Suspend()
		child, _ := g.Admit(1)
		if !child.Queued() {
			t.Fatal("the child jumped the queue")
		}
		// The freed slot went to the sibling, first in the queue.
		if err := other.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		resumed := make(chan error, 1)
		childDone := make(chan struct{})
		go func() {
			if err := child.Wait(context.Background()); err != nil {
				t.Error(err)
			}
			child.Release()
			close(childDone)
		}()
		other.Release() // the sibling ends: the child runs, then ends
		<-childDone
		go func() { resumed <- parent.Resume(context.Background()) }()
		if err := <-resumed; err != nil {
			t.Fatal(err)
		}
		if c := g.Counts(); c.Running != 1 {
			t.Fatalf("the parent has no slot again: %+v", c)
		}
		parent.Release()
		if c := g.Counts(); c != (Counts{Total: 3}) {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestGateResumeGoesFirst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(Limits{MaxRunning: 1})
		parent, _ := g.Admit(0)
		parent.Suspend()
		child, _ := g.Admit(1) // takes the lent slot
		newcomer, _ := g.Admit(0)
		if child.Queued() || !newcomer.Queued() {
			t.Fatal("slot not lent to the child")
		}
		var got []string
		var mu sync.Mutex
		note := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
		var wg sync.WaitGroup
		wg.Go(func() {
			if parent.Resume(context.Background()) == nil {
				note("parent")
				parent.Release()
			}
		})
		wg.Go(func() {
			if newcomer.Wait(context.Background()) == nil {
				note("newcomer")
				newcomer.Release()
			}
		})
		synctest.Wait()
		child.Release()
		wg.Wait()
		if len(got) != 2 || got[0] != "parent" {
			t.Fatalf("order %v", got)
		}
	})
}

func TestGateSuspendNests(t *testing.T) {
	t.Parallel()
	g := NewGate(Limits{MaxRunning: 1})
	p, _ := g.Admit(0)
	p.Suspend()
	p.Suspend()
	if err := p.Resume(context.Background()); err != nil || g.Counts().Running != 0 {
		t.Fatalf("first of two Resumes took the slot: %v %+v", err, g.Counts())
	}
	if err := p.Resume(context.Background()); err != nil || g.Counts().Running != 1 {
		t.Fatalf("last Resume did not take the slot: %v %+v", err, g.Counts())
	}
	p.Release()
	var nilTicket *Ticket
	nilTicket.Suspend()
	if nilTicket.Resume(context.Background()) != nil {
		t.Fatal("nil ticket")
	}
	nilTicket.Release()
}

func TestGateResumeCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := NewGate(Limits{MaxRunning: 1})
		p, _ := g.Admit(0)
		p.Suspend()
		c, _ := g.Admit(1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Resume(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Resume = %v", err)
		}
		p.Release()
		c.Release()
		if cn := g.Counts(); cn != (Counts{Total: 2}) {
			t.Fatalf("counts %+v", cn)
		}
	})
}

// TestGateStress runs 1,000 spawns through a small gate from many
// goroutines — nested spawns that suspend their parent, random work,
// cancellation while queued or running — and checks that no more than
// MaxRunning ever hold a slot at once and that every counter returns to
// zero.
func TestGateStress(t *testing.T) {
	t.Parallel()
	const maxRunning = 7
	g := NewGate(Limits{MaxRunning: maxRunning, MaxTotal: 5000})
	var holding, peak atomic.Int32
	hold := func() {
		n := holding.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
	}
	var started atomic.Int32
	var run func(ctx context.Context, depth int, rng *rand.Rand)
	run = func(ctx context.Context, depth int, rng *rand.Rand) {
		tk, ref := g.Admit(depth)
		if ref != nil {
			if ref.Limit != LimitDepth {
				t.Errorf("refused: %s", ref.Message())
			}
			return
		}
		defer tk.Release()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if rng.IntN(10) == 0 {
			cancel() // cancelled while queued, or as it starts
		}
		if err := tk.Wait(ctx); err != nil {
			return
		}
		started.Add(1)
		hold()
		// Work, then perhaps spawn children and wait for them.
		if depth < 2 && rng.IntN(3) == 0 {
			holding.Add(-1)
			tk.Suspend()
			var wg sync.WaitGroup
			for range 1 + rng.IntN(3) {
				seed := rng.Uint64()
				wg.Go(func() { run(ctx, depth+1, rand.New(rand.NewPCG(seed, 1))) })
			}
			wg.Wait()
			if err := tk.Resume(ctx); err != nil {
				return
			}
			hold()
		}
		holding.Add(-1)
	}
	var wg sync.WaitGroup
	rng := rand.New(rand.NewPCG(8, 9))
	for range 1000 {
		seed := rng.Uint64()
		wg.Go(func() { run(context.Background(), 0, rand.New(rand.NewPCG(seed, 2))) })
	}
	wg.Wait()
	if p := peak.Load(); p > maxRunning || p == 0 {
		t.Fatalf("peak of %d slots held at once (cap %d)", p, maxRunning)
	}
	if c := g.Counts(); c.Running != 0 || c.Queued != 0 || c.Resuming != 0 || c.Total != int(started.Load()) {
		t.Fatalf("counts %+v after %d started", c, started.Load())
	}
	if started.Load() < 800 {
		t.Fatalf("only %d spawns started", started.Load())
	}
}
