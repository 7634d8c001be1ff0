package task

import "testing"

func TestCanMove(t *testing.T) {
	t.Parallel()
	allowed := map[[2]Status]bool{
		{Pending, Running}: true, {Pending, Killed}: true,
		{Running, Backgrounded}: true, {Running, Completed}: true, {Running, Failed}: true, {Running, Killed}: true,
		{Backgrounded, Completed}: true, {Backgrounded, Failed}: true, {Backgrounded, Killed}: true,
		{Running, BudgetExhausted}: true, {Backgrounded, BudgetExhausted}: true,
	}
	for _, from := range Statuses() {
		for _, to := range Statuses() {
			if got, want := CanMove(from, to), allowed[[2]Status{from, to}]; got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if CanMove("", Running) || CanMove(Running, "") {
		t.Error("the zero status moves")
	}
}

func TestStatusPredicates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s               Status
		valid, terminal bool
	}{
		{Pending, true, false}, {Running, true, false}, {Backgrounded, true, false},
		{Completed, true, true}, {Failed, true, true}, {Killed, true, true}, {BudgetExhausted, true, true},
		{"", false, false}, {"done", false, false},
	}
	for _, c := range cases {
		if c.s.Valid() != c.valid || c.s.Terminal() != c.terminal {
			t.Errorf("%q: valid %v terminal %v, want %v %v", c.s, c.s.Valid(), c.s.Terminal(), c.valid, c.terminal)
		}
	}
}
