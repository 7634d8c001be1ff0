package builtin

import (
	"bufio"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReplaceExact checks Edit's matching: it never panics, replaces
// exactly what it reports, and refuses ambiguous or missing matches.
func FuzzReplaceExact(f *testing.F) {
	f.Add("a b a", "a", "c", false)
	f.Add("a b a", "a", "c", true)
	f.Add("x\r\ny\r\n", "x\ny", "z\nw", false)
	f.Add("aaa", "aa", "b", true)
	f.Add("", "a", "b", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		got, from, to, n, problem := replaceExact(content, old, repl, all)
		if problem != "" {
			if old != "" && strings.Count(content, old) == 1 {
				t.Fatalf("unique match refused: %s", problem)
			}
			return
		}
		if n < 1 || (!all && n != 1) {
			t.Fatalf("count %d with all=%v", n, all)
		}
		if from < 0 || to < from || to > len(got) {
			t.Fatalf("range [%d,%d) outside result of %d bytes", from, to, len(got))
		}
		usedOld, usedRepl := old, repl
		if !strings.Contains(content, old) {
			usedOld, usedRepl = strings.ReplaceAll(old, "\n", "\r\n"), strings.ReplaceAll(repl, "\n", "\r\n")
		}
		if got[from:to] != usedRepl {
			t.Fatalf("replacement range holds %q, want %q", got[from:to], usedRepl)
		}
		if all {
			if want := strings.ReplaceAll(content, usedOld, usedRepl); got != want {
				t.Fatalf("replace all: got %q want %q", got, want)
			}
		} else if want := strings.Replace(content, usedOld, usedRepl, 1); got != want {
			t.Fatalf("replace one: got %q want %q", got, want)
		}
	})
}

// FuzzSliceLines compares Read's streaming line slicer with a plain split.
func FuzzSliceLines(f *testing.F) {
	f.Add("a\nb\nc", 1, 2)
	f.Add("é very long line here\r\nx", 2, 1)
	f.Add("\n\n\n", 2, 5)
	f.Add(strings.Repeat("abcdefgh", 9)+"\nend\n", 1, 3)
	f.Fuzz(func(t *testing.T, data string, start, limit int) {
		if start < 1 || limit < 1 || start > 1000 || limit > 1000 {
			return
		}
		const maxChars = 5
		got, total, more, err := sliceLines(bufio.NewReaderSize(strings.NewReader(data), 16), start, limit, maxChars)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.SplitAfter(data, "\n")
		if all[len(all)-1] == "" {
			all = all[:len(all)-1]
		}
		var want []string
		for i := start - 1; i < len(all) && len(want) < limit; i++ {
			if i < 0 {
				continue
			}
			want = append(want, strings.TrimSuffix(strings.TrimSuffix(all[i], "\n"), "\r"))
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines, want %d", len(got), len(want))
		}
		if wantMore := start-1+len(want) < len(all); more != wantMore {
			t.Fatalf("more = %v, want %v", more, wantMore)
		}
		if total > len(all) {
			t.Fatalf("total %d > %d lines", total, len(all))
		}
		for i, w := range want {
			r := []rune(w)
			if len(r) <= maxChars {
				if got[i] != string(r) {
					t.Fatalf("line %d = %q, want %q", i, got[i], w)
				}
				continue
			}
			if !strings.HasPrefix(got[i], string(r[:maxChars])+"… [line truncated: ") {
				t.Fatalf("line %d = %q, want a truncation of %q", i, got[i], w)
			}
			if !utf8.ValidString(got[i]) {
				t.Fatalf("line %d not valid UTF-8", i)
			}
		}
	})
}

// FuzzParseIgnoreLine makes sure no .gitignore line breaks the matcher.
func FuzzParseIgnoreLine(f *testing.F) {
	for _, s := range []string{"*.log", "!keep", "/a/b/", "**/x/**", `\#x`, "[", "a{b,c}"} {
		f.Add(s, "a/b/c.log", true)
	}
	f.Fuzz(func(t *testing.T, line, path string, isDir bool) {
		p, ok := parseIgnoreLine(line)
		if !ok {
			return
		}
		matchPatterns([]ignorePattern{p}, path, isDir, true)
	})
}
