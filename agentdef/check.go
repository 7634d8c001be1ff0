package agentdef

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// CheckResult is what ParsePaths found.
type CheckResult struct {
	// Files is how many files were read.
	Files int
	// Definitions are the definitions that loaded, in path order.
	Definitions []*Definition
	// Diagnostics are every problem, sorted by file and line.
	Diagnostics []Diagnostic
}

// ParsePaths validates agent files for `cadre agents check`: each path is
// a file (Markdown, or JSON in the --agents form when it ends in .json) or
// a directory scanned like an agents directory. Unlike Load it also says
// when a Markdown file has no frontmatter, and it warns about names
// defined more than once among the paths. The error is non-nil only for a
// path that cannot be read at all or a cancelled context.
func ParsePaths(ctx context.Context, paths []string, source Source) (*CheckResult, error) {
	res := &CheckResult{}
	seen := map[string]string{}
	add := func(def *Definition) {
		if prev, dup := seen[def.Name]; dup {
			res.Diagnostics = append(res.Diagnostics, Diagnostic{File: def.Path, Line: 1, Severity: SeverityWarning,
				Message: fmt.Sprintf("agent %q is also defined in %s; only one of them can be active", def.Name, prev)})
		} else {
			seen[def.Name] = def.Path
		}
		res.Definitions = append(res.Definitions, def)
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("check agents: %w", err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("check agents: %w", err)
		}
		var files []string
		if st.IsDir() {
			home, _ := os.UserHomeDir()
			found, ds := scanDir(p, home)
			res.Diagnostics = append(res.Diagnostics, ds...)
			for _, f := range found {
				files = append(files, f.path)
			}
		} else {
			files = []string{p}
		}
		for _, f := range files {
			data, tooBig, err := readChecked(f)
			if err != nil {
				res.Diagnostics = append(res.Diagnostics, Diagnostic{File: f, Severity: SeverityError, Message: fmt.Sprintf("cannot read: %v", err)})
				continue
			}
			res.Files++
			if tooBig {
				// Not read to the end, and not parsed: loading skips it too.
				res.Diagnostics = append(res.Diagnostics, Diagnostic{File: f, Severity: SeverityWarning, Message: "file is over the 1 MiB limit; agent loading skips it"})
				continue
			}
			if strings.HasSuffix(f, ".json") {
				defs, ds, err := ParseJSON(f, data, source)
				if err != nil {
					res.Diagnostics = append(res.Diagnostics, Diagnostic{File: f, Line: 1, Severity: SeverityError, Message: err.Error()})
					continue
				}
				res.Diagnostics = append(res.Diagnostics, ds...)
				for _, d := range defs {
					add(d)
				}
				continue
			}
			def, ds := ParseFile(f, data, source)
			res.Diagnostics = append(res.Diagnostics, ds...)
			if def == nil && len(ds) == 0 {
				res.Diagnostics = append(res.Diagnostics, Diagnostic{File: f, Line: 1, Severity: SeverityWarning,
					Message: "no frontmatter (a \"---\" block at the top of the file), so this is not an agent"})
			}
			if def != nil {
				add(def)
			}
		}
	}
	sortDiagnostics(res.Diagnostics)
	return res, nil
}

// readChecked reads a file for Check: only a regular file (a FIFO or a
// device would block or never end), and at most MaxFileSize bytes; tooBig
// reports a larger one, which is not read further.
func readChecked(path string) (data []byte, tooBig bool, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > MaxFileSize {
		return nil, true, nil
	}
	return data, false, nil
}
