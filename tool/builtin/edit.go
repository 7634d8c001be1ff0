package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed edit.md
var editDescription string

type editInput struct {
	FilePath   string  `json:"file_path" jsonschema_description:"Absolute path."`
	OldString  *string `json:"old_string" jsonschema_description:"Exact text to replace."`
	NewString  *string `json:"new_string" jsonschema_description:"Replacement."`
	ReplaceAll bool    `json:"replace_all,omitempty" jsonschema_description:"Replace every occurrence."`
}

// NewEdit returns the Edit tool: replace an exact, unique string in a file
// that was read first.
func NewEdit(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameEdit, Subject: tool.BuiltinSubject(NameEdit), Description: editDescription},
		func(ctx context.Context, env *tool.Env, in editInput) (tool.Output, error) {
			return runEdit(cfg, env, in), nil
		})
}

func runEdit(cfg Config, env *tool.Env, in editInput) tool.Output {
	path, problem := absFilePath(in.FilePath)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	if in.OldString == nil || in.NewString == nil {
		return tool.Errorf("old_string and new_string are both required")
	}
	oldS, newS := *in.OldString, *in.NewString
	if oldS == newS {
		return tool.Errorf("old_string and new_string are identical, so the edit would change nothing")
	}
	cur, problem := openForChange(env, path, "edit", true)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	if !cur.exists {
		if oldS != "" {
			return tool.Errorf("%s", missingFile(path, "to create a file, use an empty old_string or Write"))
		}
		if err := commitChange(env, path, []byte(newS)); err != nil {
			return tool.Errorf("cannot create %s: %v", path, err)
		}
		return withResult(env, tool.Output{Text: fmt.Sprintf("Created %s.\n%s", path, snippet(newS, 0, len(newS), cfg.MaxLineChars))},
			editResultJSON{FilePath: path, OldString: oldS, NewString: newS, StructuredPatch: structuredPatch("", newS), ReplaceAll: in.ReplaceAll})
	}
	content := string(cur.data)
	var updated string
	var first, firstEnd, count int
	if oldS == "" {
		if content != "" {
			return tool.Errorf("old_string is empty but %s already has content: give the text to replace, or use Write to replace the whole file", path)
		}
		updated, first, firstEnd, count = newS, 0, len(newS), 1
	} else {
		var p string
		updated, first, firstEnd, count, p = replaceExact(content, oldS, newS, in.ReplaceAll)
		if p != "" {
			return tool.Errorf("%s in %s", p, path)
		}
	}
	if err := commitChange(env, path, []byte(updated)); err != nil {
		return tool.Errorf("cannot write %s: %v", path, err)
	}
	head := fmt.Sprintf("Edited %s.", path)
	if count > 1 {
		head = fmt.Sprintf("Edited %s: replaced %d occurrences; the first is shown.", path, count)
	}
	return withResult(env, tool.Output{Text: head + "\n" + snippet(updated, first, firstEnd, cfg.MaxLineChars)},
		editResultJSON{FilePath: path, OldString: oldS, NewString: newS, OriginalFile: content,
			StructuredPatch: structuredPatch(content, updated), ReplaceAll: in.ReplaceAll})
}

// replaceExact replaces old with repl in content: exactly one occurrence,
// or all of them when all is set. When old is not found as given but the
// content uses CRLF line ends, old and repl are retried with CRLF. It
// returns the new content, the byte range of the first replacement in it,
// the number of replacements, and a problem text when nothing was done.
func replaceExact(content, old, repl string, all bool) (string, int, int, int, string) {
	if old == "" {
		return "", 0, 0, 0, "old_string is empty"
	}
	n := strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r") {
		crOld := strings.ReplaceAll(old, "\n", "\r\n")
		if m := strings.Count(content, crOld); m > 0 {
			old, repl, n = crOld, strings.ReplaceAll(repl, "\n", "\r\n"), m
		}
	}
	switch {
	case n == 0:
		return "", 0, 0, 0, "old_string was not found (it must match the file exactly, including whitespace and indentation)"
	case n > 1 && !all:
		return "", 0, 0, 0, fmt.Sprintf("old_string occurs %d times; include more surrounding lines so it matches exactly once, or set replace_all to change every occurrence", n)
	}
	first := strings.Index(content, old)
	if all {
		return strings.ReplaceAll(content, old, repl), first, first + len(repl), n, ""
	}
	return content[:first] + repl + content[first+len(old):], first, first + len(repl), 1, ""
}

// snippet shows the lines of content around bytes [from, to), numbered
// like Read, with a few lines of context.
func snippet(content string, from, to, maxChars int) string {
	const ctxLines, maxShown = 3, 40
	from = max(0, min(from, len(content)))
	to = max(from, min(to, len(content)))
	lines := strings.SplitAfter(content, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "(the file is now empty)"
	}
	startLine := strings.Count(content[:from], "\n")
	endLine := startLine + strings.Count(content[from:to], "\n")
	if to > from && content[to-1] == '\n' && endLine > startLine {
		endLine--
	}
	lo := max(0, startLine-ctxLines)
	hi := min(len(lines)-1, endLine+ctxLines)
	var b strings.Builder
	shown := 0
	for i := lo; i <= hi; i++ {
		if shown == maxShown {
			fmt.Fprintf(&b, "   ...\t(%d more lines)\n", hi-i+1)
			break
		}
		l := strings.TrimSuffix(strings.TrimSuffix(lines[i], "\n"), "\r")
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, truncateLine(l, maxChars))
		shown++
	}
	return b.String()
}
