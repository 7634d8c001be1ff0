package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/tool"
)

// cellWidth is the display width of s, escape codes ignored, measured
// the way Bubble Tea's renderer measures by default (wcwidth).
func cellWidth(s string) int { return ansi.StringWidthWc(s) }

// callBody renders a call's exact input for a permission prompt: the
// whole command for Bash, a diff for edits, the content for writes, the
// JSON input otherwise.
func callBody(st styles, name string, input json.RawMessage, cwd string, width int) []string {
	m := inputFields(input)
	wrapIndented := func(text string) []string {
		return indent(wrapLines(text, width-2), "  ", "  ")
	}
	switch name {
	case tool.Bash:
		out := []string{st.bold.Render("Bash command")}
		out = append(out, wrapIndented(field(m, "command"))...)
		if d := field(m, "description"); d != "" {
			out = append(out, st.dim.Render(clip("  "+d, width)))
		}
		return out
	case tool.Edit:
		head := "Edit " + relPath(field(m, "file_path"), cwd)
		if all, _ := m["replace_all"].(bool); all {
			head += " (every occurrence)"
		}
		return append([]string{st.bold.Render(clip(head, width))}, diffLines(st, field(m, "old_string"), field(m, "new_string"), width)...)
	case tool.MultiEdit:
		out := []string{st.bold.Render(clip("Edit "+relPath(field(m, "file_path"), cwd), width))}
		edits, _ := m["edits"].([]any)
		for i, e := range edits {
			em, _ := e.(map[string]any)
			if len(edits) > 1 {
				out = append(out, st.dim.Render(fmt.Sprintf("  edit %d of %d", i+1, len(edits))))
			}
			out = append(out, diffLines(st, field(em, "old_string"), field(em, "new_string"), width)...)
		}
		return out
	case tool.Write:
		content := field(m, "content")
		out := []string{st.bold.Render(clip(fmt.Sprintf("Write %s (%d lines)", relPath(field(m, "file_path"), cwd), lineCount(content)), width))}
		for _, l := range strings.Split(strings.TrimRight(content, "\n"), "\n") {
			out = append(out, st.diffAdd.Render(clip("+ "+l, width)))
		}
		return out
	}
	out := []string{st.bold.Render(name)}
	var b bytes.Buffer
	if err := json.Indent(&b, input, "  ", "  "); err != nil || len(input) == 0 {
		return append(out, wrapIndented(string(input))...)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		out = append(out, wrapLines("  "+l, width)...)
	}
	return out
}

// maxDiffLines bounds the lines a diff is computed over; past it the old
// text is shown removed and the new one added, whole.
const maxDiffLines = 400

// diffLines renders a line diff of old against new: unchanged lines, "-"
// removed and "+" added.
func diffLines(st styles, old, new string, width int) []string {
	a := strings.Split(strings.TrimRight(old, "\n"), "\n")
	b := strings.Split(strings.TrimRight(new, "\n"), "\n")
	if old == "" {
		a = nil
	}
	if new == "" {
		b = nil
	}
	var out []string
	del := func(l string) { out = append(out, st.diffDel.Render(clip("- "+l, width))) }
	add := func(l string) { out = append(out, st.diffAdd.Render(clip("+ "+l, width))) }
	same := func(l string) { out = append(out, st.dim.Render(clip("  "+l, width))) }
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		for _, l := range a {
			del(l)
		}
		for _, l := range b {
			add(l)
		}
		return out
	}
	// Longest common subsequence of lines, then a walk that prints it.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			same(a[i])
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			del(a[i])
			i++
		default:
			add(b[j])
			j++
		}
	}
	return out
}
