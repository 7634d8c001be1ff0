package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed glob.md
var globDescription string

type globInput struct {
	Pattern string `json:"pattern" jsonschema_description:"Glob pattern."`
	Path    string `json:"path,omitempty" jsonschema_description:"Directory."`
}

// NewGlob returns the Glob tool: files matching a doublestar pattern,
// newest first.
func NewGlob(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameGlob, Subject: tool.BuiltinSubject(NameGlob), Description: globDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in globInput) (tool.Output, error) {
			return runGlob(ctx, cfg, env, in), nil
		})
}

type fileHit struct {
	path  string
	mtime time.Time
}

// sortNewestFirst orders hits by modification time, newest first, and by
// path where times are equal, so results are deterministic.
func sortNewestFirst(h []fileHit) {
	sort.Slice(h, func(i, j int) bool {
		if !h[i].mtime.Equal(h[j].mtime) {
			return h[i].mtime.After(h[j].mtime)
		}
		return h[i].path < h[j].path
	})
}

// Glob lists files only (symlinks included, not followed), skips .git
// directories, and deliberately does not apply .gitignore: it answers
// "which files exist", as Claude Code's Glob does; Grep is the tool that
// honours ignore files.
func runGlob(ctx context.Context, cfg Config, env *tool.Env, in globInput) tool.Output {
	began := time.Now()
	pattern := in.Pattern
	if strings.TrimSpace(pattern) == "" {
		return tool.Errorf("pattern is required")
	}
	if strings.ContainsRune(pattern, 0) {
		return tool.Errorf("pattern %q contains a NUL byte", pattern)
	}
	var root string
	if filepath.IsAbs(pattern) {
		base, rest := doublestar.SplitPattern(filepath.ToSlash(pattern))
		root, pattern = filepath.Clean(base), rest
	} else {
		var problem string
		root, problem = searchRoot(env, in.Path)
		if problem != "" {
			return tool.Errorf("%s", problem)
		}
	}
	if !doublestar.ValidatePattern(pattern) {
		return tool.Errorf("invalid glob pattern %q", in.Pattern)
	}
	base, rest := doublestar.SplitPattern(pattern)
	walkRoot := filepath.Join(root, filepath.FromSlash(base))
	fi, err := os.Stat(root)
	if err != nil {
		return tool.Errorf("cannot search %s: %v", root, err)
	}
	if !fi.IsDir() {
		return tool.Errorf("%s is not a directory", root)
	}
	var hits []fileHit
	count, hidden := 0, 0
	err = filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if count++; count%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == walkRoot {
				return err
			}
			return nil // unreadable entries are skipped, as find would
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != walkRoot {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(walkRoot, p)
		if err != nil {
			return nil
		}
		if ok, _ := doublestar.Match(rest, filepath.ToSlash(rel)); !ok {
			return nil
		}
		if env.IsHidden(p) {
			hidden++
			return nil
		}
		var mt time.Time
		if info, err := d.Info(); err == nil {
			mt = info.ModTime()
		}
		hits = append(hits, fileHit{path: p, mtime: mt})
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && base != "." {
			return tool.Output{Text: "No files found"}
		}
		if ctx.Err() != nil {
			return tool.Errorf("Glob was cancelled: %v", ctx.Err())
		}
		return tool.Errorf("cannot search %s: %v", walkRoot, err)
	}
	if len(hits) == 0 {
		return withResult(env, tool.Output{Text: "No files found" + hiddenNote(hidden)},
			globResultJSON{Filenames: []string{}, DurationMS: time.Since(began).Milliseconds(), CountIsComplete: true})
	}
	sortNewestFirst(hits)
	var b strings.Builder
	shown := min(len(hits), cfg.GlobLimit)
	for _, h := range hits[:shown] {
		b.WriteString(h.path)
		b.WriteByte('\n')
	}
	if shown < len(hits) {
		fmt.Fprintf(&b, "(Results are truncated: showing %d of %d files, newest first. Use a narrower path or pattern.)\n", shown, len(hits))
	}
	res := globResultJSON{Filenames: make([]string, 0, shown), DurationMS: time.Since(began).Milliseconds(), NumFiles: shown,
		Truncated: shown < len(hits), TotalMatches: len(hits), CountIsComplete: true}
	for _, h := range hits[:shown] {
		res.Filenames = append(res.Filenames, relPath(env, h.path))
	}
	return withResult(env, tool.Output{Text: strings.TrimSuffix(b.String(), "\n") + hiddenNote(hidden)}, res)
}

// hiddenNote tells the model that permission rules withheld n files.
func hiddenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n(%d matching files are not shown: permission rules deny reading them.)", n)
}
