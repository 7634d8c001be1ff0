package agentdef

import (
	"slices"
	"strings"
)

// ToolsNote renders what a definition may use, as the listing shows it:
// "All tools", "All tools except A, B", "None", or the allow-list (after
// removing denied entries and adding the memory tools of S-4.7).
func ToolsNote(d *Definition) string {
	allow := d.EffectiveTools()
	deny := d.DisallowedTools
	if hasRaw(deny, "*") {
		return "None"
	}
	if allow == nil {
		if len(deny) == 0 {
			return "All tools"
		}
		return "All tools except " + joinRaw(deny)
	}
	if len(deny) > 0 {
		kept := make([]ToolEntry, 0, len(allow))
		for _, e := range allow {
			if !hasRaw(deny, e.Raw) {
				kept = append(kept, e)
			}
		}
		allow = kept
	}
	if len(allow) == 0 {
		return "None"
	}
	return joinRaw(allow)
}

func joinRaw(es []ToolEntry) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Raw)
	}
	return b.String()
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
		b.WriteString(ToolsNote(d))
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
	slices.SortStableFunc(defs, func(a, b *Definition) int {
		if a == nil || b == nil {
			switch {
			case a == b:
				return 0
			case a == nil:
				return 1
			}
			return -1
		}
		if c := compareNames(a.Name, b.Name); c != 0 {
			return c
		}
		if c := a.Source.rank() - b.Source.rank(); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Description, b.Description)
	})
}

func compareNames(a, b string) int {
	aa, ba := isASCII(a), isASCII(b)
	switch {
	case aa && !ba:
		return -1
	case !aa && ba:
		return 1
	case aa:
		if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
			return c
		}
		// Same letters: lower case first, as localeCompare does.
		return strings.Compare(b, a)
	}
	return strings.Compare(a, b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
