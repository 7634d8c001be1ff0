package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

func TestMultiEdit(t *testing.T) {
	t.Parallel()
	me, rd := NewMultiEdit(Config{}), NewRead(Config{})
	s := func(v string) *string { return &v }
	type step = map[string]any
	for _, tc := range []struct {
		name     string
		content  string // "" with missing: the file does not exist
		missing  bool
		noRead   bool
		edits    []step
		want     string // expected content; "" with wantErr means unchanged
		wantErr  string
		wantText string
	}{
		{name: "in order", content: "a b c\n", edits: []step{{"old_string": "a", "new_string": "x"}, {"old_string": "x b", "new_string": "y"}}, want: "y c\n", wantText: "2 edits applied"},
		{name: "replace all", content: "a a a\n", edits: []step{{"old_string": "a", "new_string": "b", "replace_all": true}}, want: "b b b\n", wantText: "3 replacements"},
		{name: "one failing edit changes nothing", content: "one two\n", edits: []step{{"old_string": "one", "new_string": "1"}, {"old_string": "three", "new_string": "3"}}, wantErr: "edit 2 of 2: old_string was not found"},
		{name: "later edit sees earlier result", content: "abc\n", edits: []step{{"old_string": "abc", "new_string": "xyz"}, {"old_string": "abc", "new_string": "q"}}, wantErr: "edit 2 of 2"},
		{name: "ambiguous", content: "a a\n", edits: []step{{"old_string": "a", "new_string": "b"}}, wantErr: "occurs 2 times"},
		{name: "identical strings", content: "a\n", edits: []step{{"old_string": "a", "new_string": "a"}}, wantErr: "edit 1: old_string and new_string are identical"},
		{name: "missing new_string", content: "a\n", edits: []step{{"old_string": "a"}}, wantErr: "both required"},
		{name: "no edits", content: "a\n", edits: []step{}, wantErr: "edits is empty"},
		{name: "not read first", content: "a\n", noRead: true, edits: []step{{"old_string": "a", "new_string": "b"}}, wantErr: "has not been read yet"},
		{name: "create", missing: true, edits: []step{{"old_string": "", "new_string": "hello world\n"}, {"old_string": "world", "new_string": "there"}}, want: "hello there\n", wantText: "Created"},
		{name: "missing file", missing: true, edits: []step{{"old_string": "x", "new_string": "y"}}, wantErr: "File does not exist"},
		{name: "empty old_string later", content: "a\n", edits: []step{{"old_string": "a", "new_string": "b"}, {"old_string": "", "new_string": "c"}}, wantErr: "edit 2 of 2: old_string is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := testEnv(t)
			p := filepath.Join(env.Cwd, "f.txt")
			if !tc.missing {
				writeFile(t, env.Cwd, "f.txt", tc.content)
				if !tc.noRead {
					checkOutput(t, call(t, rd, env, map[string]any{"file_path": p}), false)
				}
			}
			out := call(t, me, env, map[string]any{"file_path": p, "edits": tc.edits})
			if tc.wantErr != "" {
				checkOutput(t, out, true, tc.wantErr)
				if tc.missing {
					if _, err := os.Stat(p); err == nil {
						t.Fatal("a failed MultiEdit created the file")
					}
				} else if got := readFile(t, p); got != tc.content {
					t.Fatalf("file changed by a failed MultiEdit: %q", got)
				}
				noTempFiles(t, env.Cwd)
				return
			}
			checkOutput(t, out, false, tc.wantText)
			if got := readFile(t, p); got != tc.want {
				t.Fatalf("content = %q, want %q", got, tc.want)
			}
			// The file the tool wrote may be edited again without a Read.
			again := call(t, me, env, map[string]any{"file_path": p, "edits": []step{{"old_string": tc.want, "new_string": "z"}}})
			checkOutput(t, again, false)
		})
	}
	_ = s
}

