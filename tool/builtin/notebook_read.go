package builtin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxOutputChars caps the text shown for one cell output.
const maxOutputChars = 10000

// renderNotebook shows a notebook to the model as its cells in order, each
// with its id, type and source, followed by its outputs.
func renderNotebook(nb *notebook, path string, limit int) string {
	var b strings.Builder
	lang := nb.language
	if lang == "" {
		lang = "unknown language"
	}
	fmt.Fprintf(&b, "Jupyter notebook %s (%s, %s). Cells are named by id for NotebookEdit.\n", path, lang, plural(len(nb.cells), "cell", "cells"))
	for i, c := range nb.cells {
		attrs := fmt.Sprintf(`id="%s" type="%s"`, c.label(i), c.typ)
		if c.typ == "code" && c.execCount != nil {
			attrs += fmt.Sprintf(` execution_count="%d"`, *c.execCount)
		}
		fmt.Fprintf(&b, "\n<cell %s>\n%s", attrs, c.source)
		if !strings.HasSuffix(c.source, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("</cell>\n")
		for _, o := range c.outputs {
			if text := renderOutput(o); text != "" {
				fmt.Fprintf(&b, "<output cell=\"%s\">\n%s", c.label(i), capText(text, maxOutputChars))
				if !strings.HasSuffix(text, "\n") {
					b.WriteByte('\n')
				}
				b.WriteString("</output>\n")
			}
		}
	}
	return capText(b.String(), limit)
}

type nbOutput struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name"`
	Text       json.RawMessage            `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
	Ename      string                     `json:"ename"`
	Evalue     string                     `json:"evalue"`
	Traceback  []string                   `json:"traceback"`
}

// renderOutput turns one output into text: streams and plain text as they
// are, errors with their traceback (colours removed), other media named
// with their size.
func renderOutput(raw json.RawMessage) string {
	var o nbOutput
	if err := json.Unmarshal(raw, &o); err != nil {
		return "(an output this reader cannot parse)"
	}
	switch o.OutputType {
	case "stream":
		s, _ := joinSource(o.Text)
		if o.Name == "stderr" {
			return "[stderr]\n" + s
		}
		return s
	case "error":
		// Tracebacks carry terminal escape sequences (colours, mostly).
		return fmt.Sprintf("%s: %s\n%s", o.Ename, o.Evalue, ansi.Strip(strings.Join(o.Traceback, "\n")))
	case "execute_result", "display_data":
		for _, mime := range []string{"text/markdown", "text/plain"} {
			if v, ok := o.Data[mime]; ok {
				s, _ := joinSource(v)
				return s
			}
		}
		var kinds []string
		for mime, v := range o.Data {
			kinds = append(kinds, fmt.Sprintf("%s, %d bytes", mime, len(v)))
		}
		sort.Strings(kinds)
		if len(kinds) == 0 {
			return ""
		}
		return "(" + strings.Join(kinds, "; ") + ": not shown)"
	}
	return ""
}

// maxNotebookBytes is the largest notebook Read renders as cells (outputs
// with images make notebooks large); bigger ones are read as text.
const maxNotebookBytes = 32 << 20
