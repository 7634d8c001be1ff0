// Package sandboxtest helps tests of the Bash sandbox.
package sandboxtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OutsideDir returns a new directory (removed when the test ends) that is
// not under /tmp, which the sandbox replaces with a private one for each
// command: the test's working directory if it is not under /tmp, else the
// user's cache directory, else /var/tmp. With the clone and an empty HOME
// both under /tmp (as .ci/run runs the suite), the first two are, and
// /var/tmp serves. It skips the test when none is usable.
func OutsideDir(t testing.TB, prefix string) string {
	t.Helper()
	var candidates []string
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, wd)
	}
	if cache, err := os.UserCacheDir(); err == nil {
		candidates = append(candidates, cache)
	}
	candidates = append(candidates, "/var/tmp")
	var tried []string
	for _, base := range candidates {
		if real, err := filepath.EvalSymlinks(base); err == nil {
			base = real
		}
		if base == "/tmp" || strings.HasPrefix(base, "/tmp/") {
			tried = append(tried, base+" is under /tmp")
			continue
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			tried = append(tried, err.Error())
			continue
		}
		dir, err := os.MkdirTemp(base, prefix)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Skipf("no writable directory outside /tmp to test with: %s", strings.Join(tried, "; "))
	return ""
}
