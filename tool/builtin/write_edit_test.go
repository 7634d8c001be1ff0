package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTempFiles fails if a temporary file of atomicWrite is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".cadre-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// touchLater changes a file's content and makes sure its mtime moves.
func touchLater(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

func TestWrite(t *testing.T) {
	env := testEnv(t)
	wr, rd := NewWrite(Config{}), NewRead(Config{})
	dir := env.Cwd

	// New file, parent directories created.
	p := filepath.Join(dir, "a", "b", "new.txt")
	out := call(t, wr, env, map[string]any{"file_path": p, "content": "one\ntwo\n"})
	checkOutput(t, out, false, "Created", "2 lines")
	if got := readFile(t, p); got != "one\ntwo\n" {
		t.Fatalf("content = %q", got)
	}
	noTempFiles(t, filepath.Dir(p))
	// A file the agent itself wrote may be overwritten.
	out = call(t, wr, env, map[string]any{"file_path": p, "content": "three"})
	checkOutput(t, out, false, "Updated")

	// Existing file not read: refused, untouched.
	existing := writeFile(t, dir, "exists.sh", "#!/bin/sh\n")
	if err := os.Chmod(existing, 0o751); err != nil {
		t.Fatal(err)
	}
	out = call(t, wr, env, map[string]any{"file_path": existing, "content": "x"})
	checkOutput(t, out, true, "has not been read", existing)
	if readFile(t, existing) != "#!/bin/sh\n" {
		t.Fatal("unread file was overwritten")
	}
	// After a Read it may be written, and keeps its mode.
	call(t, rd, env, map[string]any{"file_path": existing})
	out = call(t, wr, env, map[string]any{"file_path": existing, "content": "#!/bin/sh\necho hi\n"})
	checkOutput(t, out, false, "Updated")
	fi, _ := os.Stat(existing)
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("mode = %v, want 0751", fi.Mode().Perm())
	}
	noTempFiles(t, dir)
	// Changed on disk since: refused.
	touchLater(t, existing, "changed by someone else\n")
	out = call(t, wr, env, map[string]any{"file_path": existing, "content": "mine"})
	checkOutput(t, out, true, "modified since")

	// Bad inputs.
	for name, in := range map[string]map[string]any{
		"relative":  {"file_path": "rel.txt", "content": "x"},
		"directory": {"file_path": dir, "content": "x"},
		"empty":     {"file_path": "", "content": "x"},
	} {
		if out := call(t, wr, env, in); !out.IsError {
			t.Errorf("%s: want error, got %q", name, out.Text)
		}
	}
	if out := call(t, wr, env, `{"file_path": "/tmp/x"}`); !out.IsError {
		t.Errorf("missing content accepted: %q", out.Text)
	}
}