func TestLS(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	root := env.Cwd
	writeFile(t, root, ".gitignore", "*.log\nbuild/\n")
	writeFile(t, root, "main.go", "package main\n")
	writeFile(t, root, "debug.log", "x")
	writeFile(t, root, "build/out.bin", "x")
	writeFile(t, root, "src/a.go", strings.Repeat("a", 2048))
	writeFile(t, root, "src/deep/b.go", "b")
	writeFile(t, root, "docs/x.md", "x")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	ls := NewLS(Config{})
	out := call(t, ls, env, map[string]any{"path": root})
	want := root + `/
  - docs/
    - x.md (1 byte)
  - src/
    - deep/
      - b.go (1 byte)
    - a.go (2.0 KiB)
  - .gitignore (13 bytes)
  - link.go -> main.go (symlink)
  - main.go (13 bytes)
  (3 entries ignored by .gitignore, ignore patterns or deny rules not shown)
`
	if diff := cmp.Diff(want, out.Text); diff != "" || out.IsError {
		t.Fatalf("LS (-want +got):\n%s", diff)
	}
	// ignore globs; relative path.
	out = call(t, ls, env, map[string]any{"path": "src", "ignore": []string{"deep"}})
	checkOutput(t, out, false, "a.go")
	if strings.Contains(out.Text, "deep") {
		t.Fatalf("ignored directory listed:\n%s", out.Text)
	}
	// Deny rules hide entries.
	env2 := &tool.Env{Cwd: root, Files: tool.NewFileState(), Hidden: func(p string) bool { return strings.HasSuffix(p, "main.go") }}
	if out := call(t, ls, env2, map[string]any{}); strings.Contains(out.Text, "- main.go (") {
		t.Fatalf("hidden file listed:\n%s", out.Text)
	}
	// The cap: breadth first, and it says so.
	capped := NewLS(Config{LSLimit: 3})
	out = call(t, capped, env, map[string]any{"path": root})
	checkOutput(t, out, false, "Listing cut at 3 entries", "(not listed)")
	// Bad input.
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"path": filepath.Join(root, "main.go")}, "is a file, not a directory"},
		{map[string]any{"path": filepath.Join(root, "nope")}, "cannot list"},
		{map[string]any{"ignore": []string{"[bad"}}, "invalid ignore pattern"},
	} {
		checkOutput(t, call(t, ls, env, tc.in), true, tc.want)
	}
	if !ls.ReadOnly() {
		t.Fatal("LS must be read-only")
	}
}

