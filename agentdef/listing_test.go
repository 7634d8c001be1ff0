package agentdef

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListing(t *testing.T) {
	mk := func(front string) *Definition {
		t.Helper()
		d, diags := ParseFile("x.md", md(front), SourceProject)
		if d == nil {
			t.Fatalf("not loaded: %v", diags)
		}
		return d
	}
	defs := []*Definition{
		mk("name: zed\ndescription: Last one\ntools: Read, Bash(git diff:*)\n"),
		mk("name: Alpha\ndescription: |\n  Two lines\n  here\n"),
		mk("name: guard\ndescription: Reads only\ndisallowedTools: Write, Edit\n"),
		mk("name: none\ndescription: Nothing\ntools: Read\ndisallowedTools: Read\n"),
		mk("name: mem\ndescription: Remembers\ntools: Grep\nmemory: project\n"),
	}
	want := "- Alpha: Two lines\nhere\n (Tools: All tools)\n" +
		"- guard: Reads only (Tools: All tools except Write, Edit)\n" +
		"- mem: Remembers (Tools: Grep, Write, Edit, Read)\n" +
		"- none: Nothing (Tools: None)\n" +
		"- zed: Last one (Tools: Read, Bash(git diff:*))\n"
	if diff := cmp.Diff(want, Listing(defs)); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if defs[0].Name != "zed" {
		t.Error("Listing reordered its input")
	}
	if Listing(nil) != "" {
		t.Error("empty listing not empty")
	}
}

// TestListingDeterministic renders the corpus in many input orders; the
// bytes must not change.
func TestListingDeterministic(t *testing.T) {
	corpus := corpusDir(t)
	var defs []*Definition
	for _, r := range readOracle(t, corpus) {
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := ParseFile(r.File, data, SourceProject); d != nil {
			defs = append(defs, d)
		}
	}
	defs = append(defs, Builtins()...)
	want := Listing(defs)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		rng.Shuffle(len(defs), func(a, b int) { defs[a], defs[b] = defs[b], defs[a] })
		if got := Listing(defs); got != want {
			t.Fatalf("listing changed with input order (round %d)", i)
		}
	}
}
