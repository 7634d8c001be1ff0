package skills

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any bytes give a skill or a diagnostic, never a panic; a
// parsed skill has a valid name and a description, and every diagnostic
// names the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody\n"))
	f.Add([]byte("---\r\nname: a\r\ndescription: \"x: y\"\r\nallowed-tools: [Read, \"Bash(git:*)\"]\r\n---\r\n"))
	f.Add([]byte("---\ndescription: |\n  multi\n  line\nallowed-tools: Read Grep\n---\n"))
	f.Add([]byte("---\nname: &a x\ndescription: *a\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("\xef\xbb\xbf---\nname: a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, diags := Parse("/x/SKILL.md", "dir", data)
		for _, d := range diags {
			if d.Path != "/x/SKILL.md" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		if s == nil {
			if len(diags) == 0 {
				t.Fatal("no skill and no diagnostic")
			}
			return
		}
		if checkName(s.Name) != "" || strings.TrimSpace(s.Description) == "" || !utf8.ValidString(s.Body) {
			t.Fatalf("invalid skill accepted: %+v", s)
		}
	})
}
