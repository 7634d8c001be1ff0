package agentdef

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// field is one top-level key of a definition with its decoded value and the
// 1-based line it sits on in the source file.
type field struct {
	key   string
	line  int
	value any
}

// split is a file cut into frontmatter block and body.
type split struct {
	block     string // the frontmatter text, LF line endings
	blockLine int    // file line of the block's first line
	body      string // the Markdown after the block, trimmed
	// midLineEnd is the file line where Claude Code would have ended the
	// block on a "---" inside a line, when that differs from where we end
	// it; 0 otherwise.
	midLineEnd int
	// unclean is the file line of a closing "---" that is not on a line of
	// its own and that we nevertheless used; 0 otherwise.
	unclean int
}

// normalize strips a UTF-8 BOM and turns CRLF into LF. Line numbers are
// unchanged.
func normalize(data []byte) string {
	s := string(data)
	s = strings.TrimPrefix(s, "\uFEFF")
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// splitFrontmatter finds the frontmatter the way Claude Code does (the
// regexp ^---\s*\n([\s\S]*?)---\s*\n? on the BOM-stripped text): the file
// must start with "---", and the block runs to the first "---" anywhere.
// Where that first "---" sits inside a line, Claude Code silently drops
// every key after it; we read on to the next "---" line instead and record
// where the two differ, so the caller can warn.
func splitFrontmatter(text string) (split, bool) {
	if !strings.HasPrefix(text, "---") {
		return split{}, false
	}
	j := 3
	lastNL := -1
	for j < len(text) && isSpace(text[j]) {
		if text[j] == '\n' {
			lastNL = j
		}
		j++
	}
	if lastNL < 0 {
		return split{}, false
	}
	start := lastNL + 1
	k := strings.Index(text[start:], "---")
	if k < 0 {
		return split{}, false
	}
	end := start + k
	sp := split{}
	if !cleanDelimiter(text, end) {
		// Look for a "---" line of its own further down.
		if alt := nextDelimiterLine(text, end+3); alt >= 0 {
			sp.midLineEnd = lineOf(text, end)
			end = alt
		} else {
			sp.unclean = lineOf(text, end)
		}
	}
	sp.block = text[start:end]
	sp.blockLine = lineOf(text, start)
	rest := end + 3
	for rest < len(text) && isSpace(text[rest]) {
		rest++
	}
	sp.body = strings.TrimSpace(text[rest:])
	return sp, true
}

// cleanDelimiter reports whether the "---" at i is alone on its line
// (surrounding blanks allowed).
func cleanDelimiter(text string, i int) bool {
	for p := i - 1; p >= 0 && text[p] != '\n'; p-- {
		if text[p] != ' ' && text[p] != '\t' {
			return false
		}
	}
	for p := i + 3; p < len(text) && text[p] != '\n'; p++ {
		if text[p] != ' ' && text[p] != '\t' {
			return false
		}
	}
	return true
}

// nextDelimiterLine returns the offset of the first "---" at or after from
// that is alone on its line, or -1.
func nextDelimiterLine(text string, from int) int {
	for from < len(text) {
		k := strings.Index(text[from:], "---")
		if k < 0 {
			return -1
		}
		if cleanDelimiter(text, from+k) {
			return from + k
		}
		from += k + 3
	}
	return -1
}

// lineOf returns the 1-based line number of offset i.
func lineOf(text string, i int) int {
	return 1 + strings.Count(text[:i], "\n")
}

// parseError is a YAML failure placed on a file line.
type parseError struct {
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// parseBlock parses a frontmatter block into its top-level fields. lineBase
// is the file line of the block's first line. ok is false when the block is
// YAML but not a mapping.
func parseBlock(block string, lineBase int) (fields []field, isMap bool, err error) {
	fields, status, bad := fastBlock(block, lineBase)
	switch status {
	case fastOK:
		return fields, true, nil
	case fastInvalid:
		return nil, false, &parseError{line: bad, msg: `an unquoted value cannot contain ": "`}
	}
	return slowBlock(block, lineBase)
}

// Limits on what go-yaml is given. Its parser is quadratic in the number
// of mapping keys and in bracket nesting, so a small hostile file could
// otherwise stall loading for minutes; real frontmatter is a few KiB (the
// largest in the corpus is 2.2 KiB and 32 lines).
const (
	maxBlockBytes = 32 << 10
	maxBlockLines = 500
	maxBlockDepth = 64
)

// checkLimits returns a parse error when a block is over the limits.
func checkLimits(block string, lineBase int) *parseError {
	if len(block) > maxBlockBytes {
		return &parseError{line: lineBase, msg: fmt.Sprintf("frontmatter is %d bytes, over the %d KiB limit", len(block), maxBlockBytes>>10)}
	}
	if n := strings.Count(block, "\n"); n > maxBlockLines {
		return &parseError{line: lineBase, msg: fmt.Sprintf("frontmatter has %d lines, over the limit of %d", n, maxBlockLines)}
	}
	depth, line := 0, lineBase
	for i := 0; i < len(block); i++ {
		switch block[i] {
		case '[', '{':
			depth++
			if depth > maxBlockDepth {
				return &parseError{line: line, msg: fmt.Sprintf("brackets nest more than %d deep", maxBlockDepth)}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '\n':
			line++
		}
	}
	return nil
}

// slowBlock parses a block with go-yaml.
func slowBlock(block string, lineBase int) (fields []field, isMap bool, err error) {
	if pe := checkLimits(block, lineBase); pe != nil {
		return nil, false, pe
	}
	block, protected := protectTabs(block)
	f, err := parser.ParseBytes([]byte(block), 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, false, toParseError(err, lineBase)
	}
	if f == nil || len(f.Docs) == 0 {
		return nil, true, nil
	}
	if len(f.Docs) > 1 {
		return nil, false, &parseError{line: lineBase, msg: "more than one YAML document"}
	}
	body := f.Docs[0].Body
	if body != nil {
		if alias := findAlias(body); alias != nil {
			line := lineBase
			if tk := alias.GetToken(); tk != nil && tk.Position != nil {
				line = lineBase + tk.Position.Line - 1
			}
			return nil, false, &parseError{line: line, msg: aliasMessage}
		}
	}
	var values []*ast.MappingValueNode
	switch n := body.(type) {
	case nil:
		return nil, true, nil
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	case *ast.CommentNode:
		return nil, true, nil
	default:
		return nil, false, nil
	}
	for _, mv := range values {
		if mv == nil || mv.Key == nil {
			continue
		}
		line := lineBase
		if tk := mv.Key.GetToken(); tk != nil && tk.Position != nil {
			line = lineBase + tk.Position.Line - 1
		}
		key, err := nodeValue(mv.Key)
		if err != nil {
			return nil, true, toParseError(err, lineBase)
		}
		var val any
		if mv.Value != nil {
			if val, err = nodeValue(mv.Value); err != nil {
				return nil, true, toParseError(err, lineBase)
			}
		}
		if protected {
			key, val = restoreTabs(key), restoreTabs(val)
		}
		fields = append(fields, field{key: fmt.Sprint(key), line: line, value: val})
	}
	return fields, true, nil
}

// tabMark stands in for a tab inside a value while go-yaml parses the
// block: go-yaml drops tabs inside plain scalars ("a\tb" becomes "ab"),
// where YAML keeps them.
const tabMark = "\uE000"

// protectTabs replaces each tab that sits inside text (between two
// non-blank characters, not after a YAML indicator and not before a
// comment) with tabMark. It leaves the block alone when it has no tab or
// already holds tabMark.
func protectTabs(block string) (string, bool) {
	if !strings.Contains(block, "\t") || strings.Contains(block, tabMark) {
		return block, false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(block); i++ {
		c := block[i]
		if c != ' ' && c != '\t' {
			b.WriteByte(c)
			continue
		}
		// A run of blanks from i to j.
		j := i
		for j < len(block) && (block[j] == ' ' || block[j] == '\t') {
			j++
		}
		run := block[i:j]
		inner := i > 0 && j < len(block) && block[i-1] != '\n' && block[j] != '\n' && block[j] != '#' &&
			!strings.ContainsRune(":-?,[{", rune(block[i-1])) && strings.Contains(run, "\t") && !leadingBlank(block, i)
		if inner {
			run = strings.ReplaceAll(run, "\t", tabMark)
			changed = true
		}
		b.WriteString(run)
		i = j - 1
	}
	if !changed {
		return block, false
	}
	return b.String(), true
}

// leadingBlank reports whether offset i is in the indentation of its line.
func leadingBlank(s string, i int) bool {
	for p := i - 1; p >= 0 && s[p] != '\n'; p-- {
		if s[p] != ' ' && s[p] != '\t' {
			return false
		}
	}
	return true
}

// restoreTabs puts the tabs protectTabs hid back into decoded values.
func restoreTabs(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, tabMark, "\t")
	case []any:
		for i := range x {
			x[i] = restoreTabs(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ReplaceAll(k, tabMark, "\t")] = restoreTabs(e)
		}
		return out
	}
	return v
}

// aliasMessage is the parse error for a block that uses an alias.
const aliasMessage = "YAML aliases (*name) are not supported in agent files"

// aliasFinder records the first alias node of a tree.
type aliasFinder struct{ found ast.Node }

// Visit implements ast.Visitor.
func (a *aliasFinder) Visit(n ast.Node) ast.Visitor {
	if a.found != nil {
		return nil
	}
	if _, ok := n.(*ast.AliasNode); ok {
		a.found = n
		return nil
	}
	return a
}

// findAlias returns the first alias in n, or nil. Agent files are refused
// when they use aliases: expanding them is exponential in the worst case
// (a few hundred bytes can hold a "billion laughs"), and real agent files
// never need them.
func findAlias(n ast.Node) ast.Node {
	a := &aliasFinder{}
	ast.Walk(a, n)
	return a.found
}

// nodeValue decodes a node into plain Go values (string, bool, int64,
// uint64, float64, nil, []any, map[string]any). The common node kinds are
// converted directly, which is several times faster than a go-yaml
// decoder; anything else (block scalars, anchors, tags) goes through
// yaml.NodeToValue.
func nodeValue(n ast.Node) (any, error) {
	if v, ok := simpleValue(n); ok {
		return v, nil
	}
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func simpleValue(n ast.Node) (any, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.NullNode:
		return nil, true
	case *ast.BoolNode:
		return x.Value, true
	case *ast.IntegerNode, *ast.FloatNode:
		return x.(ast.ScalarNode).GetValue(), true
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for _, e := range x.Values {
			v, ok := simpleValue(e)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case *ast.MappingNode:
		out := make(map[string]any, len(x.Values))
		for _, mv := range x.Values {
			if !simplePair(mv, out) {
				return nil, false
			}
		}
		return out, true
	case *ast.MappingValueNode:
		out := map[string]any{}
		if !simplePair(x, out) {
			return nil, false
		}
		return out, true
	}
	return nil, false
}

func simplePair(mv *ast.MappingValueNode, out map[string]any) bool {
	ks, ok := mv.Key.(*ast.StringNode)
	if !ok {
		return false
	}
	v, ok := simpleValue(mv.Value)
	if !ok {
		return false
	}
	out[ks.Value] = v
	return true
}

// toParseError turns a go-yaml error into a message with a file line.
func toParseError(err error, lineBase int) *parseError {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := lineBase
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = lineBase + tk.Position.Line - 1
		}
		return &parseError{line: line, msg: ye.GetMessage()}
	}
	return &parseError{line: lineBase, msg: err.Error()}
}

// requote applies Claude Code's fallback rewrite (ORACLE.md §5.3) to a
// block that strict YAML rejected: leading tabs become two spaces each, and
// a column-0 "key: value" line whose value holds YAML-significant
// characters is rewritten as key: "value" with \ and " escaped.
//
// Unlike Claude Code, a column-0 line that follows the description line,
// is not a known key, and looks like the example text of a description
// ("user: ...", "assistant: ...", "Context: ...") is blanked rather than
// turned into a key; its line number is returned in dropped so the caller
// can warn. Blanking keeps every other line number in place.
func requote(block string) (out string, dropped []int) {
	lines := strings.Split(block, "\n")
	inDescription := false
	for i, ln := range lines {
		n := 0
		for n < len(ln) && ln[n] == '\t' {
			n++
		}
		if n > 0 {
			ln = strings.Repeat("  ", n) + ln[n:]
		}
		key, value, ok := matchKeyLine(ln)
		if !ok {
			lines[i] = ln
			continue
		}
		if key == "description" {
			inDescription = true
		} else if slices.Contains(knownKeys, key) || toolsAlias(key) != "" {
			inDescription = false
		} else if inDescription && looksLikeExampleKey(key) {
			lines[i] = ""
			dropped = append(dropped, i)
			continue
		}
		if needsQuote(value) {
			value = strings.ReplaceAll(value, `\`, `\\`)
			value = strings.ReplaceAll(value, `"`, `\"`)
			ln = key + `: "` + value + `"`
		}
		lines[i] = ln
	}
	return strings.Join(lines, "\n"), dropped
}

// looksLikeExampleKey reports whether a column-0 key is the speaker or
// context label of an example dialogue rather than a setting.
func looksLikeExampleKey(key string) bool {
	switch strings.ToLower(key) {
	case "user", "assistant", "context", "human", "ai", "example", "examples",
		"commentary", "response", "agent", "claude", "note", "q", "a":
		return true
	}
	return false
}

// matchKeyLine matches ^([a-zA-Z_-]+):\s+(\S.*)$.
func matchKeyLine(ln string) (key, value string, ok bool) {
	i := 0
	for i < len(ln) {
		c := ln[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(ln) || ln[i] != ':' {
		return "", "", false
	}
	key = ln[:i]
	j := i + 1
	if j >= len(ln) || !isSpace(ln[j]) {
		return "", "", false
	}
	for j < len(ln) && isSpace(ln[j]) {
		j++
	}
	if j >= len(ln) {
		return "", "", false
	}
	return key, ln[j:], true
}

// isFlowList reports whether v parses as a YAML sequence on its own (and
// holds no alias, which is never expanded).
func isFlowList(v string) bool {
	if checkLimits(v, 1) != nil {
		return false
	}
	f, err := parser.ParseBytes([]byte(v), 0)
	if err != nil || f == nil || len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return false
	}
	if _, ok := f.Docs[0].Body.(*ast.SequenceNode); !ok {
		return false
	}
	return findAlias(f.Docs[0].Body) == nil
}

// needsQuote reports whether the fallback rewrites a value: it is not
// already quoted or a well-formed flow list, and it holds a character YAML
// would read as syntax.
func needsQuote(v string) bool {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return false
	}
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' && isFlowList(v) {
		return false
	}
	if strings.ContainsAny(v, "{}[]*&#!|>%@`") || strings.Contains(v, ": ") {
		return true
	}
	return false
}
