package agentdef

import (
	"slices"
	"strings"
)

// ToolsNote renders what a definition may use, as the listing shows it:
// "All tools", "All tools except A, B", "None", or the allow-list (after
// removing denied entries and adding the memory tools of S-4.7).
func ToolsNote(d *Definition) string {
	var b strings.Builder
	writeToolsNote(&b, d)
	return b.String()
}

func writeToolsNote(b *strings.Builder, d *Definition) {
	deny := d.DisallowedTools
	if hasRaw(deny, "*") {
		b.WriteString("None")
		return
	}
	if d.AllTools() {
		if len(deny) == 0 {
			b.WriteString("All tools")
			return
		}
		b.WriteString("All tools except ")
		writeRaw(b, deny, nil, 0)
		return
	}
	allow := d.Tools
	if d.Memory != "" && len(d.Tools) > 0 {
		allow = d.EffectiveTools()
	}
	if writeRaw(b, allow, deny, 0) == 0 {
		b.WriteString("None")
	}
}

// writeRaw writes the entries of es not in skip, joined by ", ", and
// returns how many it wrote.
func writeRaw(b *strings.Builder, es, skip []ToolEntry, n int) int {
	for _, e := range es {
		if hasRaw(skip, e.Raw) {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Raw)
		n++
	}
	return n
}

// Listing renders the agent listing of S-3.5: one line per definition,
// "- <name>: <description> (Tools: <note>)", each ending in "\n", sorted
// with SortDefinitions. The description is inserted verbatim (it may hold
// newlines). The same definitions always give the same bytes, since the
// listing sits in the cached prompt prefix.
func Listing(defs []*Definition) string {
	sorted := slices.Clone(defs)
	SortDefinitions(sorted)
	n := 0
	for _, d := range sorted {
		n += len(d.Name) + len(d.Description) + 32
	}
	var b strings.Builder
	b.Grow(n)
	for _, d := range sorted {
		if d == nil {
			continue
		}
		b.WriteString("- ")
		b.WriteString(d.Name)
		b.WriteString(": ")
		b.WriteString(d.Description)
		b.WriteString(" (Tools: ")
		writeToolsNote(&b, d)
		b.WriteString(")\n")
	}
	return b.String()
}

// SortDefinitions orders definitions by name the way the listing does:
// names made only of ASCII first, compared case-insensitively (lower case
// first on a tie), then the others by bytes; equal names by source
// precedence, path and description, so the order never depends on the
// input's.
func SortDefinitions(defs []*Definition) {
	type keyed struct {
		d     *Definition
		ascii bool
		lower string
	}
	ks := make([]keyed, len(defs))
	for i, d := range defs {
		ks[i].d = d
		if d != nil {
			ks[i].ascii = isASCII(d.Name)
			if ks[i].ascii {
				ks[i].lower = asciiLower(d.Name)
			}
		}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int {
		a, b := x.d, y.d
		if a == nil || b == nil {
			switch {
			case a == b:
				return 0
			case a == nil:
				return 1
			}
			return -1
		}
		switch {
		case x.ascii && !y.ascii:
			return -1
		case !x.ascii && y.ascii:
			return 1
		case x.ascii:
			if c := strings.Compare(x.lower, y.lower); c != 0 {
				return c
			}
			// Same letters: lower case first, as localeCompare does.
			if c := strings.Compare(b.Name, a.Name); c != 0 {
				return c
			}
		default:
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
		}
		if c := a.Source.rank() - b.Source.rank(); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Description, b.Description)
	})
	for i := range ks {
		defs[i] = ks[i].d
	}
}

// asciiLower lowercases an ASCII string, allocating only when needed.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
