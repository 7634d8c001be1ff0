package agentdef

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastStatus is the outcome of fastBlock.
type fastStatus int

const (
	// fastBail: the block uses YAML the fast path does not handle; parse
	// it with go-yaml.
	fastBail fastStatus = iota
	// fastOK: the fields are exactly what go-yaml would give.
	fastOK
	// fastInvalid: the block is certainly not valid YAML — a top-level
	// plain value holds ": ", which YAML reads as a second mapping on one
	// line. The Claude Code fallback applies.
	fastInvalid
)

// fastBlock parses the frontmatter shapes real files use — top-level
// "key: value" lines whose values are plain, quoted or integer scalars,
// one-line flow lists, block lists, and simple block scalars — without
// go-yaml, which otherwise dominates load time. Anything else returns
// fastBail and go-yaml parses the block; TestFastPathAgrees and
// FuzzFastPath hold the two paths to the same result. For fastInvalid,
// badLine is the file line of the offending value.
func fastBlock(block string, lineBase int) (fields []field, status fastStatus, badLine int) {
	if strings.ContainsAny(block, "\r\x00\u0085\u2028\u2029\uFEFF") || !utf8.ValidString(block) {
		return nil, fastBail, 0
	}
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		ln := lines[i]
		line := lineBase + i
		if strings.TrimRight(ln, " ") == "" || ln[0] == '#' {
			continue
		}
		key, rest, found := strings.Cut(ln, ":")
		if !found || !simpleKey(key) {
			return nil, fastBail, 0
		}
		rest = strings.TrimRight(rest, " ")
		if rest == "" {
			// Null, or a block list below.
			items, next, ok := blockList(lines, i+1)
			if !ok {
				return nil, fastBail, 0
			}
			var v any
			if items != nil {
				v = items
			}
			fields = append(fields, field{key: key, line: line, value: v})
			i = next - 1
			continue
		}
		if rest[0] != ' ' {
			return nil, fastBail, 0
		}
		v := strings.TrimLeft(rest, " ")
		switch v[0] {
		case '"', '\'':
			s, tail, ok := quoted(v)
			if !ok || !onlyComment(tail) || continued(lines, i+1) {
				return nil, fastBail, 0
			}
			fields = append(fields, field{key: key, line: line, value: s})
		case '[':
			items, ok := flowList(v)
			if !ok || continued(lines, i+1) {
				return nil, fastBail, 0
			}
			fields = append(fields, field{key: key, line: line, value: items})
		case '|', '>':
			s, next, ok := blockScalar(v, lines, i+1)
			if !ok {
				return nil, fastBail, 0
			}
			fields = append(fields, field{key: key, line: line, value: s})
			i = next - 1
		default:
			if c := strings.Index(v, " #"); c >= 0 {
				v = strings.TrimRight(v[:c], " ")
			}
			if strings.Contains(v, ": ") && plainStart(v) && !strings.Contains(v, "\t") {
				return nil, fastInvalid, line
			}
			if continued(lines, i+1) {
				return nil, fastBail, 0
			}
			if n, ok := smallUint(v); ok {
				fields = append(fields, field{key: key, line: line, value: n})
				continue
			}
			if v == "true" || v == "false" { // YAML's booleans, lowercase (a built-in agent's background: true)
				fields = append(fields, field{key: key, line: line, value: v == "true"})
				continue
			}
			if !plainString(v) {
				return nil, fastBail, 0
			}
			fields = append(fields, field{key: key, line: line, value: v})
		}
	}
	return fields, fastOK, 0
}

// continued reports whether line i continues the value above it (it is
// indented and not blank), which the fast path leaves to go-yaml.
func continued(lines []string, i int) bool {
	for ; i < len(lines); i++ {
		ln := lines[i]
		if strings.TrimRight(ln, " ") == "" {
			continue
		}
		return ln[0] == ' ' || ln[0] == '\t'
	}
	return false
}

// onlyComment reports whether the text after a value is blank or a
// comment.
func onlyComment(tail string) bool {
	if tail == "" {
		return true
	}
	if tail[0] != ' ' {
		return false
	}
	tail = strings.TrimLeft(tail, " ")
	return tail == "" || tail[0] == '#'
}

func simpleKey(k string) bool {
	if k == "" {
		return false
	}
	switch strings.ToLower(k) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf":
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '-') {
			continue
		}
		return false
	}
	return true
}

