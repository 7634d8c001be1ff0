package spawn

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
)

var t0 = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)

func TestReserveTakesTheLeast(t *testing.T) {
	t.Parallel()
	root := NewAccount(agentdef.Budget{USD: 1, Tokens: 1000, WallTime: time.Minute}, t0)
	c, ref := Reserve(root, agentdef.Budget{Tokens: 600, Turns: 9}, agentdef.Budget{USD: 0.25, Turns: 5}, t0.Add(50*time.Second))
	if ref != nil {
		t.Fatal(ref.Message())
	}
	want := agentdef.Budget{USD: 0.25, Tokens: 600, Turns: 5, WallTime: 10 * time.Second}
	if c.Limits() != want {
		t.Fatalf("limits %+v, want %+v", c.Limits(), want)
	}
	for _, w := range []string{"usd 0.25 (definition)", "tokens 600 (asked)", "turns 5 (definition)", "wallTime 10s (parent's remainder)"} {
		if !strings.Contains(c.Why(), w) {
			t.Errorf("why %q lacks %q", c.Why(), w)
		}
	}
	if h := root.Held(); h.USD != 0.25 || h.Tokens != 600 || h.Turns != 0 {
		t.Fatalf("root holds %+v", h)
	}
	if r := root.Remaining(); r.Tokens != 400 {
		t.Fatalf("remaining %+v", r)
	}
}

func TestNoBudgetNoAccount(t *testing.T) {
	t.Parallel()
	c, ref := Reserve(nil, agentdef.Budget{}, agentdef.Budget{}, t0)
	if c != nil || ref != nil {
		t.Fatal("an unbudgeted child got an account")
	}
	// A nil account is valid everywhere and never limits.
	if c.Charge(Spend{Tokens: 5}) != Under || c.Level() != Under || c.Close() != (Spend{}) || c.WarnOnce() {
		t.Fatal("a nil account limits")
	}
}

func TestChargeUpTheChainAndReturn(t *testing.T) {
	t.Parallel()
	root := NewAccount(agentdef.Budget{Tokens: 1000}, t0)
	mid, _ := Reserve(root, agentdef.Budget{Tokens: 600}, agentdef.Budget{}, t0)
	leaf, _ := Reserve(mid, agentdef.Budget{Tokens: 500}, agentdef.Budget{}, t0)
	if lvl := leaf.Charge(Spend{Tokens: 450}); lvl != Low {
		t.Fatalf("level at 90 %% = %d", lvl)
	}
	if root.Spent().Tokens != 450 || mid.Spent().Tokens != 450 {
		t.Fatalf("spend not charged up: root %+v mid %+v", root.Spent(), mid.Spent())
	}
	// mid holds 50 for leaf; root holds 600-450 = 150 for mid.
	if mid.Held().Tokens != 50 || root.Held().Tokens != 150 {
		t.Fatalf("held mid %+v root %+v", mid.Held(), root.Held())
	}
	if back := leaf.Close(); back.Tokens != 50 || mid.Held().Tokens != 0 {
		t.Fatalf("returned %+v, mid holds %+v", back, mid.Held())
	}
	if leaf.Close() != (Spend{}) {
		t.Fatal("Close returned twice")
	}
	// mid has 600-450 left; a second leaf asking 500 gets 150.
	leaf2, ref := Reserve(mid, agentdef.Budget{Tokens: 500}, agentdef.Budget{}, t0)
	if ref != nil || leaf2.Limits().Tokens != 150 {
		t.Fatalf("second leaf %+v %v", leaf2.Limits(), ref)
	}
	if lvl := leaf2.Charge(Spend{Tokens: 150}); lvl != Spent {
		t.Fatalf("level at 100 %% = %d", lvl)
	}
	if mid.Level() != Spent {
		t.Fatal("mid's subtree spent its reservation but mid is not spent")
	}
	if _, ref := Reserve(mid, agentdef.Budget{}, agentdef.Budget{}, t0); ref == nil || ref.Dimension != "tokens" || !strings.Contains(ref.Message(), "reason: budget") {
		t.Fatalf("nothing left, refusal %+v", ref)
	}
	leaf2.Close()
	if back := mid.Close(); back.Tokens != 0 {
		t.Fatalf("mid returned %+v", back)
	}
	if root.Held() != (Spend{}) || root.Spent().Tokens != 600 {
		t.Fatalf("root held %+v spent %+v", root.Held(), root.Spent())
	}
}

func TestWarnOnce(t *testing.T) {
	t.Parallel()
	a := NewAccount(agentdef.Budget{Turns: 10}, t0)
	if !a.WarnOnce() || a.WarnOnce() {
		t.Fatal("WarnOnce is not once")
	}
}

// TestChargeConcurrent: many children charging at once leave exact sums
// (run with -race).
func TestChargeConcurrent(t *testing.T) {
	t.Parallel()
	root := NewAccount(agentdef.Budget{Tokens: 1 << 40}, t0)
	var wg sync.WaitGroup
	kids := make([]*Account, 16)
	for i := range kids {
		if kids[i], _ = Reserve(root, agentdef.Budget{Tokens: 1 << 20}, agentdef.Budget{}, t0); kids[i] == nil {
			t.Fatalf("child %d refused", i)
		}
	}
	for _, k := range kids {
		wg.Go(func() {
			g, _ := Reserve(k, agentdef.Budget{Tokens: 1 << 10}, agentdef.Budget{}, t0)
			for range 100 {
				g.Charge(Spend{Tokens: 3, Turns: 1})
				k.Charge(Spend{Tokens: 1})
			}
			g.Close()
			k.Close()
		})
	}
	wg.Wait()
	if s, h := root.Spent(), root.Held(); s.Tokens != 16*400 || s.Turns != 1600 || h != (Spend{}) {
		t.Fatalf("spent %+v held %+v", s, h)
	}
}

// Effective is what an agent run elsewhere is held to: its own limits,
// its pool's free part where it shares (after a sibling spent some), the
// least that still limits when nothing is free, and the wall time left.
func TestEffectiveLimits(t *testing.T) {
	t.Parallel()
	root := NewAccount(agentdef.Budget{USD: 1, Turns: 10, WallTime: time.Minute}, t0)
	sib, ref := Reserve(root, agentdef.Budget{}, agentdef.Budget{}, t0)
	if ref != nil {
		t.Fatal(ref.Message())
	}
	c, ref := Reserve(root, agentdef.Budget{Tokens: 500}, agentdef.Budget{}, t0)
	if ref != nil {
		t.Fatal(ref.Message())
	}
	sib.Charge(Spend{USD: 0.4, Turns: 3})
	got := c.Effective(t0.Add(20 * time.Second))
	if want := (agentdef.Budget{USD: 0.6, Tokens: 500, Turns: 7, WallTime: 40 * time.Second}); got.Tokens != want.Tokens || got.Turns != want.Turns ||
		got.WallTime != want.WallTime || got.USD < 0.599 || got.USD > 0.601 {
		t.Fatalf("effective %+v, want %+v", got, want)
	}
	sib.Charge(Spend{Turns: 7})
	if got := c.Effective(t0); got.Turns != 1 {
		t.Fatalf("with nothing free the limit reads %d turns, want 1 (0 would not limit)", got.Turns)
	}
	if got := (*Account)(nil).Effective(t0); !got.IsZero() {
		t.Fatalf("no account limits %+v", got)
	}
}
