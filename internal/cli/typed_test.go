package cli

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
)

// TestTypedFieldsKeepTheirWireBytes: the stream-json fields that became
// named types (permission mode, task status, retry cause, notification
// status, MCP server state) write the same bytes as the strings they replaced.
func TestTypedFieldsKeepTheirWireBytes(t *testing.T) {
	t.Parallel()
	retry := retryJSON{Type: "system", Subtype: "api_retry"}
	retry.Cadre.Cause = llm.RetryCut
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"init permissionMode", initJSON{PermissionMode: permission.ModeAcceptEdits},
			`"permissionMode":"acceptEdits"`},
		{"trust permission_mode", trustJSON{PermissionMode: permission.ModePlan},
			`{"trusted":false,"permission_mode":"plan","widenings":null,"ignored":null}`},
		{"task_updated patch", taskPatch{Status: task.Killed, EndTime: 7},
			`{"status":"killed","end_time":7}`},
		{"pending patch", taskPatch{Status: task.Pending, Description: "d"},
			`{"status":"pending","description":"d"}`},
		{"notification killed", taskNotificationJSON{Status: notificationStatusOf(task.Killed)},
			`"status":"stopped"`},
		{"notification completed", taskNotificationJSON{Status: notificationStatusOf(task.Completed)},
			`"status":"completed"`},
		{"notification failed", taskNotificationJSON{Status: notificationStatusOf(task.Failed)},
			`"status":"failed"`},
		{"agent tool_use_result", agentToolResult{Status: task.Completed},
			`{"status":"completed",`},
		{"api_retry cause", retry,
			`"cadre":{"cause":"cut","message":""}`},
		{"tasks list", taskJSON{Status: task.Running},
			`"status":"running"`},
		{"init mcp_servers", mcpServersJSON([]mcp.InitServer{{Name: "fs", Status: mcp.StatePending}}),
			`[{"name":"fs","status":"pending"}]`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %s\nlacks %s", tc.name, b, tc.want)
		}
	}
}

// typedFields are the fields whose values are named string types with
// constants (issue 22 point 8): a literal compared with one of them
// bypasses the constants.
var typedFields = map[string]bool{
	"Subtype": true, "State": true, "PermissionMode": true, "Cause": true,
	"Effort": true, "Memory": true, "Isolation": true, "Status": true,
}

// TestNoLiteralComparisonsOfTypedFields reads the sources of internal/cli
// and internal/tui: no == or != between one of typedFields and a
// non-empty string literal, and no switch on one of them with a literal
// case. They compare against the constants.
func TestNoLiteralComparisonsOfTypedFields(t *testing.T) {
	t.Parallel()
	field := func(e ast.Expr) string {
		if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 { // string(x.Status)
			e = call.Args[0]
		}
		if sel, ok := e.(*ast.SelectorExpr); ok && typedFields[sel.Sel.Name] {
			return sel.Sel.Name
		}
		return ""
	}
	literal := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil && s != ""
	}
	var files int
	fset := token.NewFileSet()
	for _, root := range []string{".", "../tui"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if n.Op != token.EQL && n.Op != token.NEQ {
						return true
					}
					for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
						if name := field(pair[0]); name != "" {
							if s, ok := literal(pair[1]); ok {
								t.Errorf("%s: %s compared with the literal %q; use its constant", fset.Position(n.Pos()), name, s)
							}
						}
					}
				case *ast.SwitchStmt:
					name := field(n.Tag)
					if name == "" {
						return true
					}
					for _, st := range n.Body.List {
						for _, e := range st.(*ast.CaseClause).List {
							if s, ok := literal(e); ok {
								t.Errorf("%s: switch on %s with the literal case %q; use its constant", fset.Position(e.Pos()), name, s)
							}
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 20 {
		t.Fatalf("read only %d source files: the walk missed internal/cli or internal/tui", files)
	}
}
