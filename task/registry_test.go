package task

import (
	"slices"
	"testing"
)

// LiveBelow finds every live task under an agent — children and theirs —
// in the order they were added, whatever order the tree was built in (a
// resumed agent is added again, after its children), and leaves out the
// agent itself, ended tasks and other subtrees. Stop reaches the same
// subtree.
func TestLiveBelowAndStop(t *testing.T) {
	t.Parallel()
	r := NewRegistry(nil)
	stopped := map[string]bool{}
	add := func(id, parent string) {
		t.Helper()
		if err := r.Add(Info{ID: id, Parent: parent, Status: Running}, func() { stopped[id] = true }); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "main")
	add("b", "a")
	add("c", "b")
	add("other", "main")
	add("d", "other")
	add("done", "a")
	r.Finish("done", Completed, "")
	// a ends and is continued (SendMessage): it is added again, now after
	// its children; then it starts one more.
	r.Finish("a", Completed, "")
	add("a", "main")
	add("e", "a")
	ids := func(infos []Info) []string {
		var out []string
		for _, i := range infos {
			out = append(out, i.ID)
		}
		return out
	}
	for _, tc := range []struct {
		agent string
		want  []string
	}{
		{"a", []string{"b", "c", "e"}},
		{"b", []string{"c"}},
		{"main", []string{"b", "c", "other", "d", "a", "e"}},
		{"c", nil},
		{"nobody", nil},
	} {
		if got := ids(r.LiveBelow(tc.agent)); !slices.Equal(got, tc.want) {
			t.Errorf("LiveBelow(%s) = %v, want %v", tc.agent, got, tc.want)
		}
	}
	if _, err := r.Stop("a"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c", "e"} {
		if !stopped[id] {
			t.Errorf("Stop(a) did not stop %s", id)
		}
	}
	if stopped["other"] || stopped["d"] {
		t.Errorf("Stop(a) reached another subtree: %v", stopped)
	}
}
