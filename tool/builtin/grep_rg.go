package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// rgArgs builds the ripgrep command line for q. The ignore sources that
// the Go search does not model (global git excludes, .git/info/exclude,
// .ignore and .rgignore) are turned off, and .gitignore files count even
// outside a git repository, so both search paths agree.
func rgArgs(q *grepQuery) []string {
	args := []string{"--no-config", "--no-messages", "--color=never",
		"--no-require-git", "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-dot"}
	if q.mode == modeFiles {
		args = append(args, "--files-with-matches", "--null")
	} else {
		args = append(args, "--json")
	}
	if q.ignoreCase {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	if q.multiline {
		args = append(args, "--multiline", "--multiline-dotall")
	}
	if q.mode == modeContent {
		args = append(args, "--after-context="+strconv.Itoa(q.after), "--before-context="+strconv.Itoa(q.before))
	}
	for _, g := range q.globs {
		args = append(args, "--glob="+g)
	}
	args = append(args, "--glob=!.git")
	if len(q.typeGlobs) > 0 {
		args = append(args, "--type-clear=cadre")
		for _, g := range q.typeGlobs {
			args = append(args, "--type-add=cadre:"+g)
		}
		args = append(args, "--type=cadre")
	}
	args = append(args, "--regexp="+q.rgPattern, "--")
	if q.rootIsFile {
		args = append(args, q.root)
	} else {
		args = append(args, ".")
	}
	return args
}

// grepRipgrep runs rg for q and parses its output, as it streams, into
// the shared result form.
func grepRipgrep(ctx context.Context, rg string, q *grepQuery) ([]grepFile, error) {
	cmd := exec.CommandContext(ctx, rg, rgArgs(q)...)
	cmd.Dir = q.root
	if q.rootIsFile {
		cmd.Dir = filepath.Dir(q.root)
	}
	toAbs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cmd.Dir, p)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", rg, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", rg, err)
	}
	var out []grepFile
	var parseErr error
	if q.mode == modeFiles {
		out, parseErr = parseRgFiles(stdout, toAbs)
	} else {
		out, parseErr = parseRgJSON(stdout, q, toAbs)
	}
	if parseErr != nil {
		io.Copy(io.Discard, stdout) // let rg finish before Wait
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if parseErr != nil {
		return nil, parseErr
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("run %s: %w", rg, err)
		}
		if ee.ExitCode() == 1 {
			return nil, nil // no match
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("ripgrep: %s", strings.TrimSpace(firstLines(stderr.String(), 5)))
		}
	}
	return out, nil
}

// parseRgFiles reads the NUL-separated paths of rg --files-with-matches.
func parseRgFiles(r io.Reader, toAbs func(string) string) ([]grepFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read ripgrep output: %w", err)
	}
	var out []grepFile
	for _, p := range strings.Split(string(data), "\x00") {
		if p == "" {
			continue
		}
		abs := toAbs(p)
		f := grepFile{Path: abs, Matched: 1}
		if fi, err := os.Stat(abs); err == nil {
			f.ModTime = fi.ModTime()
		}
		out = append(out, f)
	}
	return out, nil
}

// rgText is ripgrep's JSON for a string that is either UTF-8 text or
// base64 bytes.
type rgText struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

func (t rgText) String() string {
	if t.Text != nil {
		return *t.Text
	}
	if t.Bytes != nil {
		if b, err := base64.StdEncoding.DecodeString(*t.Bytes); err == nil {
			return string(b)
		}
	}
	return ""
}

type rgMessage struct {
	Type string `json:"type"`
	Data struct {
		Path       rgText `json:"path"`
		Lines      rgText `json:"lines"`
		LineNumber int    `json:"line_number"`
	} `json:"data"`
}

// parseRgJSON reads rg --json output. A "match" message covers one line,
// or in multiline mode a run of lines; every line of it is a matching
// line, as in the Go search.
func parseRgJSON(r io.Reader, q *grepQuery, toAbs func(string) string) ([]grepFile, error) {
	byPath := map[string]*grepFile{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	for sc.Scan() {
		var m rgMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("parse ripgrep output: %w", err)
		}
		if m.Type != "match" && m.Type != "context" {
			continue
		}
		path := toAbs(m.Data.Path.String())
		f := byPath[path]
		if f == nil {
			f = &grepFile{Path: path}
			if fi, err := os.Stat(path); err == nil {
				f.ModTime = fi.ModTime()
			}
			byPath[path] = f
			order = append(order, path)
		}
		text := strings.TrimSuffix(m.Data.Lines.String(), "\n")
		for i, l := range strings.Split(text, "\n") {
			isMatch := m.Type == "match"
			if isMatch {
				f.Matched++
			}
			if q.mode == modeContent {
				f.addLine(q, m.Data.LineNumber+i, []byte(l), isMatch)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read ripgrep output: %w", err)
	}
	out := make([]grepFile, 0, len(order))
	for _, p := range order {
		out = append(out, *byPath[p])
	}
	return out, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
