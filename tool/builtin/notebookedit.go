package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed notebookedit.md
var notebookEditDescription string

type notebookEditInput struct {
	NotebookPath string `json:"notebook_path" jsonschema_description:"Absolute path of the .ipynb file."`
	CellID       string `json:"cell_id,omitempty" jsonschema_description:"Cell id as Read shows it (or cell-N)."`
	NewSource    string `json:"new_source" jsonschema_description:"New source."`
	CellType     string `json:"cell_type,omitempty" jsonschema:"enum=code,enum=markdown" jsonschema_description:"Required to insert."`
	EditMode     string `json:"edit_mode,omitempty" jsonschema:"enum=replace,enum=insert,enum=delete" jsonschema_description:"Default replace."`
}

// NewNotebookEdit returns the NotebookEdit tool: replace, insert or delete
// one cell of a Jupyter notebook, leaving the rest of the file untouched.
func NewNotebookEdit(cfg Config) tool.Tool {
	return tool.Func(tool.FuncConfig{Name: tool.NotebookEdit, Subject: tool.BuiltinSubject(tool.NotebookEdit), Description: notebookEditDescription},
		func(ctx context.Context, env *tool.Env, in notebookEditInput) (tool.Output, error) {
			return runNotebookEdit(env, in), nil
		})
}

func runNotebookEdit(env *tool.Env, in notebookEditInput) tool.Output {
	if in.NotebookPath == "" {
		return tool.Errorf("notebook_path is required")
	}
	path, problem := absFilePath(in.NotebookPath)
	if problem != "" {
		return tool.Errorf("%s", strings.Replace(problem, "file_path", "notebook_path", 1))
	}
	if filepath.Ext(path) != ".ipynb" {
		return tool.Errorf("%s is not a Jupyter notebook (.ipynb); use Edit for other files", path)
	}
	mode := in.EditMode
	if mode == "" {
		mode = "replace"
	}
	switch mode {
	case "replace", "insert", "delete":
	default:
		return tool.Errorf("edit_mode %q is not replace, insert or delete", in.EditMode)
	}
	switch in.CellType {
	case "", "code", "markdown":
	default:
		return tool.Errorf("cell_type %q is not code or markdown", in.CellType)
	}
	if mode == "insert" && in.CellType == "" {
		return tool.Errorf("cell_type is required to insert a cell (code or markdown)")
	}
	if mode != "insert" && in.CellID == "" {
		return tool.Errorf("cell_id is required to %s a cell", mode)
	}
	cur, problem := openForChange(env, path, "edit", true)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	if !cur.exists {
		return tool.Errorf("Notebook does not exist: %s", path)
	}
	data := cur.data
	nb, err := parseNotebook(data)
	if err != nil {
		return tool.Errorf("%s is not a notebook this tool can edit: %v", path, err)
	}
	at := -1
	if in.CellID != "" {
		if at = nb.find(in.CellID); at < 0 {
			return tool.Errorf("no cell %q in %s; %s", in.CellID, path, nb.cellIDs())
		}
	}
	var updated []byte
	var what string
	switch mode {
	case "replace":
		updated, err = nb.replace(at, in.NewSource, in.CellType)
		what = fmt.Sprintf("Replaced the source of cell %s", nb.cells[at].label(at))
	case "insert":
		var id string
		updated, id, err = nb.insert(at, in.NewSource, in.CellType)
		where := "at the start"
		if at >= 0 {
			where = "after cell " + nb.cells[at].label(at)
		}
		what = fmt.Sprintf("Inserted %s cell %s %s", in.CellType, id, where)
	case "delete":
		updated = nb.delete(at)
		what = fmt.Sprintf("Deleted cell %s", nb.cells[at].label(at))
	}
	if err != nil {
		return tool.Errorf("cannot edit %s: %v", path, err)
	}
	if _, err := parseNotebook(updated); err != nil {
		return tool.Errorf("the edit would leave %s unreadable (%v); nothing was changed", path, err)
	}
	if err := commitChange(env, path, updated); err != nil {
		return tool.Errorf("cannot write %s: %v", path, err)
	}
	return tool.Output{Text: fmt.Sprintf("%s in %s.", what, path)}
}

// cellFields decodes a cell object into its keys, keeping their values raw.
func cellFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// setType makes the fields fit cell type typ: code cells carry outputs and
// an execution count, markdown cells neither.
func setType(m map[string]json.RawMessage, typ string) {
	m["cell_type"], _ = json.Marshal(typ)
	if typ == "code" {
		m["outputs"] = json.RawMessage("[]")
		m["execution_count"] = json.RawMessage("null")
		return
	}
	delete(m, "outputs")
	delete(m, "execution_count")
}

// replace rewrites cell i with a new source; a code cell's outputs and
// execution count are cleared, as they no longer match the source.
func (nb *notebook) replace(i int, source, typ string) ([]byte, error) {
	c := nb.cells[i]
	m, err := cellFields(c.raw)
	if err != nil {
		return nil, err
	}
	m["source"] = splitSource(source)
	if typ == "" {
		typ = c.typ
	}
	if typ != c.typ || typ == "code" {
		setType(m, typ)
	}
	enc, err := nb.layoutOf().encodeCell(m)
	if err != nil {
		return nil, err
	}
	return splice(nb.data, c.start, c.end, enc), nil
}

// insert adds a new cell after cell i (at the start when i is -1) and
// returns the new data and the cell's label.
func (nb *notebook) insert(i int, source, typ string) ([]byte, string, error) {
	m := map[string]json.RawMessage{"metadata": json.RawMessage("{}"), "source": splitSource(source)}
	setType(m, typ)
	label := ""
	if nb.minor >= 5 {
		label = newCellID()
		m["id"], _ = json.Marshal(label)
	}
	l := nb.layoutOf()
	enc, err := l.encodeCell(m)
	if err != nil {
		return nil, "", err
	}
	sep := ","
	if l.prefix != "" || l.unit != "" {
		sep = ",\n" + l.prefix
	}
	switch {
	case len(nb.cells) == 0:
		inner := string(enc)
		if l.prefix != "" || l.unit != "" {
			inner = "\n" + l.prefix + inner + "\n" + strings.TrimSuffix(l.prefix, l.unit)
		}
		if label == "" {
			label = "cell-0"
		}
		return splice(nb.data, nb.cellsAt, nb.cellsEnd, []byte(inner)), label, nil
	case i < 0:
		if label == "" {
			label = "cell-0"
		}
		c := nb.cells[0]
		return splice(nb.data, c.start, c.start, append(enc, sep...)), label, nil
	default:
		if label == "" {
			label = fmt.Sprintf("cell-%d", i+1)
		}
		c := nb.cells[i]
		return splice(nb.data, c.end, c.end, append([]byte(sep), enc...)), label, nil
	}
}

// delete removes cell i with the separator next to it.
func (nb *notebook) delete(i int) []byte {
	switch {
	case len(nb.cells) == 1:
		return splice(nb.data, nb.cellsAt, nb.cellsEnd, nil)
	case i < len(nb.cells)-1:
		return splice(nb.data, nb.cells[i].start, nb.cells[i+1].start, nil)
	default:
		return splice(nb.data, nb.cells[i-1].end, nb.cells[i].end, nil)
	}
}

// splice returns data with [from, to) replaced by repl, in a new slice.
func splice(data []byte, from, to int, repl []byte) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(repl))
	out = append(out, data[:from]...)
	out = append(out, repl...)
	return append(out, data[to:]...)
}
