package tui

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	xansi "github.com/charmbracelet/x/ansi"
)

// This file is the terminal UI's own Markdown renderer for the assistant's
// answers: headings, emphasis, strike-through, inline code, links, block
// quotes, nested lists, fenced and indented code blocks (not highlighted),
// thematic breaks and GFM tables. It is small on purpose: a full renderer
// (glamour, with chroma's lexers and styles, goldmark and bluemonday) ran
// tens of thousands of allocations of package init in every process,
// headless ones included. Every output line is self-contained (its styles
// are closed at its end) and at most width cells wide.

// mdStyle is a set of inline styles.
type mdStyle uint8

const (
	mdBold mdStyle = 1 << iota
	mdItalic
	mdStrike
	mdCode
	mdLink
	mdHeading
	mdDim
	mdCodeBlock
)

// mdInks holds the escape codes of each inline style.
type mdInks struct {
	bold, italic, strike, code, link, heading, dim, codeBlock ink
}

func newMDInks(st *styles) mdInks {
	return mdInks{
		bold:      st.bold,
		italic:    ink{pre: "\x1b[3m", post: "\x1b[m"},
		strike:    ink{pre: "\x1b[9m", post: "\x1b[m"},
		code:      st.info,
		link:      ink{pre: st.info.pre + "\x1b[4m", post: "\x1b[m"},
		heading:   st.title,
		dim:       st.dim,
		codeBlock: st.dim,
	}
}

// pre returns the escape codes that open style s.
func (k *mdInks) pre(s mdStyle) string {
	if s == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range []struct {
		bit mdStyle
		ink ink
	}{{mdHeading, k.heading}, {mdBold, k.bold}, {mdItalic, k.italic}, {mdStrike, k.strike}, {mdCode, k.code}, {mdLink, k.link}, {mdDim, k.dim}, {mdCodeBlock, k.codeBlock}} {
		if s&p.bit != 0 {
			b.WriteString(p.ink.pre)
		}
	}
	return b.String()
}

// markdown renders an answer's Markdown to terminal lines.
type markdown struct{}

// mdMaxDepth bounds how deep quotes and lists nest before their content is
// shown as plain paragraphs.
const mdMaxDepth = 12

// mdLookahead bounds how far an emphasis, link or code span looks for its
// end, so a long answer full of unmatched delimiters costs linear time.
const mdLookahead = 2000

func (markdown) render(text string, width int, st *styles) []string {
	if width < 10 {
		width = 10
	}
	r := mdRenderer{inks: newMDInks(st)}
	return r.render(text, width)
}

// mdRenderer renders one document.
type mdRenderer struct {
	inks mdInks
}

func (r *mdRenderer) render(text string, width int) []string {
	lines := strings.Split(mdSanitize(text), "\n")
	out := r.blocks(lines, width, 0)
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// mdSanitize makes text valid UTF-8 without control characters other than
// newlines, with tabs expanded to four-column stops: the model's text never
// reaches the terminal as escape sequences.
func mdSanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	col := 0
	for _, c := range s {
		switch {
		case c == '\n':
			b.WriteByte('\n')
			col = 0
		case c == '\t':
			n := 4 - col%4
			b.WriteString("    "[:n])
			col += n
		case c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0):
		default:
			b.WriteRune(c)
			col++
		}
	}
	return b.String()
}

func isBlank(l string) bool { return strings.TrimLeft(l, " ") == "" }

// indentOf returns the number of leading spaces of l.
func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// dropCols removes up to n leading spaces of l.
func dropCols(l string, n int) string {
	i := 0
	for i < n && i < len(l) && l[i] == ' ' {
		i++
	}
	return l[i:]
}

// fence reports whether l opens (or closes) a fenced code block: its
// character, the length of the run, and the rest of the line.
func fence(l string) (ch byte, n int, info string) {
	t := l[indentOf(l):]
	if indentOf(l) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, ""
	}
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return 0, 0, ""
	}
	return t[0], n, strings.TrimSpace(t[n:])
}

