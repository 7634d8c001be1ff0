package builtin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRead(t *testing.T) {
	env := testEnv(t)
	dir := env.Cwd
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	small := writeFile(t, dir, "small.txt", "alpha\nbeta\r\ngamma")
	long := writeFile(t, dir, "long.txt", lines(2500))
	empty := writeFile(t, dir, "empty.txt", "")
	wide := writeFile(t, dir, "wide.txt", "short\n"+strings.Repeat("é", 2500)+"\nafter\n")
	huge := writeFile(t, dir, "huge.txt", strings.Repeat("0123456789abcdef\n", 20000))
	bin := writeFile(t, dir, "prog.bin", "ELF\x00\x01\x02rest")
	latin := writeFile(t, dir, "latin.dat", string(bytes.Repeat([]byte{0xe9, 0xff, 'a'}, 100)))
	png := writeFile(t, dir, "pic.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	webp := writeFile(t, dir, "pic.dat", "RIFF\x10\x00\x00\x00WEBPVP8 ")
	writeFile(t, dir, "config.yaml", "a: 1\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		in       any
		wantErr  bool
		contains []string
		exact    string
	}{
		{name: "whole small file", in: map[string]any{"file_path": small}, exact: "     1\talpha\n     2\tbeta\n     3\tgamma\n"},
		{name: "offset and limit", in: map[string]any{"file_path": long, "offset": 10, "limit": 2}, exact: "    10\tline 10\n    11\tline 11\n\n(Showing lines 10-11; the file continues. Read on with offset=12.)\n"},
		{name: "offset zero means start", in: map[string]any{"file_path": small, "offset": 0, "limit": 1}, contains: []string{"     1\talpha\n", "offset=2"}},
		{name: "default limit 2000", in: map[string]any{"file_path": long}, contains: []string{"  2000\tline 2000\n", "offset=2001"}},
		{name: "tail of file", in: map[string]any{"file_path": long, "offset": 2499}, exact: "  2499\tline 2499\n  2500\tline 2500\n"},
		{name: "offset past end", in: map[string]any{"file_path": small, "offset": 50}, contains: []string{"3 lines", "past the end"}},
		{name: "empty file", in: map[string]any{"file_path": empty}, contains: []string{"empty"}},
		{name: "long line truncated", in: map[string]any{"file_path": wide}, contains: []string{"     1\tshort\n", strings.Repeat("é", 2000) + "… [line truncated: 500 more characters]", "     3\tafter"}},
		{name: "huge file needs offset", in: map[string]any{"file_path": huge}, wantErr: true, contains: []string{"offset and limit"}},
		{name: "huge file with limit", in: map[string]any{"file_path": huge, "limit": 1}, contains: []string{"     1\t0123456789abcdef\n"}},
		{name: "relative path", in: map[string]any{"file_path": "small.txt"}, wantErr: true, contains: []string{"absolute", "small.txt"}},
		{name: "empty path", in: map[string]any{"file_path": ""}, wantErr: true, contains: []string{"required"}},
		{name: "missing file with suggestion", in: map[string]any{"file_path": filepath.Join(dir, "config.yml")}, wantErr: true, contains: []string{"does not exist", "Did you mean " + filepath.Join(dir, "config.yaml")}},
		{name: "missing file in missing dir", in: map[string]any{"file_path": filepath.Join(dir, "nope", "x.go")}, wantErr: true, contains: []string{"does not exist"}},
		{name: "directory", in: map[string]any{"file_path": filepath.Join(dir, "sub")}, wantErr: true, contains: []string{"is a directory", "Glob"}},
		{name: "binary", in: map[string]any{"file_path": bin}, wantErr: true, contains: []string{"binary", bin}},
		{name: "mostly not utf-8", in: map[string]any{"file_path": latin}, wantErr: true, contains: []string{"binary"}},
		{name: "png image", in: map[string]any{"file_path": png}, contains: []string{"PNG image of 16 bytes", "not passed to the model"}},
		{name: "webp by magic not name", in: map[string]any{"file_path": webp}, contains: []string{"WebP image"}},
		{name: "negative offset", in: map[string]any{"file_path": small, "offset": -1}, wantErr: true, contains: []string{"offset"}},
		{name: "zero limit", in: map[string]any{"file_path": small, "limit": 0}, wantErr: true, contains: []string{"limit"}},
		{name: "float offset", in: `{"file_path": "` + small + `", "offset": 1.5}`, wantErr: true},
		{name: "nul in path", in: map[string]any{"file_path": "/tmp/a\x00b"}, wantErr: true, contains: []string{"NUL"}},
	}
	rd := NewRead(Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := call(t, rd, env, tc.in)
			checkOutput(t, out, tc.wantErr, tc.contains...)
			if tc.exact != "" {
				if diff := cmp.Diff(tc.exact, out.Text); diff != "" {
					t.Errorf("output mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadRecordsStamp(t *testing.T) {
	env := testEnv(t)
	long := writeFile(t, env.Cwd, "long.txt", strings.Repeat("x\n", 10))
	rd := NewRead(Config{})
	call(t, rd, env, map[string]any{"file_path": long, "limit": 3})
	st, ok := env.Files.Lookup(long)
	fi, _ := os.Stat(long)
	if !ok || !st.Partial || st.Size != fi.Size() || !st.ModTime.Equal(fi.ModTime()) {
		t.Fatalf("stamp after partial read = %+v, %v", st, ok)
	}
	call(t, rd, env, map[string]any{"file_path": long})
	if st, _ := env.Files.Lookup(long); st.Partial {
		t.Fatalf("stamp after full read is partial")
	}
	// A failed read records nothing.
	bin := writeFile(t, env.Cwd, "b.bin", "\x00\x00")
	call(t, rd, env, map[string]any{"file_path": bin})
	if _, ok := env.Files.Lookup(bin); ok {
		t.Fatal("binary file was recorded as read")
	}
}

func TestReadNilEnvFiles(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.txt", "a\n")
	out := call(t, NewRead(Config{}), nil, map[string]any{"file_path": p})
	checkOutput(t, out, false, "     1\ta")
}

func TestSliceLines(t *testing.T) {
	tests := []struct {
		in           string
		start, limit int
		want         []string
		total        int
		more         bool
	}{
		{"", 1, 10, nil, 0, false},
		{"a", 1, 10, []string{"a"}, 1, false},
		{"a\n", 1, 10, []string{"a"}, 1, false},
		{"a\n\n", 1, 10, []string{"a", ""}, 2, false},
		{"a\nb\nc\n", 2, 1, []string{"b"}, 2, true},
		{"a\nb\nc", 3, 5, []string{"c"}, 3, false},
		{"a\r\nb\r\n", 1, 5, []string{"a", "b"}, 2, false},
		{"abcdef\n", 1, 1, []string{"abc… [line truncated: 3 more characters]"}, 1, false},
	}
	for _, tc := range tests {
		got, total, more, err := sliceLines(bufioReader(tc.in), tc.start, tc.limit, 3)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || total != tc.total || more != tc.more {
			t.Errorf("sliceLines(%q, %d, %d) = %q, %d, %v; want %q, %d, %v", tc.in, tc.start, tc.limit, got, total, more, tc.want, tc.total, tc.more)
		}
	}
}
