package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	xansi "github.com/charmbracelet/x/ansi"
)

func renderPlain(t *testing.T, text string, width int) []string {
	t.Helper()
	st := newStyles(true)
	lines := markdown{}.render(text, width, &st)
	if len(lines) == 0 {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = xansi.Strip(l)
	}
	return out
}

func TestMarkdownBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		width    int
		want     []string
	}{
		{"paragraph wraps at spaces", "one two three four five six", 14,
			[]string{"one two three", "four five six"}},
		{"lines of a paragraph join", "one\ntwo\n\nthree", 40,
			[]string{"one two", "", "three"}},
		{"hard break", "one  \ntwo", 40, []string{"one", "two"}},
		{"emphasis and code", "a **bold** and *it* and `x *y*` and ~~gone~~ snake_case_name", 80,
			[]string{"a bold and it and x *y* and gone snake_case_name"}},
		{"escapes", `\*not\* \# \[x\]`, 40, []string{`*not* # [x]`}},
		{"atx and setext headings", "# Title #\ntext\n\nSub\n---", 40,
			[]string{"Title", "", "text", "", "Sub"}},
		{"bullets nest", "- a\n- b\n  - c\n    d\n  - f\n- e", 40,
			[]string{"• a", "• b", "  • c d", "  • f", "• e"}},
		{"ordered keeps its start", "3. x\n4. y\n\n5. z", 40,
			[]string{"3. x", "4. y", "5. z"}},
		{"list item wraps under its text", "- alpha beta gamma delta", 14,
			[]string{"• alpha beta", "  gamma delta"}},
		{"fenced code, not wrapped at spaces, not styled as Markdown", "```go\nx := *p  // **no**\n```\nafter", 40,
			[]string{"  x := *p  // **no**", "", "after"}},
		{"unclosed fence while streaming", "```\ncode", 40, []string{"  code"}},
		{"indented code", "para\n\n    code\n      more", 40, []string{"para", "", "  code", "    more"}},
		{"quote", "> quoted **text**\n> more\n\nout", 40, []string{"│ quoted text more", "", "out"}},
		{"nested quote", "> a\n> > b", 40, []string{"│ a", "│ ", "│ │ b"}},
		{"link shows its target", "see [the docs](https://x.dev/a \"t\") and <https://y.dev>", 80,
			[]string{"see the docs (https://x.dev/a) and https://y.dev"}},
		{"link whose text is its target", "[https://x.dev](https://x.dev)", 80, []string{"https://x.dev"}},
		{"thematic break", "a\n\n***\n\nb", 6, []string{"a", "", "──────────", "", "b"}},
		{"table", "| name | n |\n|:---|---:|\n| a | 1 |\n| bb | 22 |", 40,
			[]string{"name │  n", "─────┼───", "a    │  1", "bb   │ 22"}},
		{"table too wide falls back", "| h1 | h2 | h3 | h4 |\n|---|---|---|---|\n| a | b | c | d |", 10,
			[]string{"h1: a", "h2: b", "h3: c", "h4: d"}},
		{"long word is cut", "abcdefghijklmnop", 10, []string{"abcdefghij", "klmnop"}},
		{"control characters dropped", "a\x1b[31mb\x07c", 40, []string{"a[31mbc"}},
		{"empty", "", 40, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, renderPlain(t, tt.in, tt.width)); diff != "" {
				t.Errorf("render(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestMarkdownStyles checks the escape codes of the inline styles: every
// line closes what it opens.
func TestMarkdownStyles(t *testing.T) {
	t.Parallel()
	st := newStyles(true)
	lines := markdown{}.render("**bold words that wrap around** end", 12, &st)
	if len(lines) < 2 {
		t.Fatalf("want the bold run wrapped over lines, got %q", lines)
	}
	for _, l := range lines[:2] {
		if !strings.HasPrefix(l, st.bold.pre) || !strings.HasSuffix(l, "\x1b[m") {
			t.Errorf("line %q: want it to open bold and close at its end", l)
		}
	}
	if got := (markdown{}).render("`c`", 20, &st)[0]; got != st.info.pre+"c\x1b[m" {
		t.Errorf("inline code = %q, want the info colour", got)
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{
		"# h\n\npara **b** *i* `c`\n\n- a\n  - b\n1. x\n\n> q\n\n```\ncode\n```\n| a | b |\n|---|---|\n| 1 | 2 |",
		"***x***", "_a_b_", "[a](b)", "![i](u)", "<http://x>", "- ", "1.", "> > > >", "~~~\n~~~", "\t-\ta",
		"| a |\n|-|\n", "a\\\nb", "**a *b** c*", "世界世界世界世界世界世界",
	} {
		f.Add(s, 20)
	}
	st := newStyles(true)
	f.Fuzz(func(t *testing.T, text string, width int) {
		if len(text) > 4096 {
			return
		}
		width = 10 + (width%200+200)%200
		for _, l := range (markdown{}).render(text, width, &st) {
			if !utf8.ValidString(l) {
				t.Fatalf("invalid UTF-8 in %q", l)
			}
			plain := xansi.Strip(l)
			if strings.ContainsAny(plain, "\x1b\r\n\x07") {
				t.Fatalf("control character left in %q", plain)
			}
			if w := cellWidth(plain); w > width {
				t.Fatalf("line %q is %d cells, wider than %d", plain, w, width)
			}
		}
	})
}
