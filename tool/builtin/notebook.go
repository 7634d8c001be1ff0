package builtin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// This file reads and edits Jupyter notebooks (nbformat 4). An edit
// rewrites only the bytes of the cell it touches: every other cell, the
// metadata and the file's formatting stay exactly as they were.

// notebook is a parsed .ipynb file with the byte span of every cell.
type notebook struct {
	data  []byte
	major int
	minor int
	// cellsAt is the offset just after the '[' of the cells array, and
	// cellsEnd the offset of its ']'.
	cellsAt, cellsEnd int
	cells             []nbCell
	language          string
}

// nbCell is one cell: its raw bytes and span in the file, and its fields.
type nbCell struct {
	start, end int
	raw        json.RawMessage
	id         string
	typ        string
	source     string
	execCount  *int
	outputs    []json.RawMessage
}

type nbCellFields struct {
	ID             string            `json:"id"`
	CellType       string            `json:"cell_type"`
	Source         json.RawMessage   `json:"source"`
	ExecutionCount *int              `json:"execution_count"`
	Outputs        []json.RawMessage `json:"outputs"`
}

// parseNotebook parses data as an nbformat 4 notebook, recording where
// each cell lies so edits can splice bytes.
func parseNotebook(data []byte) (*notebook, error) {
	nb := &notebook{data: data, cellsAt: -1}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var meta struct {
		Kernelspec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
	}
	hasMajor := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("bad JSON: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "cells":
			if err := nb.readCells(dec); err != nil {
				return nil, err
			}
		case "nbformat", "nbformat_minor":
			var n int
			if err := dec.Decode(&n); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			if key == "nbformat" {
				nb.major, hasMajor = n, true
			} else {
				nb.minor = n
			}
		case "metadata":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("metadata: %w", err)
			}
			_ = json.Unmarshal(raw, &meta) // metadata of another shape only loses the language
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("bad JSON at %q: %w", key, err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the notebook's JSON object")
	}
	switch {
	case !hasMajor:
		return nil, errors.New("no nbformat field: not a Jupyter notebook")
	case nb.major != 4:
		return nil, fmt.Errorf("nbformat %d is not supported (only nbformat 4)", nb.major)
	case nb.cellsAt < 0:
		return nil, errors.New("no cells array")
	}
	nb.language = meta.LanguageInfo.Name
	if nb.language == "" {
		nb.language = meta.Kernelspec.Language
	}
	return nb, nil
}

func (nb *notebook) readCells(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("cells: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return errors.New("cells is not an array")
	}
	nb.cellsAt = int(dec.InputOffset())
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("cell %d: %w", len(nb.cells), err)
		}
		end := int(dec.InputOffset())
		c := nbCell{start: end - len(raw), end: end, raw: raw}
		var f nbCellFields
		if err := json.Unmarshal(raw, &f); err != nil {
			return fmt.Errorf("cell %d: %w", len(nb.cells), err)
		}
		if f.CellType == "" {
			return fmt.Errorf("cell %d has no cell_type", len(nb.cells))
		}
		src, err := joinSource(f.Source)
		if err != nil {
			return fmt.Errorf("cell %d: %w", len(nb.cells), err)
		}
		c.id, c.typ, c.source, c.execCount, c.outputs = f.ID, f.CellType, src, f.ExecutionCount, f.Outputs
		nb.cells = append(nb.cells, c)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("cells: %w", err)
	}
	nb.cellsEnd = int(dec.InputOffset()) - 1
	return nil
}

// joinSource reads a multiline string field: a string or a list of them.
func joinSource(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("source is neither a string nor a list of strings")
	}
	return strings.Join(parts, ""), nil
}

// cellLabel is how a cell is named to the model: its id, or cell-N (its
// index from 0) when it has none.
func (c nbCell) label(i int) string {
	if c.id != "" {
		return c.id
	}
	return "cell-" + strconv.Itoa(i)
}

// find returns the index of the cell with id, also accepting the cell-N
// form for cells without an id; -1 when there is none.
func (nb *notebook) find(id string) int {
	for i, c := range nb.cells {
		if c.id != "" && c.id == id {
			return i
		}
	}
	if rest, ok := strings.CutPrefix(id, "cell-"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && n < len(nb.cells) && strconv.Itoa(n) == rest {
			return n
		}
	}
	return -1
}

// cellIDs lists the cells' labels, for an error message.
func (nb *notebook) cellIDs() string {
	const show = 20
	var ids []string
	for i, c := range nb.cells {
		if i == show {
			ids = append(ids, fmt.Sprintf("… (%d more)", len(nb.cells)-show))
			break
		}
		ids = append(ids, c.label(i))
	}
	if len(ids) == 0 {
		return "the notebook has no cells"
	}
	return "its cells are " + strings.Join(ids, ", ")
}

// layout is the indentation the file uses around its cells.
type layout struct {
	prefix string // before each cell's opening brace
	unit   string // one level of indentation inside a cell
}

// layoutOf guesses the indentation from the first cell, falling back to
// Jupyter's own (one space per level).
func (nb *notebook) layoutOf() layout {
	if !bytes.ContainsRune(nb.data, '\n') {
		return layout{} // a compact file: keep new cells compact too
	}
	l := layout{prefix: "  ", unit: " "}
	if strings.Contains(string(nb.data[:max(nb.cellsAt, 0)]), "\n  \"") {
		l = layout{prefix: "    ", unit: "  "}
	} else if strings.Contains(string(nb.data[:max(nb.cellsAt, 0)]), "\n \"") {
		l = layout{prefix: "  ", unit: " "}
	}
	if len(nb.cells) == 0 {
		return l
	}
	c := nb.cells[0]
	lineStart := bytes.LastIndexByte(nb.data[:c.start], '\n') + 1
	p := string(nb.data[lineStart:c.start])
	if strings.TrimLeft(p, " \t") != "" {
		return layout{} // a compact file: keep new cells compact too
	}
	l.prefix = p
	if i := bytes.IndexByte(c.raw, '\n'); i >= 0 {
		rest := c.raw[i+1:]
		j := 0
		for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
			j++
		}
		if j > len(p) {
			l.unit = string(rest[len(p):j])
		}
	} else {
		return layout{}
	}
	return l
}

// encodeCell renders a cell object in the file's layout (keys sorted, as
// Jupyter writes them).
func (l layout) encodeCell(fields map[string]json.RawMessage) ([]byte, error) {
	if l.unit == "" && l.prefix == "" {
		return json.Marshal(fields)
	}
	return json.MarshalIndent(fields, l.prefix, l.unit)
}

// splitSource turns text into Jupyter's list-of-lines form.
func splitSource(s string) json.RawMessage {
	lines := []string{}
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	b, _ := json.Marshal(lines)
	return b
}

// newCellID makes a cell id of the kind Jupyter generates (8 hex digits).
func newCellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
