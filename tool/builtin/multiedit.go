package builtin

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed multiedit.md
var multiEditDescription string

type multiEditInput struct {
	FilePath string          `json:"file_path" jsonschema_description:"Absolute path of the file to change."`
	Edits    []multiEditStep `json:"edits" jsonschema_description:"Applied in order; all or none."`
}

type multiEditStep struct {
	OldString  *string `json:"old_string" jsonschema_description:"Exact text to replace, after the earlier edits."`
	NewString  *string `json:"new_string" jsonschema_description:"Replacement, different from old_string."`
	ReplaceAll bool    `json:"replace_all,omitempty" jsonschema_description:"Replace every occurrence."`
}

// maxMultiEdits bounds the edits of one call, so a runaway input cannot
// make the tool loop for long.
const maxMultiEdits = 500

// NewMultiEdit returns the MultiEdit tool: several exact replacements in
// one file, applied in order and written once, all or nothing, with
// Edit's read-before-edit guard.
func NewMultiEdit(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: tool.MultiEdit, Subject: tool.BuiltinSubject(tool.MultiEdit), Description: multiEditDescription},
		func(ctx context.Context, env *tool.Env, in multiEditInput) (tool.Output, error) {
			return runMultiEdit(cfg, env, in), nil
		})
}

func runMultiEdit(cfg Config, env *tool.Env, in multiEditInput) tool.Output {
	path, problem := absFilePath(in.FilePath)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	switch {
	case len(in.Edits) == 0:
		return tool.Errorf("edits is empty: give at least one {old_string, new_string}")
	case len(in.Edits) > maxMultiEdits:
		return tool.Errorf("%d edits in one call is more than the %d allowed; split them", len(in.Edits), maxMultiEdits)
	}
	for i, e := range in.Edits {
		if e.OldString == nil || e.NewString == nil {
			return tool.Errorf("edit %d: old_string and new_string are both required; nothing was changed", i+1)
		}
		if *e.OldString == *e.NewString {
			return tool.Errorf("edit %d: old_string and new_string are identical; nothing was changed", i+1)
		}
	}
	cur, problem := openForChange(env, path, "edit", true)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	if !cur.exists && *in.Edits[0].OldString != "" {
		return tool.Errorf("%s", missingFile(path, "to create it, make the first edit's old_string empty"))
	}
	exists := cur.exists
	updated, first, last, total, problem := applyEdits(string(cur.data), exists, in.Edits)
	if problem != "" {
		return tool.Errorf("%s in %s; nothing was changed", problem, path)
	}
	if err := commitChange(env, path, []byte(updated)); err != nil {
		return tool.Errorf("cannot write %s: %v; nothing was changed", path, err)
	}
	verb := "Edited"
	if !exists {
		verb = "Created"
	}
	head := fmt.Sprintf("%s %s: %s applied (%s).", verb, path, plural(len(in.Edits), "edit", "edits"), plural(total, "replacement", "replacements"))
	return tool.Output{Text: head + "\n" + snippet(updated, first, last, cfg.MaxLineChars)}
}

// applyEdits runs the edits over content in order. It returns the result,
// the byte range of the result that differs from content (for the
// snippet), the number of replacements, and a problem naming the failing
// edit. An empty old_string is allowed only as the first edit of a file
// that does not exist or is empty: it sets the initial content.
func applyEdits(content string, exists bool, edits []multiEditStep) (string, int, int, int, string) {
	orig, total := content, 0
	for i, e := range edits {
		oldS, newS := *e.OldString, *e.NewString
		if oldS == "" {
			switch {
			case i == 0 && content == "":
				content, total = newS, 1
				continue
			case i == 0 && exists:
				return "", 0, 0, 0, "edit 1: old_string is empty but the file already has content"
			default:
				return "", 0, 0, 0, fmt.Sprintf("edit %d of %d: old_string is empty; only the first edit of a new or empty file may have one", i+1, len(edits))
			}
		}
		updated, _, _, n, p := replaceExact(content, oldS, newS, e.ReplaceAll)
		if p != "" {
			return "", 0, 0, 0, fmt.Sprintf("edit %d of %d: %s", i+1, len(edits), p)
		}
		content = updated
		total += n
	}
	from, to := changedRange(orig, content)
	return content, from, to, total, ""
}

// changedRange returns the byte range of b that differs from a: b without
// the prefix and suffix the two share.
func changedRange(a, b string) (int, int) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p, len(b) - s
}
