package agentdef

import "strings"

// fastBlock parses the frontmatter shape most files use — one
// "key: plain text" per line, nothing indented, no quotes, comments or
// YAML indicators — without go-yaml, which dominates load time. It
// returns ok=false for anything else, and the slow path then parses the
// block; TestFastPathAgrees and FuzzFastPath hold the two to the same
// result.
func fastBlock(block string, lineBase int) (fields []field, ok bool) {
	line := lineBase
	for len(block) > 0 {
		var ln string
		if i := strings.IndexByte(block, '\n'); i >= 0 {
			ln, block = block[:i], block[i+1:]
		} else {
			ln, block = block, ""
		}
		cur := line
		line++
		ln = strings.TrimRight(ln, " ")
		if ln == "" {
			continue
		}
		key, rest, found := strings.Cut(ln, ":")
		if !found || !simpleKey(key) {
			return nil, false
		}
		if rest == "" {
			// "key:" is null unless an indented block follows.
			if len(block) > 0 && (block[0] == ' ' || block[0] == '\t' || block[0] == '-') {
				return nil, false
			}
			fields = append(fields, field{key: key, line: cur, value: nil})
			continue
		}
		if rest[0] != ' ' {
			return nil, false
		}
		v := strings.TrimLeft(rest, " ")
		if !plainString(v) {
			return nil, false
		}
		fields = append(fields, field{key: key, line: cur, value: v})
	}
	return fields, true
}

func simpleKey(k string) bool {
	if k == "" {
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

// plainString reports whether v is a plain scalar that YAML reads as
// exactly this string.
func plainString(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '+', '.', '~':
		return false
	}
	if v[0] >= '0' && v[0] <= '9' {
		return false
	}
	if v[len(v)-1] == ':' || strings.Contains(v, ": ") || strings.Contains(v, " #") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	if strings.Contains(v, "\u0085") || strings.Contains(v, "\u2028") || strings.Contains(v, "\u2029") || strings.Contains(v, "\uFEFF") || strings.Contains(v, tabMark) {
		return false
	}
	switch strings.ToLower(v) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf":
		return false
	}
	return true
}
