package tool

import (
	"encoding/json"
	"reflect"
)

// decodeInput decodes input into v (a pointer to a struct) as the strict
// decoder does (strictDecode: unknown fields refused). When flat (v's
// type is flatInput) and every top-level key of input is one of props,
// exactly, no field can be unknown at any depth, so json.Unmarshal
// decodes it the same way without a decoder and its buffer per call; on
// any other input, or when Unmarshal fails (trailing data the decoder
// leaves unread, a type error), v is reset and the strict decoder's result
// is the answer.
func decodeInput(input json.RawMessage, v any, props []string, flat bool) error {
	if flat && onlyKnownKeys(input, props) {
		if json.Unmarshal(input, v) == nil {
			return nil
		}
		reflect.ValueOf(v).Elem().SetZero()
	}
	return strictDecode(input, v)
}

// onlyKnownKeys reports whether input is a JSON object whose top-level keys
// are all in props, written without escapes. It answers false for
// anything it does not follow; for valid JSON its true is exact (the
// caller decodes with json.Unmarshal, which checks the rest).
func onlyKnownKeys(input []byte, props []string) bool {
	i := skipSpace(input, 0)
	if i >= len(input) || input[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(input, i)
		if i >= len(input) {
			return false
		}
		switch input[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		j := i + 1
		for j < len(input) && input[j] != '"' {
			if input[j] == '\\' || input[j] < 0x20 {
				return false // an escaped (or invalid) key: the decoder decides
			}
			j++
		}
		if j >= len(input) || !isProp(input[i+1:j], props) {
			return false
		}
		i = skipSpace(input, j+1)
		if i >= len(input) || input[i] != ':' {
			return false
		}
		var ok bool
		if i, ok = skipValue(input, i+1); !ok {
			return false
		}
	}
}

// isProp reports whether key is one of props.
func isProp(key []byte, props []string) bool {
	for _, p := range props {
		if string(key) == p {
			return true
		}
	}
	return false
}

// skipSpace returns the position of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the position after the JSON value starting at or after
// i: a string, an object or an array followed through its nesting and
// strings; a scalar up to the next delimiter.
func skipValue(b []byte, i int) (int, bool) {
	i = skipSpace(b, i)
	depth := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return i, false
			}
			i++
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return i, true // a scalar ended by its object's end
			}
			depth--
			i++
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i, true // a scalar ended
		default:
			i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return i, true // a string, object or array ended
		}
	}
	return i, false
}
