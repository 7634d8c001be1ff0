package agentdef

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ParseJSON parses agent definitions given as JSON, the form of --agents:
// an object keyed by agent name whose values hold the same fields as
// frontmatter, with "prompt" for the system prompt:
//
//	{"reviewer": {"description": "Reviews diffs", "tools": ["Read", "Grep"], "prompt": "You review…"}}
//
// path names the input in diagnostics ("--agents" for inline JSON). Each
// definition is validated like a file; one bad definition does not stop
// the others. The error is non-nil only when data is not a JSON object.
func ParseJSON(path string, data []byte, source Source) ([]*Definition, []Diagnostic, error) {
	text := string(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, nil, fmt.Errorf("agents JSON %s: %w", path, err)
	}
	type entry struct {
		name string
		line int
		raw  json.RawMessage
		end  int64
	}
	var entries []entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("agents JSON %s: %w", path, err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("agents JSON %s: agent %q: %w", path, name, err)
		}
		end := dec.InputOffset()
		start := int(end) - len(raw)
		entries = append(entries, entry{name: name, line: lineOf(text, clamp(start, len(text))), raw: raw, end: end})
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, nil, fmt.Errorf("agents JSON %s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("agents JSON %s: unexpected data after the object", path)
	}

	var defs []*Definition
	var diags []Diagnostic
	seen := map[string]int{}
	for _, e := range entries {
		b := &builder{path: path}
		if prev, dup := seen[e.name]; dup {
			b.warn(e.line, "agent %q is defined twice (first on line %d); the last one is used", e.name, prev)
		}
		seen[e.name] = e.line
		start := int(e.end) - len(e.raw)
		fields, err := jsonFields(e.raw, text, start)
		if err != nil {
			b.errorf(e.line, "agent %q must be a JSON object of fields: %v; not loaded", e.name, err)
			diags = append(diags, b.diags...)
			continue
		}
		def := b.build(fields, e.name, e.line, source, true)
		diags = append(diags, b.diags...)
		if def == nil {
			continue
		}
		def.Path = path
		def.Diagnostics = b.diags
		defs = append(defs, def)
	}
	return defs, diags, nil
}

func clamp(i, n int) int {
	if i < 0 {
		return 0
	}
	if i > n {
		return n
	}
	return i
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

// jsonFields decodes one definition object into ordered fields. base is
// the offset of raw within text, for line numbers.
func jsonFields(raw json.RawMessage, text string, base int) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		line := lineOf(text, clamp(base+int(dec.InputOffset()), len(text)))
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, field{key: key, line: line, value: v})
	}
	return fields, nil
}
