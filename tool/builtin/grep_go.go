package builtin

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// grepGo searches with Go alone: one goroutine walks the tree applying the
// ignore rules (see ignore.go), a bounded pool of workers reads and
// searches the files. Its results equal grepRipgrep's for the same query.
func grepGo(ctx context.Context, q *grepQuery, workers int) ([]grepFile, error) {
	if q.rootIsFile {
		var buf []byte
		f, ok, err := searchFile(q, q.root, &buf)
		if err != nil || !ok {
			return nil, err
		}
		return []grepFile{f}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan string, 256)
	var (
		mu      sync.Mutex
		results []grepFile
		wg      sync.WaitGroup
	)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64<<10) // reused across files
			for path := range jobs {
				if ctx.Err() != nil {
					continue
				}
				f, ok, err := searchFile(q, path, &buf)
				if err != nil || !ok {
					continue // unreadable files are skipped, as ripgrep does with --no-messages
				}
				mu.Lock()
				results = append(results, f)
				mu.Unlock()
			}
		}()
	}
	filter := newGrepFilter(q.globs, q.typeGlobs)
	walkErr := walkGrep(ctx, q.root, "", parentIgnores(q.root), &filter, func(p string) bool {
		select {
		case jobs <- p:
			return true
		case <-ctx.Done():
			return false
		}
	})
	close(jobs)
	wg.Wait()
	if walkErr != nil {
		return nil, walkErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// walkGrep visits dir (rel is its slash path below the search root),
// reading its .gitignore first, and hands every file that passes the
// filter to emit. Symlinks are not followed, as ripgrep does by default.
func walkGrep(ctx context.Context, dir, rel string, chain *ignoreDir, f *grepFilter, emit func(string) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if rel == "" {
			return err
		}
		return nil
	}
	hasGitignore, hasGit := false, false
	for _, e := range entries {
		switch e.Name() {
		case ".gitignore":
			hasGitignore = hasGitignore || e.Type().IsRegular()
		case ".git":
			hasGit = true
		}
	}
	chain = loadIgnoreDir(chain, dir, hasGitignore, hasGit)
	for _, e := range entries {
		name := e.Name()
		t := e.Type()
		isDir := t.IsDir()
		if !isDir && !t.IsRegular() {
			continue // symlinks, devices, sockets, pipes
		}
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		abs := filepath.Join(dir, name)
		if f.skip(chain, childRel, abs, name, isDir) {
			continue
		}
		if isDir {
			if err := walkGrep(ctx, abs, childRel, chain, f, emit); err != nil {
				return err
			}
			continue
		}
		if !emit(abs) {
			return ctx.Err()
		}
	}
	return nil
}

// searchFile searches one file, reading it into *buf (grown as needed and
// reused by the caller). Binary files (with a NUL byte) are skipped, as
// ripgrep skips them when walking.
func searchFile(q *grepQuery, path string, buf *[]byte) (grepFile, bool, error) {
	data, err := readInto(path, buf)
	if err != nil {
		return grepFile{}, false, err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return grepFile{}, false, nil
	}
	matched := matchLines(q, data)
	if len(matched) == 0 {
		return grepFile{}, false, nil
	}
	f := grepFile{Path: path, Matched: len(matched)}
	if fi, err := os.Stat(path); err == nil {
		f.ModTime = fi.ModTime()
	}
	if q.mode == modeContent {
		contentLines(q, &f, data, matched)
	}
	return f, true, nil
}

// readInto reads the whole file at path into *buf.
func readInto(path string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return b, nil
		}
		if err != nil {
			*buf = b
			return nil, err
		}
	}
}

// prefilterSafe reports whether a whole-buffer search may rule a file out
// before the line-by-line search: not when the pattern uses anchors or
// flags whose meaning differs between a buffer and a line.
func prefilterSafe(pattern string) bool {
	return !strings.Contains(pattern, `\A`) && !strings.Contains(pattern, `\z`) && !strings.Contains(pattern, "(?")
}

// matchLines returns the sorted 1-based numbers of the lines that hold a
// match. In multiline mode a match marks every line it touches.
func matchLines(q *grepQuery, data []byte) []int {
	if !q.multiline {
		if prefilterSafe(q.pattern) && !q.bufRe.Match(data) {
			return nil
		}
		var out []int
		n := 0
		for len(data) > 0 {
			n++
			line := data
			i := bytes.IndexByte(data, '\n')
			if i >= 0 {
				line, data = data[:i], data[i+1:]
			} else {
				data = nil
			}
			if q.lineRe.Match(line) {
				out = append(out, n)
				if q.mode == modeFiles {
					return out
				}
			}
		}
		return out
	}
	locs := q.bufRe.FindAllIndex(data, -1)
	if len(locs) == 0 {
		return nil
	}
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(off int) int { // 1-based
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
	seen := map[int]bool{}
	var out []int
	for _, loc := range locs {
		s, e := loc[0], loc[1]
		if s == len(data) && (len(data) == 0 || data[len(data)-1] == '\n') {
			continue // an empty match after the last line end
		}
		last := s
		if e > s {
			last = e - 1
		}
		for l := lineOf(s); l <= lineOf(last); l++ {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
		if q.mode == modeFiles {
			break
		}
	}
	sort.Ints(out)
	return out
}

// contentLines adds the matching lines and their context lines to f, in
// order.
func contentLines(q *grepQuery, f *grepFile, data []byte, matched []int) {
	want := map[int]bool{}
	isMatch := make(map[int]bool, len(matched))
	for _, m := range matched {
		isMatch[m] = true
		for l := m - q.before; l <= m+q.after; l++ {
			if l >= 1 {
				want[l] = true
			}
		}
	}
	n := 0
	for len(data) > 0 {
		n++
		line := data
		i := bytes.IndexByte(data, '\n')
		if i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if want[n] {
			f.addLine(q, n, line, isMatch[n])
		}
	}
}
