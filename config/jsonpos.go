package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// offsetError is a structural problem at a byte offset.
type offsetError struct {
	off int64
	msg string
}

func (e *offsetError) Error() string { return e.msg }

type keyPos struct {
	parent, name string
	offset       int64
}

// scanKeys walks the JSON tokens and returns the keys of the top-level
// object and of the objects two levels below it (such as "permissions"
// and "sandbox.network"), each with its dotted parent and offset. It also
// rejects a document that is not a single object.
func scanKeys(data []byte) ([]keyPos, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var keys []keyPos
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &offsetError{off: 0, msg: "a settings file must be a JSON object"}
	}
	// stack of containers: 'o' object expecting key, 'v' object expecting
	// value, 'a' array; names for object paths.
	type frame struct {
		kind      byte
		name      string
		expectKey bool
		lastKey   string
	}
	stack := []frame{{kind: '{', expectKey: true}}
	for len(stack) > 0 {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		top := &stack[len(stack)-1]
		if top.kind == '{' && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					p := &stack[len(stack)-1]
					if p.kind == '{' {
						p.expectKey = true
					}
				}
				continue
			}
			k, _ := tok.(string)
			parent := ""
			for _, f := range stack[1:] {
				parent = strings.TrimPrefix(parent+"."+f.name, ".")
			}
			if len(stack) <= 3 {
				keys = append(keys, keyPos{parent: parent, name: k, offset: skipSpace(data, off)})
			}
			top.lastKey = k
			top.expectKey = false
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, frame{kind: '{', name: top.lastKey, expectKey: true})
			case '[':
				stack = append(stack, frame{kind: '[', name: "[]"}) // keys below are no object's keys
			case ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].kind == '{' {
					stack[len(stack)-1].expectKey = true
				}
			}
		default:
			if top.kind == '{' {
				top.expectKey = true
			}
		}
	}
	off := skipSpace(data, dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		return nil, &offsetError{off: off, msg: "unexpected data after the settings object"}
	}
	return keys, nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// posError wraps a JSON error with file, line and column.
func posError(path string, data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var oe *offsetError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
		err = fmt.Errorf("%s must be %s, not %s", fieldName(te), typeName(te.Type.String()), te.Value)
	case errors.As(err, &oe):
		off = oe.off
		err = errors.New(oe.msg)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = int64(len(data))
		err = errors.New("unexpected end of file")
	}
	if off >= 0 {
		line, col := lineCol(data, off)
		return fmt.Errorf("%w: %s:%d:%d: %v", ErrMalformed, path, line, col, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
}

func fieldName(te *json.UnmarshalTypeError) string {
	if te.Field != "" {
		return te.Field
	}
	return "value"
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "config."):
		return "an object"
	case t == "string" || t == "*string":
		return "a string"
	case t == "int" || t == "*int":
		return "a whole number"
	}
	return t
}

// lineCol converts a byte offset to 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
