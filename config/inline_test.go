package config

import (
	"strings"
	"testing"
)

// --settings accepts inline JSON as well as a path, in the same place of
// the precedence order, and names it "--settings" in diagnostics.
func TestInlineSettingsJSON(t *testing.T) {
	tr := newTree(t, map[string]string{
		"CWD/.cadre/settings.json": `{"model":"project-model"}`,
	})
	o := tr.opts()
	o.SettingsJSON = `{"model":"inline-model","permissions":{"deny":["Bash(rm:*)"]},"modle":"x"}`
	s, diags, err := LoadSettings(o)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model.Value != "inline-model" || s.Model.Source != "--settings" {
		t.Fatalf("model %+v", s.Model)
	}
	if len(s.Permissions.Rules) != 1 || s.Permissions.Rules[0].Source != "--settings" {
		t.Fatalf("rules %+v", s.Permissions.Rules)
	}
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "--settings:1:") || !strings.Contains(diags[0].String(), `did you mean "model"`) {
		t.Fatalf("diags %v", diags)
	}

	o.SettingsJSON = "{\n  \"model\": ,\n}"
	if _, _, err := LoadSettings(o); err == nil || !strings.Contains(err.Error(), "--settings:2") {
		t.Fatalf("malformed inline settings: %v", err)
	}
}