// heading returns the level and text of an ATX heading.
func heading(l string) (int, string) {
	if indentOf(l) > 3 {
		return 0, ""
	}
	t := l[indentOf(l):]
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ') {
		return 0, ""
	}
	s := strings.TrimSpace(t[n:])
	if e := strings.TrimRight(s, "#"); e == "" || strings.HasSuffix(e, " ") {
		s = strings.TrimSpace(e)
	}
	return n, s
}

// thematic reports whether l is a thematic break (---, ***, ___).
func thematic(l string) bool {
	if indentOf(l) > 3 {
		return false
	}
	var ch rune
	n := 0
	for _, c := range l {
		switch {
		case c == ' ':
		case ch == 0 && (c == '-' || c == '*' || c == '_'):
			ch, n = c, 1
		case c == ch:
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// setext returns the level of a setext underline (=== is 1, --- is 2).
func setext(l string) int {
	if indentOf(l) > 3 {
		return 0
	}
	t := strings.TrimSpace(l)
	switch {
	case t != "" && strings.Trim(t, "=") == "":
		return 1
	case t != "" && strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// listItem describes a list marker at the start of a line.
type listItem struct {
	ordered bool
	num     int
	delim   byte // '-', '*', '+', '.' or ')'
	content int  // column where the item's content starts
	rest    string
}

func parseListItem(l string) (listItem, bool) {
	ind := indentOf(l)
	if ind > 3 {
		return listItem{}, false
	}
	t := l[ind:]
	it := listItem{}
	var n int
	switch {
	case t != "" && (t[0] == '-' || t[0] == '*' || t[0] == '+'):
		it.delim, n = t[0], 1
	default:
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(t) || (t[n] != '.' && t[n] != ')') {
			return listItem{}, false
		}
		it.ordered, it.delim = true, t[n]
		it.num, _ = strconv.Atoi(t[:n])
		n++
	}
	after := t[n:]
	if after != "" && after[0] != ' ' {
		return listItem{}, false
	}
	sp := indentOf(after)
	if sp > 4 || strings.TrimSpace(after) == "" {
		sp = 1
	}
	it.content = ind + n + sp
	it.rest = strings.TrimLeft(after, " ")
	return it, true
}

// tableRow splits a GFM table row into its cells.
func tableRow(l string) []string {
	t := strings.TrimSpace(l)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// tableAlign parses a GFM delimiter row: one alignment per column
// ('l', 'c', 'r'), or nil when l is not one.
func tableAlign(l string) []byte {
	if !strings.Contains(l, "-") || indentOf(l) > 3 {
		return nil
	}
	var al []byte
	for _, c := range tableRow(l) {
		if c == "" || strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return nil
		}
		a := byte('l')
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":") && len(c) > 1:
			a = 'c'
		case strings.HasSuffix(c, ":"):
			a = 'r'
		}
		al = append(al, a)
	}
	return al
}

// startsBlock reports whether l starts a block that ends a paragraph.
func startsBlock(l string) bool {
	if c, _, _ := fence(l); c != 0 {
		return true
	}
	if n, _ := heading(l); n > 0 {
		return true
	}
	if thematic(l) {
		return true
	}
	t := strings.TrimLeft(l, " ")
	if indentOf(l) <= 3 && strings.HasPrefix(t, ">") {
		return true
	}
	if it, ok := parseListItem(l); ok && it.rest != "" && (!it.ordered || it.num == 1) {
		return true
	}
	return false
}

// blocks renders the block structure of lines at width.
func (r *mdRenderer) blocks(lines []string, width, depth int) []string {
	var out []string
	add := func(ls []string) {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	nest := depth < mdMaxDepth && width >= 8
	for i := 0; i < len(lines); {
		l := lines[i]
		if isBlank(l) {
			i++
			continue
		}
		if ch, n, _ := fence(l); ch != 0 {
			ind := indentOf(l)
			var code []string
			j := i + 1
			for ; j < len(lines); j++ {
				if c2, n2, info := fence(lines[j]); c2 == ch && n2 >= n && info == "" {
					break
				}
				code = append(code, dropCols(lines[j], ind))
			}
			add(r.codeBlock(code, width))
			i = j + 1
			continue
		}
		if lv, h := heading(l); lv > 0 {
			add(r.inline(h, width, mdHeading|mdBold))
			i++
			continue
		}
		if thematic(l) {
			add([]string{r.inks.dim.Render(strings.Repeat("─", width))})
			i++
			continue
		}
		if nest && indentOf(l) <= 3 && strings.HasPrefix(strings.TrimLeft(l, " "), ">") {
			var inner []string
			j := i
			for ; j < len(lines); j++ {
				t := strings.TrimLeft(lines[j], " ")
				if indentOf(lines[j]) > 3 || !strings.HasPrefix(t, ">") {
					// A lazy continuation line belongs to the quote's paragraph.
					if j > i && !isBlank(lines[j]) && !isBlank(inner[len(inner)-1]) && !startsBlock(lines[j]) {
						inner = append(inner, lines[j])
						continue
					}
					break
				}
				t = strings.TrimPrefix(t[1:], " ")
				inner = append(inner, t)
			}
			body := r.blocks(inner, width-2, depth+1)
			bar := r.inks.dim.Render("│") + " "
			for k := range body {
				body[k] = bar + body[k]
			}
			add(body)
			i = j
			continue
		}
		if it, ok := parseListItem(l); ok && nest {
			ls, j := r.list(lines, i, it, width, depth)
			if i > 0 && !isBlank(lines[i-1]) {
				// A list right under a line of text (an item's own text
				// above its sub-list) stays tight.
				out = append(out, ls...)
			} else {
				add(ls)
			}
			i = j
			continue
		}
		if i+1 < len(lines) && strings.Contains(l, "|") {
			if al := tableAlign(lines[i+1]); al != nil && len(al) == len(tableRow(l)) {
				rows := [][]string{tableRow(l)}
				j := i + 2
				for ; j < len(lines) && !isBlank(lines[j]) && strings.Contains(lines[j], "|") && !startsBlock(lines[j]); j++ {
					rows = append(rows, tableRow(lines[j]))
				}
				add(r.table(rows, al, width))
				i = j
				continue
			}
		}
		if indentOf(l) >= 4 {
			var code []string
			j := i
			for ; j < len(lines) && (isBlank(lines[j]) || indentOf(lines[j]) >= 4); j++ {
				code = append(code, dropCols(lines[j], 4))
			}
			for len(code) > 0 && isBlank(code[len(code)-1]) {
				code = code[:len(code)-1]
			}
			add(r.codeBlock(code, width))
			i = j
			continue
		}
		// A paragraph: lines up to a blank line or another block.
		var para strings.Builder
		j := i
		level := 0
		for ; j < len(lines); j++ {
			lj := lines[j]
			if j > i {
				if lv := setext(lj); lv > 0 {
					level = lv
					j++
					break
				}
			}
			if isBlank(lj) || (j > i && startsBlock(lj)) {
				break
			}
			if j > i {
				if prev := lines[j-1]; strings.HasSuffix(prev, "  ") || strings.HasSuffix(prev, `\`) {
					para.WriteByte('\n')
				} else {
					para.WriteByte(' ')
				}
			}
			t := strings.TrimSpace(lj)
			if strings.HasSuffix(lj, `\`) && j+1 < len(lines) && !isBlank(lines[j+1]) {
				t = strings.TrimSuffix(t, `\`)
			}
			para.WriteString(t)
		}
		if level > 0 {
			add(r.inline(para.String(), width, mdHeading|mdBold))
		} else {
			add(r.inline(para.String(), width, 0))
		}
		i = j
	}
	return out
}

// list renders the list starting at lines[i] with first item it and
// returns the index of the first line after it.
func (r *mdRenderer) list(lines []string, i int, it listItem, width, depth int) ([]string, int) {
	var out []string
	num := it.num
	for i < len(lines) {
		cur, ok := parseListItem(lines[i])
		if !ok || cur.ordered != it.ordered || cur.delim != it.delim {
			break
		}
		body := []string{cur.rest}
		j := i + 1
		for j < len(lines) {
			lj := lines[j]
			if isBlank(lj) {
				k := j
				for k < len(lines) && isBlank(lines[k]) {
					k++
				}
				if k < len(lines) && indentOf(lines[k]) >= cur.content {
					for ; j < k; j++ {
						body = append(body, "")
					}
					continue
				}
				break
			}
			if indentOf(lj) >= cur.content {
				body = append(body, dropCols(lj, cur.content))
				j++
				continue
			}
			if _, isItem := parseListItem(lj); isItem || startsBlock(lj) || isBlank(body[len(body)-1]) {
				break
			}
			body = append(body, strings.TrimLeft(lj, " ")) // lazy continuation
			j++
		}
		marker := "• "
		if it.ordered {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		mw := cellWidth(marker)
		if mw > width/2 {
			marker, mw = "• ", 2
		}
		inner := r.blocks(body, width-mw, depth+1)
		if len(inner) == 0 {
			inner = []string{""}
		}
		out = append(out, indent(inner, marker, strings.Repeat(" ", mw))...)
		// Blank lines between items continue the list.
		k := j
		for k < len(lines) && isBlank(lines[k]) {
			k++
		}
		if k < len(lines) {
			if nx, ok := parseListItem(lines[k]); ok && nx.ordered == it.ordered && nx.delim == it.delim {
				j = k
			}
		}
		i = j
	}
	return out, i
}

// codeBlock renders code lines unhighlighted, indented by two cells and
// hard-wrapped at width.
func (r *mdRenderer) codeBlock(code []string, width int) []string {
	w := max(width-2, 1)
	out := make([]string, 0, len(code))
	for _, l := range code {
		l = strings.TrimRight(l, " ")
		if l == "" {
			out = append(out, "")
			continue
		}
		for l != "" {
			head, tail := cutCells(l, w)
			out = append(out, "  "+r.inks.codeBlock.Render(head))
			l = tail
		}
	}
	return out
}

// table renders a GFM table, its columns narrowed (cells wrapped) to fit
// width, or one "header: value" line per cell when even that fails.
func (r *mdRenderer) table(rows [][]string, al []byte, width int) []string {
	ncol := len(al)
	cells := make([][][]span, len(rows))
	colw := make([]int, ncol)
	for ri, row := range rows {
		cells[ri] = make([][]span, ncol)
		for c := 0; c < ncol; c++ {
			txt := ""
			if c < len(row) {
				txt = row[c]
			}
			st := mdStyle(0)
			if ri == 0 {
				st = mdBold
			}
			cells[ri][c] = r.parseInline(txt, st, nil, 0)
			colw[c] = max(colw[c], spanWidth(cells[ri][c]), 1)
		}
	}
	sepw := 3 * (ncol - 1)
	total := sepw
	for _, w := range colw {
		total += w
	}
	for total > width {
		wi := 0
		for c := range colw {
			if colw[c] > colw[wi] {
				wi = c
			}
		}
		if colw[wi] <= 4 {
			break
		}
		colw[wi]--
		total--
	}
	if total > width {
		var out []string
		for ri := 1; ri < len(rows); ri++ {
			if ri > 1 {
				out = append(out, "")
			}
			for c := 0; c < ncol; c++ {
				sp := append(append(append([]span(nil), cells[0][c]...), span{text: ": "}), cells[ri][c]...)
				out = append(out, r.wrap(sp, width)...)
			}
		}
		return out
	}
	bar := r.inks.dim.Render(" │ ")
	var out []string
	for ri := range cells {
		wrapped := make([][]string, ncol)
		h := 1
		for c := 0; c < ncol; c++ {
			wrapped[c] = r.wrap(cells[ri][c], colw[c])
			h = max(h, len(wrapped[c]))
		}
		for k := 0; k < h; k++ {
			var b strings.Builder
			for c := 0; c < ncol; c++ {
				if c > 0 {
					b.WriteString(bar)
				}
				s := ""
				if k < len(wrapped[c]) {
					s = wrapped[c][k]
				}
				pad := colw[c] - cellWidth(s)
				left := 0
				switch al[c] {
				case 'r':
					left = pad
				case 'c':
					left = pad / 2
				}
				b.WriteString(strings.Repeat(" ", left) + s)
				if c < ncol-1 {
					b.WriteString(strings.Repeat(" ", pad-left))
				}
			}
			out = append(out, b.String())
		}
		if ri == 0 {
			parts := make([]string, ncol)
			for c := range parts {
				parts[c] = strings.Repeat("─", colw[c])
			}
			out = append(out, r.inks.dim.Render(strings.Join(parts, "─┼─")))
		}
	}
	return out
}

// span is a run of text in one style.
type span struct {
	text string
	st   mdStyle
}

func spanWidth(sp []span) int {
	w := 0
	for _, s := range sp {
		w += cellWidth(s.text)
	}
	return w
}

// inline renders a paragraph's text with base style, wrapped at width.
func (r *mdRenderer) inline(text string, width int, base mdStyle) []string {
	return r.wrap(r.parseInline(text, base, nil, 0), width)
}

func isPunct(c byte) bool {
	return c < utf8.RuneSelf && unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0
}

func isSpaceAt(s string, i int) bool { return i < 0 || i >= len(s) || s[i] == ' ' || s[i] == '\n' }

func isWordAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// closer finds the end of an emphasis opened by delim at s[from-len(delim)]:
// a delim not preceded by a space, within the lookahead.
func closer(s string, from int, delim string) int {
	end := min(len(s), from+mdLookahead)
	for j := from; j+len(delim) <= end; {
		k := strings.Index(s[j:end], delim)
		if k < 0 {
			return -1
		}
		k += j
		if k > from && !isSpaceAt(s, k-1) && (delim[0] != '_' || !isWordAt(s, k+len(delim))) {
			return k
		}
		j = k + 1
	}
	return -1
}

// matching finds the bracket closing the one opened before from, within
// the lookahead; escapes are skipped.
func matching(s string, from int, open, close byte) int {
	d := 1
	end := min(len(s), from+mdLookahead)
	for j := from; j < end; j++ {
		switch s[j] {
		case '\\':
			j++
		case open:
			d++
		case close:
			d--
			if d == 0 {
				return j
			}
		}
	}
	return -1
}

// mdMaxInline bounds how deep inline styles nest.
const mdMaxInline = 16

// parseInline appends the spans of s in style st to out.
func (r *mdRenderer) parseInline(s string, st mdStyle, out []span, depth int) []span {
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, span{text: lit.String(), st: st})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			lit.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			run := s[i : i+n]
			j := i + n
			end := min(len(s), j+mdLookahead)
			found := -1
			for j < end {
				k := strings.Index(s[j:end], run)
				if k < 0 {
					break
				}
				k += j
				m := k
				for m < len(s) && s[m] == '`' {
					m++
				}
				if m-k == n {
					found = k
					break
				}
				j = m
			}
			if found < 0 {
				lit.WriteString(run)
				i += n
				continue
			}
			code := strings.ReplaceAll(s[i+n:found], "\n", " ")
			if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			flush()
			out = append(out, span{text: code, st: st | mdCode})
			i = found + n
			continue
		case (c == '*' || c == '_' || c == '~') && depth < mdMaxInline:
			n := 0
			for i+n < len(s) && s[i+n] == c {
				n++
			}
			if c == '_' && isWordAt(s, i-1) || isSpaceAt(s, i+n) {
				lit.WriteString(s[i : i+n])
				i += n
				continue
			}
			done := false
			for d := min(n, 3); d >= 1 && !done; d-- {
				var add mdStyle
				switch {
				case c == '~' && d == 2:
					add = mdStrike
				case c == '~':
					continue
				case d == 3:
					add = mdBold | mdItalic
				case d == 2:
					add = mdBold
				default:
					add = mdItalic
				}
				delim := strings.Repeat(string(c), d)
				start := i + n - d
				k := closer(s, start+d, delim)
				if k < 0 {
					continue
				}
				lit.WriteString(s[i:start])
				flush()
				out = r.parseInline(s[start+d:k], st|add, out, depth+1)
				i = k + d
				done = true
			}
			if !done {
				lit.WriteString(s[i : i+n])
				i += n
			}
			continue
		case (c == '[' || (c == '!' && i+1 < len(s) && s[i+1] == '[')) && depth < mdMaxInline:
			o := i + 1
			if c == '!' {
				o++
			}
			k := matching(s, o, '[', ']')
			if k > 0 && k+1 < len(s) && s[k+1] == '(' {
				if e := matching(s, k+2, '(', ')'); e > 0 {
					url := strings.TrimSpace(s[k+2 : e])
					if f := strings.IndexByte(url, ' '); f >= 0 {
						url = url[:f] // drop a title
					}
					url = strings.TrimSuffix(strings.TrimPrefix(url, "<"), ">")
					flush()
					before := len(out)
					out = r.parseInline(s[o:k], st|mdLink, out, depth+1)
					label := ""
					for _, sp := range out[before:] {
						label += sp.text
					}
					if url != "" && url != label {
						out = append(out, span{text: " (" + url + ")", st: st | mdDim})
					}
					i = e + 1
					continue
				}
			}
		case c == '<':
			if k := strings.IndexByte(s[i:min(len(s), i+mdLookahead)], '>'); k > 1 {
				u := s[i+1 : i+k]
				if !strings.ContainsAny(u, " <\n") && (strings.Contains(u, "://") || strings.Contains(u, "@") && strings.Contains(u, ".")) {
					flush()
					out = append(out, span{text: u, st: st | mdLink})
					i += k + 1
					continue
				}
			}
		}
		lit.WriteByte(c)
		i++
	}
	flush()
	return out
}

// cutCells splits plain s after at most w cells; the head holds at least
// one character so a character wider than w still makes progress.
func cutCells(s string, w int) (string, string) {
	if cellWidth(s) <= w {
		return s, ""
	}
	head := xansi.TruncateWc(s, w, "")
	if head == "" {
		_, n := utf8.DecodeRuneInString(s)
		head = s[:n]
	}
	return head, s[len(head):]
}

// wrap lays spans out in lines of at most width cells, breaking at spaces
// (runs of spaces collapse to one) and inside words longer than a line;
// a newline in a span forces a break.
func (r *mdRenderer) wrap(sp []span, width int) []string {
	width = max(width, 1)
	var lines []string
	var cur []span
	curW := 0
	var word []span
	wordW := 0
	var space *span
	emit := func() {
		lines = append(lines, r.line(cur))
		cur, curW, space = nil, 0, nil
	}
	placeWord := func() {
		if len(word) == 0 {
			return
		}
		if curW > 0 && curW+1+wordW > width {
			emit()
		}
		if curW > 0 && space != nil {
			cur = append(cur, *space)
			curW++
		}
		for _, p := range word {
			t := p.text
			for t != "" {
				room := width - curW
				if room <= 0 {
					emit()
					room = width
				}
				head, tail := cutCells(t, room)
				hw := cellWidth(head)
				if hw > room && curW > 0 {
					emit() // a wide character that does not fit the rest of the line
					continue
				}
				cur = append(cur, span{text: head, st: p.st})
				curW += hw
				t = tail
			}
		}
		word, wordW, space = nil, 0, nil
	}
	for _, p := range sp {
		t := p.text
		for t != "" {
			switch {
			case t[0] == '\n':
				placeWord()
				emit()
				t = t[1:]
			case t[0] == ' ':
				placeWord()
				if curW > 0 {
					space = &span{text: " ", st: p.st &^ mdCode}
				}
				t = strings.TrimLeft(t, " ")
			default:
				k := strings.IndexAny(t, " \n")
				if k < 0 {
					k = len(t)
				}
				word = append(word, span{text: t[:k], st: p.st})
				wordW += cellWidth(t[:k])
				t = t[k:]
			}
		}
	}
	placeWord()
	if curW > 0 || len(lines) == 0 {
		emit()
	}
	return lines
}

// line renders spans as one self-contained terminal line.
func (r *mdRenderer) line(sp []span) string {
	var b strings.Builder
	for _, s := range sp {
		if pre := r.inks.pre(s.st); pre != "" {
			b.WriteString(pre + s.text + "\x1b[m")
		} else {
			b.WriteString(s.text)
		}
	}
	return b.String()
}