// smallUint parses a decimal integer without sign or leading zeros that
// YAML reads as an unsigned integer.
func smallUint(v string) (uint64, bool) {
	if v == "" || len(v) > 18 || (len(v) > 1 && v[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// plainStart reports whether v starts like a plain scalar.
func plainStart(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return false
	}
	return true
}

// plainString reports whether v is a plain scalar that YAML reads as
// exactly this string.
func plainString(v string) bool {
	if !plainStart(v) {
		return false
	}
	switch v[0] {
	case '+', '.', '~':
		return false
	}
	if v[0] >= '0' && v[0] <= '9' {
		return false
	}
	if v[len(v)-1] == ':' || strings.Contains(v, ": ") || strings.Contains(v, " #") {
		return false
	}
	if !safeText(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf":
		return false
	}
	return true
}

// safeText rejects invalid UTF-8, control characters and the characters YAML treats as
// line breaks or byte-order marks.
func safeText(v string) bool {
	if !utf8.ValidString(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return !strings.Contains(v, "\u0085") && !strings.Contains(v, "\u2028") && !strings.Contains(v, "\u2029") &&
		!strings.Contains(v, "\uFEFF") && !strings.Contains(v, tabMark)
}

// quoted decodes a one-line double- or single-quoted scalar at the start
// of v and returns the text after it.
func quoted(v string) (s, tail string, ok bool) {
	q := v[0]
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == q && q == '\'' && i+1 < len(v) && v[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			s = b.String()
			if !safeText(s) {
				return "", "", false
			}
			return s, v[i+1:], true
		case c == '\\' && q == '"':
			if i+1 >= len(v) {
				return "", "", false
			}
			i++
			switch v[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case '/':
				b.WriteByte('/')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", "", false
			}
		case c == '\t' || c < 0x20:
			return "", "", false
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// flowList parses a one-line flow sequence of plain or quoted strings.
func flowList(v string) ([]any, bool) {
	items := []any{}
	i := 1
	skip := func() {
		for i < len(v) && v[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(v) && v[i] == ']' {
		i++
		return items, onlyComment(v[i:])
	}
	for i < len(v) {
		skip()
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case '"', '\'':
			s, tail, ok := quoted(v[i:])
			if !ok {
				return nil, false
			}
			items = append(items, s)
			i = len(v) - len(tail)
		default:
			j := i
			for j < len(v) && v[j] != ',' && v[j] != ']' {
				j++
			}
			s := strings.TrimRight(v[i:j], " ")
			if !plainString(s) || strings.ContainsAny(s, "[]{}:#") {
				return nil, false
			}
			items = append(items, s)
			i = j
		}
		skip()
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ']':
			return items, onlyComment(v[i+1:])
		case ',':
			i++
			skip()
			if i < len(v) && v[i] == ']' {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return nil, false
}

// blockList reads "- item" lines starting at line i. It returns nil items
// when line i does not start a list (the key is then null), and the index
// of the first line after the list.
func blockList(lines []string, i int) (items []any, next int, ok bool) {
	indent := -1
	for next = i; next < len(lines); next++ {
		ln := lines[next]
		if strings.TrimRight(ln, " ") == "" {
			continue
		}
		n := 0
		for n < len(ln) && ln[n] == ' ' {
			n++
		}
		if n < len(ln) && ln[n] == '\t' {
			return nil, 0, false
		}
		if !strings.HasPrefix(ln[n:], "- ") {
			if n > 0 || indent >= 0 && ln[0] == '-' {
				return nil, 0, false
			}
			break
		}
		if indent < 0 {
			indent = n
		} else if n != indent {
			return nil, 0, false
		}
		v := strings.TrimRight(strings.TrimLeft(ln[n+2:], " "), " ")
		switch {
		case v == "":
			return nil, 0, false
		case v[0] == '"' || v[0] == '\'':
			s, tail, ok := quoted(v)
			if !ok || !onlyComment(tail) {
				return nil, 0, false
			}
			items = append(items, s)
		default:
			if c := strings.Index(v, " #"); c >= 0 {
				v = strings.TrimRight(v[:c], " ")
			}
			if !plainString(v) {
				return nil, 0, false
			}
			items = append(items, v)
		}
	}
	if indent < 0 {
		return nil, next, true
	}
	return items, next, true
}

// blockScalar reads a "|", "|-", ">" or ">-" scalar whose lines all share
// one indentation and have no blank lines or trailing blanks.
func blockScalar(header string, lines []string, i int) (s string, next int, ok bool) {
	var chomp, fold bool
	switch header {
	case "|":
	case "|-":
		chomp = true
	case ">":
		fold = true
	case ">-":
		fold, chomp = true, true
	default:
		return "", 0, false
	}
	indent := -1
	last := -1
	var parts []string
	for next = i; next < len(lines); next++ {
		ln := lines[next]
		if ln == "" {
			// A blank line ends the scalar only when a key follows.
			if next+1 < len(lines) && lines[next+1] != "" && lines[next+1][0] != ' ' {
				continue
			}
			if next+1 >= len(lines) {
				continue
			}
			return "", 0, false
		}
		n := 0
		for n < len(ln) && ln[n] == ' ' {
			n++
		}
		if n == 0 {
			break
		}
		if indent < 0 {
			indent = n
		}
		if n != indent || n >= len(ln) || ln[n] == '\t' || strings.HasSuffix(ln, " ") || !safeText(ln) {
			return "", 0, false
		}
		parts = append(parts, ln[n:])
		last = next
	}
	// A scalar on the unterminated last line of the block is left to
	// go-yaml (real blocks end with a line break).
	if len(parts) == 0 || last == len(lines)-1 {
		return "", 0, false
	}
	sep := "\n"
	if fold {
		sep = " "
	}
	s = strings.Join(parts, sep)
	if !chomp {
		s += "\n"
	}
	return s, next, true
}