func TestTodoWrite(t *testing.T) {
	t.Parallel()
	tw := NewTodoWrite(Config{})
	env := testEnv(t)
	var seen [][]tool.Todo
	env.Todos.OnChange(func(l []tool.Todo) { seen = append(seen, l) })
	item := func(c, s string) map[string]any {
		return map[string]any{"content": c, "status": s, "activeForm": c + "ing"}
	}
	out := call(t, tw, env, map[string]any{"todos": []any{item("Build", "in_progress"), item("Test", "pending")}})
	checkOutput(t, out, false, "[>] Build", "[ ] Test", "0 of 2 completed")
	want := []tool.Todo{{Content: "Build", Status: tool.TodoInProgress, ActiveForm: "Building"}, {Content: "Test", Status: tool.TodoPending, ActiveForm: "Testing"}}
	if diff := cmp.Diff(want, env.Todos.Items()); diff != "" {
		t.Fatalf("list (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		todos any
		want  string
	}{
		{[]any{item("A", "in_progress"), item("B", "in_progress")}, "2 todos are in_progress"},
		{[]any{item("A", "done")}, `status "done"`},
		{[]any{map[string]any{"content": "", "status": "pending", "activeForm": "x"}}, "content is empty"},
		{[]any{map[string]any{"content": "A", "status": "pending", "activeForm": " "}}, "activeForm is empty"},
		{nil, "todos is required"},
	} {
		checkOutput(t, call(t, tw, env, map[string]any{"todos": tc.todos}), true, tc.want)
	}
	if diff := cmp.Diff(want, env.Todos.Items()); diff != "" {
		t.Fatalf("a refused call changed the list (-want +got):\n%s", diff)
	}
	// A child's list is its own.
	child := env.Clone("a1")
	if len(child.Todos.Items()) != 0 {
		t.Fatal("a clone shares the todo list")
	}
	// All completed clears the list.
	out = call(t, tw, env, map[string]any{"todos": []any{item("Build", "completed"), item("Test", "completed")}})
	checkOutput(t, out, false, "All 2 tasks completed")
	if n := len(env.Todos.Items()); n != 0 {
		t.Fatalf("list holds %d items after all were completed", n)
	}
	if len(seen) != 2 {
		t.Fatalf("OnChange called %d times, want 2", len(seen))
	}
}

// notebook is an nbformat 4.5 notebook written the way Jupyter writes
// them: one-space indent, sorted keys.
const testNotebook = `{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {
    "tags": ["keep"]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "42\n"
     ]
    },
    {
     "data": {
      "image/png": "iVBORw0KGgo=",
      "text/plain": [
       "<Figure>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    },
    {
     "ename": "ValueError",
     "evalue": "bad",
     "output_type": "error",
     "traceback": ["\u001b[0;31mValueError\u001b[0m: bad"]
    }
   ],
   "source": [
    "print(6*7)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
  "language_info": {"name": "python"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

func TestReadNotebook(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	p := writeFile(t, env.Cwd, "n.ipynb", testNotebook)
	out := call(t, NewRead(Config{}), env, map[string]any{"file_path": p})
	checkOutput(t, out, false,
		"(python, 2 cells)",
		"<cell id=\"intro\" type=\"markdown\">\n# Title\ntext\n</cell>",
		"<cell id=\"calc\" type=\"code\" execution_count=\"3\">\nprint(6*7)\n</cell>",
		"<output cell=\"calc\">\n42\n</output>",
		"<Figure>",
		"ValueError: bad\nValueError: bad")
	if strings.Contains(out.Text, "\x1b") {
		t.Fatalf("ANSI codes left in the traceback:\n%q", out.Text)
	}
	// With offset/limit, the raw JSON lines come back.
	out = call(t, NewRead(Config{}), env, map[string]any{"file_path": p, "offset": 1, "limit": 2})
	checkOutput(t, out, false, `"cells": [`)
}

func TestNotebookEdit(t *testing.T) {
	t.Parallel()
	ne := NewNotebookEdit(Config{})
	setup := func(t *testing.T, content string) (*tool.Env, string) {
		env := testEnv(t)
		p := writeFile(t, env.Cwd, "n.ipynb", content)
		checkOutput(t, call(t, NewRead(Config{}), env, map[string]any{"file_path": p}), false)
		return env, p
	}
	cells := func(t *testing.T, p string) []map[string]any {
		var nb struct {
			Cells []map[string]any `json:"cells"`
		}
		if err := json.Unmarshal([]byte(readFile(t, p)), &nb); err != nil {
			t.Fatalf("notebook no longer JSON: %v\n%s", err, readFile(t, p))
		}
		return nb.Cells
	}

	t.Run("replace keeps everything else byte for byte", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t, testNotebook)
		out := call(t, ne, env, map[string]any{"notebook_path": p, "cell_id": "intro", "new_source": "# New\nbody"})
		checkOutput(t, out, false, "Replaced the source of cell intro")
		got := readFile(t, p)
		want := strings.Replace(testNotebook, "\"# Title\\n\",\n    \"text\"", "\"# New\\n\",\n    \"body\"", 1)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("notebook (-want +got):\n%s", diff)
		}
	})
	t.Run("replace code clears outputs, keeps metadata", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t, testNotebook)
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": p, "cell_id": "calc", "new_source": "x = 1\n"}), false)
		c := cells(t, p)[1]
		if c["execution_count"] != nil || len(c["outputs"].([]any)) != 0 || c["metadata"].(map[string]any)["tags"] == nil {
			t.Fatalf("cell = %v", c)
		}
		if !strings.HasPrefix(readFile(t, p), testNotebook[:strings.Index(testNotebook, `  {
   "cell_type": "code"`)]) {
			t.Fatal("the cell before the edited one changed")
		}
	})
	t.Run("insert after and at start, delete", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t, testNotebook)
		out := call(t, ne, env, map[string]any{"notebook_path": p, "cell_id": "intro", "new_source": "y = 2", "cell_type": "code", "edit_mode": "insert"})
		checkOutput(t, out, false, "Inserted code cell", "after cell intro")
		out = call(t, ne, env, map[string]any{"notebook_path": p, "new_source": "first", "cell_type": "markdown", "edit_mode": "insert"})
		checkOutput(t, out, false, "at the start")
		cs := cells(t, p)
		var srcs []string
		for _, c := range cs {
			b, _ := json.Marshal(c["source"])
			srcs = append(srcs, string(b))
		}
		if diff := cmp.Diff([]string{`["first"]`, `["# Title\n","text"]`, `["y = 2"]`, `["print(6*7)"]`}, srcs); diff != "" {
			t.Fatalf("sources (-want +got):\n%s", diff)
		}
		if id, _ := cs[2]["id"].(string); len(id) != 8 {
			t.Fatalf("inserted cell id %q", cs[2]["id"])
		}
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": p, "cell_id": "calc", "new_source": "", "edit_mode": "delete"}), false, "Deleted cell calc")
		if n := len(cells(t, p)); n != 3 {
			t.Fatalf("%d cells after delete", n)
		}
	})
	t.Run("cells without ids and an emptied notebook", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t, `{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":"a"}],"metadata":{},"nbformat":4,"nbformat_minor":2}`)
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": p, "cell_id": "cell-0", "new_source": "", "edit_mode": "delete"}), false)
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": p, "new_source": "b", "cell_type": "code", "edit_mode": "insert"}), false, "cell-0")
		if got := readFile(t, p); got != `{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":["b"]}],"metadata":{},"nbformat":4,"nbformat_minor":2}` {
			t.Fatalf("compact notebook = %s", got)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t, testNotebook)
		for _, tc := range []struct {
			in   map[string]any
			want string
		}{
			{map[string]any{"notebook_path": p, "cell_id": "nope", "new_source": "x"}, `no cell "nope"`},
			{map[string]any{"notebook_path": p, "cell_id": "cell-9", "new_source": "x"}, "its cells are intro, calc"},
			{map[string]any{"notebook_path": p, "new_source": "x", "edit_mode": "insert"}, "cell_type is required"},
			{map[string]any{"notebook_path": p, "new_source": "x"}, "cell_id is required"},
			{map[string]any{"notebook_path": p, "cell_id": "intro", "new_source": "x", "edit_mode": "move"}, "edit_mode"},
			{map[string]any{"notebook_path": p, "cell_id": "intro", "new_source": "x", "cell_type": "raw"}, "cell_type"},
			{map[string]any{"notebook_path": "n.ipynb", "cell_id": "intro", "new_source": "x"}, "absolute"},
			{map[string]any{"notebook_path": filepath.Join(env.Cwd, "a.txt"), "cell_id": "intro", "new_source": "x"}, "not a Jupyter notebook"},
		} {
			checkOutput(t, call(t, ne, env, tc.in), true, tc.want)
		}
		if readFile(t, p) != testNotebook {
			t.Fatal("a refused edit changed the notebook")
		}
		// Not read first; not a notebook inside.
		bad := writeFile(t, env.Cwd, "bad.ipynb", `{"cells": [], "nbformat": 3}`)
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": bad, "new_source": "x", "cell_type": "code", "edit_mode": "insert"}), true, "has not been read yet")
		checkOutput(t, call(t, NewRead(Config{}), env, map[string]any{"file_path": bad}), false)
		checkOutput(t, call(t, ne, env, map[string]any{"notebook_path": bad, "new_source": "x", "cell_type": "code", "edit_mode": "insert"}), true, "nbformat 3 is not supported")
	})
}
