package builtin

import "testing"

// FuzzNotebook: parsing any bytes never panics, and on a notebook it
// accepts, every edit gives a notebook that parses again with the
// expected number of cells.
func FuzzNotebook(f *testing.F) {
	f.Add([]byte(testNotebook))
	f.Add([]byte(`{"cells":[],"metadata":{},"nbformat":4,"nbformat_minor":5}`))
	f.Add([]byte(`{"cells":[{"cell_type":"markdown","metadata":{},"source":"a\nb"}],"nbformat":4}`))
	f.Add([]byte("{\n\t\"cells\": [\n\t\t{\"cell_type\": \"code\", \"source\": [], \"outputs\": [{\"output_type\": \"error\", \"traceback\": [\"x\"]}]}\n\t],\n\t\"nbformat\": 4\n}"))
	f.Add([]byte(`{"nbformat":4,"cells":[{"cell_type":"code","source":["a"],"outputs":[{"output_type":"execute_result","data":{"text/plain":"1"}}]}],"cells2":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := parseNotebook(data)
		if err != nil {
			return
		}
		_ = renderNotebook(nb, "/n.ipynb", 1<<16)
		n := len(nb.cells)
		check := func(op string, out []byte, want int) {
			again, err := parseNotebook(out)
			if err != nil {
				t.Fatalf("%s left an unreadable notebook: %v\n%s", op, err, out)
			}
			if len(again.cells) != want {
				t.Fatalf("%s: %d cells, want %d", op, len(again.cells), want)
			}
		}
		out, _, err := nb.insert(-1, "new\ncell", "markdown")
		if err == nil {
			check("insert first", out, n+1)
		}
		if n == 0 {
			return
		}
		out, _, err = nb.insert(n-1, "x", "code")
		if err == nil {
			check("insert last", out, n+1)
		}
		if out, err := nb.replace(0, "y", "code"); err == nil {
			check("replace", out, n)
		}
		check("delete first", nb.delete(0), n-1)
		check("delete last", nb.delete(n-1), n-1)
	})
}