func TestWriteThroughSymlink(t *testing.T) {
	env := testEnv(t)
	target := writeFile(t, env.Cwd, "target.txt", "old\n")
	link := filepath.Join(env.Cwd, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	call(t, NewRead(Config{}), env, map[string]any{"file_path": link})
	out := call(t, NewWrite(Config{}), env, map[string]any{"file_path": link, "content": "new\n"})
	checkOutput(t, out, false)
	if readFile(t, target) != "new\n" {
		t.Fatal("symlink target not updated")
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink was replaced by a file")
	}
}

func TestEdit(t *testing.T) {
	const base = "package main\n\nfunc a() {}\nfunc b() {}\n// x x x\n"
	tests := []struct {
		name     string
		content  string // file content; "-" means no file
		read     bool
		modify   bool // change the file after reading it
		in       map[string]any
		wantErr  bool
		contains []string
		want     string // file content afterwards
	}{
		{name: "unique match", content: base, read: true,
			in:   map[string]any{"old_string": "func a() {}", "new_string": "func a() { return }"},
			want: strings.Replace(base, "func a() {}", "func a() { return }", 1), contains: []string{"Edited", "     3\tfunc a() { return }"}},
		{name: "not read", content: base, in: map[string]any{"old_string": "func a", "new_string": "func z"},
			wantErr: true, contains: []string{"has not been read"}, want: base},
		{name: "modified since read", content: base, read: true, modify: true,
			in: map[string]any{"old_string": "func a", "new_string": "func z"}, wantErr: true, contains: []string{"modified since it was last read", "Read it again"}},
		{name: "non-unique", content: base, read: true, in: map[string]any{"old_string": "x", "new_string": "y"},
			wantErr: true, contains: []string{"occurs 3 times", "replace_all"}, want: base},
		{name: "replace all", content: base, read: true, in: map[string]any{"old_string": "x", "new_string": "y", "replace_all": true},
			want: strings.ReplaceAll(base, "x", "y"), contains: []string{"replaced 3 occurrences"}},
		{name: "zero matches", content: base, read: true, in: map[string]any{"old_string": "func c", "new_string": "func d"},
			wantErr: true, contains: []string{"not found"}, want: base},
		{name: "identical strings", content: base, read: true, in: map[string]any{"old_string": "func a", "new_string": "func a"},
			wantErr: true, contains: []string{"identical"}, want: base},
		{name: "create with empty old_string", content: "-", in: map[string]any{"old_string": "", "new_string": "hello\n"},
			want: "hello\n", contains: []string{"Created"}},
		{name: "empty old_string on non-empty file", content: base, read: true, in: map[string]any{"old_string": "", "new_string": "x"},
			wantErr: true, contains: []string{"already has content"}, want: base},
		{name: "empty old_string fills empty file", content: "", read: true, in: map[string]any{"old_string": "", "new_string": "x\n"}, want: "x\n"},
		{name: "missing file", content: "-", in: map[string]any{"old_string": "a", "new_string": "b"},
			wantErr: true, contains: []string{"does not exist"}},
		{name: "crlf file", content: "a\r\nb\r\nc\r\n", read: true, in: map[string]any{"old_string": "a\nb", "new_string": "a\nB"},
			want: "a\r\nB\r\nc\r\n"},
		{name: "delete text", content: base, read: true, in: map[string]any{"old_string": "func b() {}\n", "new_string": ""},
			want: strings.Replace(base, "func b() {}\n", "", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			p := filepath.Join(env.Cwd, "f.go")
			if tc.content != "-" {
				writeFile(t, env.Cwd, "f.go", tc.content)
			}
			if tc.read {
				out := call(t, NewRead(Config{}), env, map[string]any{"file_path": p})
				if out.IsError {
					t.Fatal(out.Text)
				}
			}
			if tc.modify {
				touchLater(t, p, tc.content+"// more\n")
			}
			in := map[string]any{"file_path": p}
			for k, v := range tc.in {
				in[k] = v
			}
			out := call(t, NewEdit(Config{}), env, in)
			checkOutput(t, out, tc.wantErr, tc.contains...)
			if tc.want != "" {
				if diff := cmp.Diff(tc.want, readFile(t, p)); diff != "" {
					t.Errorf("file content (-want +got):\n%s", diff)
				}
			}
			noTempFiles(t, env.Cwd)
			if !tc.wantErr {
				st, ok := env.Files.Lookup(p)
				fi, _ := os.Stat(p)
				if !ok || st.Size != fi.Size() || !st.ModTime.Equal(fi.ModTime()) {
					t.Errorf("stamp not updated after edit: %+v", st)
				}
			}
		})
	}
}

func TestEditTwiceWithoutReread(t *testing.T) {
	env := testEnv(t)
	p := writeFile(t, env.Cwd, "f.txt", "one two three\n")
	call(t, NewRead(Config{}), env, map[string]any{"file_path": p})
	ed := NewEdit(Config{})
	checkOutput(t, call(t, ed, env, map[string]any{"file_path": p, "old_string": "one", "new_string": "1"}), false)
	checkOutput(t, call(t, ed, env, map[string]any{"file_path": p, "old_string": "two", "new_string": "2"}), false)
	if got := readFile(t, p); got != "1 2 three\n" {
		t.Fatalf("content = %q", got)
	}
}

func TestEditBadPaths(t *testing.T) {
	env := &tool.Env{Cwd: t.TempDir()} // no FileState at all
	ed := NewEdit(Config{})
	checkOutput(t, call(t, ed, env, map[string]any{"file_path": "x.go", "old_string": "a", "new_string": "b"}), true, "absolute")
	checkOutput(t, call(t, ed, env, map[string]any{"file_path": env.Cwd, "old_string": "a", "new_string": "b"}), true, "directory")
	p := writeFile(t, env.Cwd, "f", "a")
	checkOutput(t, call(t, ed, env, map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}), true, "has not been read")
}

func TestSnippet(t *testing.T) {
	content := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	from := strings.Index(content, "5")
	got := snippet(content, from, from+2, 100)
	want := "     2\t2\n     3\t3\n     4\t4\n     5\t5\n     6\t6\n     7\t7\n     8\t8\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snippet (-want +got):\n%s", diff)
	}
	if got := snippet("", 0, 0, 10); !strings.Contains(got, "empty") {
		t.Errorf("snippet of empty = %q", got)
	}
}
