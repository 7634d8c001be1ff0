package builtin

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

// The structured results of the built-in tools (tool.Output.Result): what
// a program reading the run gets beside the text the model sees, with the
// key names and types Claude Code 2.1.328 prints as a tool call's
// tool_use_result in stream-json (internal/cli's golden test holds them to
// a capture of it). The values are cadre's.

// bashResult is Bash's structured result. cadre runs a command with its
// two streams joined, so Stdout holds both and Stderr is empty, as in
// Claude Code's output.
type bashResultJSON struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Interrupted      bool   `json:"interrupted"`
	IsImage          bool   `json:"isImage"`
	NoOutputExpected bool   `json:"noOutputExpected"`
}

// readResultJSON is Read's structured result for a text file.
type readResultJSON struct {
	Type string       `json:"type"`
	File readFileJSON `json:"file"`
}

// readFileJSON is the part of a text file Read returned.
type readFileJSON struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// patchHunk is one hunk of a unified diff: lines start with " ", "-" or
// "+".
type patchHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// editResultJSON is Edit's structured result.
type editResultJSON struct {
	FilePath        string      `json:"filePath"`
	OldString       string      `json:"oldString"`
	NewString       string      `json:"newString"`
	OriginalFile    string      `json:"originalFile"`
	StructuredPatch []patchHunk `json:"structuredPatch"`
	UserModified    bool        `json:"userModified"`
	ReplaceAll      bool        `json:"replaceAll"`
}

// writeResultJSON is Write's structured result: Type is create or update;
// OriginalFile is null for a new file.
type writeResultJSON struct {
	Type            string      `json:"type"`
	FilePath        string      `json:"filePath"`
	Content         string      `json:"content"`
	StructuredPatch []patchHunk `json:"structuredPatch"`
	OriginalFile    *string     `json:"originalFile"`
	UserModified    bool        `json:"userModified"`
}

// grepResultJSON is Grep's structured result. Filenames are listed in
// files_with_matches mode; Content holds the other modes' text, NumLines
// its lines (content mode), NumMatches the matching lines (count mode).
type grepResultJSON struct {
	Mode       string   `json:"mode"`
	NumFiles   int      `json:"numFiles"`
	Filenames  []string `json:"filenames"`
	TotalFiles *int     `json:"totalFiles,omitempty"`
	Content    *string  `json:"content,omitempty"`
	NumLines   *int     `json:"numLines,omitempty"`
	TotalLines *int     `json:"totalLines,omitempty"`
	NumMatches *int     `json:"numMatches,omitempty"`
}

// globResultJSON is Glob's structured result: the files listed
// (Truncated when more matched), all TotalMatches counted
// (CountIsComplete: the walk was not cut short).
type globResultJSON struct {
	Filenames       []string `json:"filenames"`
	DurationMS      int64    `json:"durationMs"`
	NumFiles        int      `json:"numFiles"`
	Truncated       bool     `json:"truncated"`
	TotalMatches    int      `json:"totalMatches"`
	CountIsComplete bool     `json:"countIsComplete"`
}

// withResult returns out carrying v as its structured result, unless env
// says nobody reads it.
func withResult(env *tool.Env, out tool.Output, v any) tool.Output {
	if env != nil && env.OmitResults {
		return out
	}
	if b, err := json.Marshal(v); err == nil {
		out.Result = b
	}
	return out
}

// relPath is path relative to the agent's working directory when it is
// inside it, as the structured results list files; path otherwise.
func relPath(env *tool.Env, path string) string {
	if env == nil || env.Cwd == "" {
		return path
	}
	rel, err := filepath.Rel(env.Cwd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// splitLines splits s into lines without their terminators; a final line
// terminator ends the last line rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// structuredPatch is the unified diff from old to new as hunks with up to
// three lines of context: one hunk around the lines between the common
// head and the common tail (a coarser but exact diff when the change is
// in several places), none when nothing changed.
func structuredPatch(old, new string) []patchHunk {
	const ctxLines = 3
	a, b := splitLines(old), splitLines(new)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	if head == len(a) && head == len(b) {
		return []patchHunk{}
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	from := max(0, head-ctxLines)
	toA, toB := len(a)-tail, len(b)-tail
	after := min(tail, ctxLines)
	h := patchHunk{OldStart: from + 1, NewStart: from + 1}
	for _, l := range a[from:head] {
		h.Lines = append(h.Lines, " "+l)
	}
	for _, l := range a[head:toA] {
		h.Lines = append(h.Lines, "-"+l)
	}
	for _, l := range b[head:toB] {
		h.Lines = append(h.Lines, "+"+l)
	}
	for _, l := range a[toA : toA+after] {
		h.Lines = append(h.Lines, " "+l)
	}
	h.OldLines = head - from + toA - head + after
	h.NewLines = head - from + toB - head + after
	if h.OldLines == 0 {
		h.OldStart-- // an insertion into an empty range starts before it, as diff writes it
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	return []patchHunk{h}
}
