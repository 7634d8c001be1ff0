package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testEnv returns an Env rooted at a fresh temporary directory.
func testEnv(t *testing.T) *tool.Env {
	t.Helper()
	return &tool.Env{Cwd: t.TempDir(), Files: tool.NewFileState(), Todos: &tool.TodoList{}}
}

// call runs tl with in (a string is sent as raw JSON, anything else is
// marshalled) and fails the test on a Go error.
func call(t *testing.T, tl tool.Tool, env *tool.Env, in any) tool.Output {
	t.Helper()
	return callCtx(t, context.Background(), tl, env, in)
}

func callCtx(t *testing.T, ctx context.Context, tl tool.Tool, env *tool.Env, in any) tool.Output {
	t.Helper()
	var raw []byte
	if s, ok := in.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(in); err != nil {
			t.Fatal(err)
		}
	}
	out, err := tl.Run(ctx, env, raw)
	if err != nil {
		t.Fatalf("%s returned a Go error: %v", tl.Spec().Name, err)
	}
	return out
}

// writeFile creates dir/name with content and returns its path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// setMtime sets a file's modification time to base plus n seconds.
func setMtime(t testing.TB, p string, n int) {
	t.Helper()
	tm := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	if err := os.Chtimes(p, tm, tm); err != nil {
		t.Fatal(err)
	}
}

func checkOutput(t *testing.T, out tool.Output, wantErr bool, contains ...string) {
	t.Helper()
	if out.IsError != wantErr {
		t.Errorf("IsError = %v, want %v; text:\n%s", out.IsError, wantErr, out.Text)
	}
	for _, c := range contains {
		if !strings.Contains(out.Text, c) {
			t.Errorf("output lacks %q; text:\n%s", c, out.Text)
		}
	}
}

func TestToolsOrderAndSpecs(t *testing.T) {
	tools := Tools(Config{})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	want := []string{NameBash, NameBashOutput, NameEdit, NameGlob, NameGrep, NameKillShell, tool.LS, tool.MultiEdit, tool.NotebookEdit, NameRead, tool.TodoWrite, tool.WebFetch, tool.WebSearch, NameWrite}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", names, want)
	}
	readOnly := map[string]bool{NameRead: true, NameGlob: true, NameGrep: true, NameBashOutput: true, tool.LS: true, tool.WebFetch: true, tool.WebSearch: true}
	again := Tools(Config{})
	for i, tl := range tools {
		s := tl.Spec()
		if tl.ReadOnly() != readOnly[s.Name] {
			t.Errorf("%s ReadOnly = %v", s.Name, tl.ReadOnly())
		}
		if s.Description == "" || !json.Valid(s.InputSchema) {
			t.Errorf("%s: empty description or invalid schema", s.Name)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(again[i].Spec())
		if string(a) != string(b) {
			t.Errorf("%s spec bytes differ between constructions", s.Name)
		}
	}
	// Field names follow Claude Code's.
	grep, _ := json.Marshal(tools[4].Spec().InputSchema)
	for _, f := range []string{`"-A"`, `"-B"`, `"-C"`, `"-n"`, `"-i"`, `"head_limit"`, `"output_mode"`, `"multiline"`} {
		if !strings.Contains(string(grep), f) {
			t.Errorf("Grep schema lacks %s: %s", f, grep)
		}
	}
}

func TestBadJSONInputs(t *testing.T) {
	env := testEnv(t)
	env.Shells = NewShells()
	t.Cleanup(func() { env.Shells.Close() })
	inputs := []string{``, `{}`, `null`, `[]`, `{"file_path": 3}`, `{"pattern": {}}`, `{"command": ""}`, `{"unknown": 1}`, `{"timeout": "x"}`, `"str"`, `{"bash_id": 1}`, `{`}
	for _, tl := range Tools(Config{}) {
		for _, in := range inputs {
			if tl.Spec().Name == tool.LS && (in == `` || in == `{}` || in == `null`) {
				continue // every LS field is optional: no input lists the working directory
			}
			out := call(t, tl, env, in)
			if !out.IsError {
				t.Errorf("%s(%s) = %q, want an error result", tl.Spec().Name, in, out.Text)
			}
		}
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReaderSize(strings.NewReader(s), 16) }
