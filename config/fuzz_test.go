package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadFile: any file content loads or fails with an error; never a
// panic.
func FuzzLoadFile(f *testing.F) {
	for _, s := range []string{`{}`, `{"permissions":{"allow":["Bash"],"deny":["Read(./x)"]}}`, `{"a":`, `[]`, "{}\n{}", `{"env":{"A":1}}`} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		s := &Settings{ModelAliases: map[string]map[string]string{}, Env: map[string]string{}}
		_, _ = s.loadFile(p, dir, dir, true, &Trust{Root: dir}) // as an untrusted workspace file
	})
}
