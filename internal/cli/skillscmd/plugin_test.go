package skillscmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestListPluginSkills lists the claude-ecosystem fixture plugin's skill
// with --plugin-dir, as plugin:skill from the plugin source.
func TestListPluginSkills(t *testing.T) {
	fixture, _ := filepath.Abs(filepath.Join("..", "..", "plugin", "testdata", "claude-ecosystem"))
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs([]string{"--cwd", t.TempDir(), "--home", t.TempDir(), "--plugin-dir", fixture, "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var doc struct {
		Skills []struct{ Name, Source string } `json:"skills"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(doc.Skills) != 1 || doc.Skills[0].Name != "claude-ecosystem:audit-notes" || doc.Skills[0].Source != "plugin" {
		t.Errorf("skills %+v", doc.Skills)
	}
}
