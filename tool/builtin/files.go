package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/tool"
)

// absFilePath validates a model-supplied file_path: it must be present and
// absolute. The cleaned path is returned; a non-empty problem text means
// the input was refused.
func absFilePath(p string) (string, string) {
	if p == "" {
		return "", "file_path is required"
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Sprintf("file_path %q contains a NUL byte", p)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Sprintf("file_path must be an absolute path, got %q", p)
	}
	return filepath.Clean(p), ""
}

// searchRoot resolves the optional path of Glob and Grep against the
// agent's working directory.
func searchRoot(env *tool.Env, p string) (string, string) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Sprintf("path %q contains a NUL byte", p)
	}
	if p == "" {
		if env == nil || env.Cwd == "" {
			return "", "no path given and the agent has no working directory"
		}
		return filepath.Clean(env.Cwd), ""
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), ""
	}
	if env == nil || env.Cwd == "" {
		return "", fmt.Sprintf("relative path %q needs a working directory, and the agent has none", p)
	}
	return filepath.Join(env.Cwd, p), ""
}

// stampOf makes the FileStamp for a file just stat'ed.
func stampOf(fi fs.FileInfo, partial bool) tool.FileStamp {
	return tool.FileStamp{ModTime: fi.ModTime(), Size: fi.Size(), Partial: partial}
}

func fileState(env *tool.Env) *tool.FileState {
	if env == nil {
		return nil
	}
	return env.Files
}

// checkFresh verifies that path was read by the agent and has not changed
// on disk since. It returns a problem text for the model, or "".
func checkFresh(env *tool.Env, path string, fi fs.FileInfo, verb string) string {
	fsState := fileState(env)
	var st tool.FileStamp
	ok := false
	if fsState != nil {
		st, ok = fsState.Lookup(path)
	}
	if !ok {
		return fmt.Sprintf("%s has not been read yet: Read it first, then %s it", path, verb)
	}
	if !st.ModTime.Equal(fi.ModTime()) || st.Size != fi.Size() {
		return fmt.Sprintf("%s was modified since it was last read (by the user, a linter or another process): Read it again before you %s it", path, verb)
	}
	return ""
}

// atomicWrite replaces path with data: a temporary file in the same
// directory is written, synced and renamed over the target, so readers see
// either the old or the new content, never a mix. An existing file keeps
// its permission bits; a new one gets 0644. Missing parent directories are
// created. A symlink is followed and its target replaced.
func atomicWrite(path string, data []byte) (fs.FileInfo, error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".cadre-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return nil, fmt.Errorf("rename %s to %s: %w", tmp, target, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: make the rename durable
		d.Close()
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat %s after write: %w", path, err)
	}
	return fi, nil
}

// truncateLine cuts s to max characters, appending a marker that says how
// much was dropped.
func truncateLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	i := 0
	for k := 0; k < max; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return fmt.Sprintf("%s… [line truncated: %d more characters]", s[:i], n-max)
}

// capText keeps at most max characters of s: the head and the tail, with a
// note in the middle saying how much was cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head, tail := max/2, max-max/2
	cut := len(r) - head - tail
	return string(r[:head]) + fmt.Sprintf("\n\n... [%d characters cut from the middle of the output] ...\n\n", cut) + string(r[len(r)-tail:])
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
