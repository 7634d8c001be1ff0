// Package text holds the small string helpers shared across cadre, so each
// is written (and tested) once.
package text

import "unicode/utf8"

// Truncate returns s cut to at most n bytes, never splitting a UTF-8
// character, and whether it cut anything. A negative n counts as 0.
func Truncate(s string, n int) (string, bool) {
	n = max(n, 0)
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Ellipsis returns s cut to at most n characters with "…" added when it
// was cut, for showing a value inside a message.
func Ellipsis(s string, n int) string {
	i, chars := 0, 0
	for i < len(s) && chars < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		chars++
	}
	if cut, ok := Truncate(s, i); ok {
		return cut + "…"
	}
	return s
}
