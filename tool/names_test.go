package tool

import "testing"

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Known() {
		if seen[n] {
			t.Errorf("%s registered twice", n)
		}
		seen[n] = true
		if _, ok := Lookup(n); !ok {
			t.Errorf("Lookup(%s) failed", n)
		}
	}
	tests := []struct {
		name     string
		known    bool
		category Category
	}{
		{Read, true, CategoryRead},
		{LS, true, CategoryRead},
		{MultiEdit, true, CategoryEdit},
		{Bash, true, CategoryOther},
		{"mcp__s__t", true, CategoryOther},
		{"mcp__", false, CategoryOther},
		{"Bsh", false, CategoryOther},
		{"read", false, CategoryOther},
	}
	for _, tt := range tests {
		in, ok := Lookup(tt.name)
		if ok != tt.known || in.Category != tt.category {
			t.Errorf("Lookup(%q) = %+v, %v; want known %v, category %v", tt.name, in, ok, tt.known, tt.category)
		}
	}
	if Canonical(Task) != Agent || Canonical(Read) != Read {
		t.Error("Canonical")
	}
}

// TestFoldVariant: a name differing from a registered one only by case
// gives the registered spelling; the exact name and an unknown one give "".
func TestFoldVariant(t *testing.T) {
	for name, want := range map[string]string{"read": Read, "BASH": Bash, Read: "", "Nope": "", "": ""} {
		if got := FoldVariant(name); got != want {
			t.Errorf("FoldVariant(%q) = %q, want %q", name, got, want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { FoldVariant("webfetch") }); n != 0 {
		t.Errorf("FoldVariant allocates %v times, want 0", n)
	}
}
