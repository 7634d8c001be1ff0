package task

import "testing"

// TestLiveChildrenCounts: the live count per parent follows adds, ends and
// an ended task added again (a resumed agent), and ignores other parents'
// tasks and a second Finish.
func TestLiveChildrenCounts(t *testing.T) {
	r := NewRegistry(nil)
	add := func(id, parent string) {
		t.Helper()
		if err := r.Add(Info{ID: id, Parent: parent, Status: Running}, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(parent string, n int) {
		t.Helper()
		if got := r.LiveChildren(parent); got != n {
			t.Fatalf("LiveChildren(%s) = %d, want %d", parent, got, n)
		}
	}
	add("a", "main")
	add("b", "main")
	add("c", "a")
	want("main", 2)
	want("a", 1)
	want("b", 0)
	r.Finish("b", Completed, "")
	r.Finish("b", Failed, "") // counts once
	want("main", 1)
	add("b", "main") // continued
	want("main", 2)
	r.Finish("a", Killed, "")
	r.Finish("b", Completed, "")
	want("main", 0)
	want("a", 1)
	r.Finish("c", Completed, "")
	want("a", 0)
	if got := r.Live(); got != 0 {
		t.Fatalf("Live() = %d", got)
	}
	if below := r.below("main"); len(below) != 3 || !below["c"] {
		t.Fatalf("below(main) = %v", below)
	}
}
