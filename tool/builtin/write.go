package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed write.md
var writeDescription string

type writeInput struct {
	FilePath string  `json:"file_path" jsonschema_description:"Absolute path."`
	Content  *string `json:"content" jsonschema_description:"The whole new content."`
}

// NewWrite returns the Write tool: create a file or replace one already
// read, atomically.
func NewWrite(cfg Config) tool.Tool {
	return tool.Func(tool.FuncConfig{Name: NameWrite, Subject: tool.BuiltinSubject(NameWrite), Description: writeDescription},
		func(ctx context.Context, env *tool.Env, in writeInput) (tool.Output, error) {
			return runWrite(env, in), nil
		})
}

func runWrite(env *tool.Env, in writeInput) tool.Output {
	path, problem := absFilePath(in.FilePath)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	if in.Content == nil {
		return tool.Errorf("content is required (use an empty string for an empty file)")
	}
	content := *in.Content
	cur, problem := openForChange(env, path, "overwrite", true)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	existed := cur.exists
	if err := commitChange(env, path, []byte(content)); err != nil {
		return tool.Errorf("cannot write %s: %v", path, err)
	}
	lines := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		lines++
	}
	verb := "Created"
	if existed {
		verb = "Updated"
	}
	res := writeResultJSON{Type: "create", FilePath: path, Content: content, StructuredPatch: []patchHunk{}}
	if existed {
		orig := string(cur.data)
		res.Type, res.OriginalFile, res.StructuredPatch = "update", &orig, structuredPatch(orig, content)
	}
	return withResult(env, tool.Output{Text: fmt.Sprintf("%s %s (%s, %d bytes).", verb, path, plural(lines, "line", "lines"), len(content))}, res)
}
