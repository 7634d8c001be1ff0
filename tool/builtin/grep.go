package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed grep.md
var grepDescription string

type grepInput struct {
	Pattern    string `json:"pattern" jsonschema_description:"RE2 regular expression."`
	Path       string `json:"path,omitempty" jsonschema_description:"File or directory."`
	Glob       string `json:"glob,omitempty" jsonschema_description:"Files to search (*.go); ! excludes."`
	Type       string `json:"type,omitempty" jsonschema_description:"File type (go, py…); faster than glob."`
	OutputMode string `json:"output_mode,omitempty" jsonschema:"enum=content,enum=files_with_matches,enum=count" jsonschema_description:"Default files_with_matches."`
	After      *int   `json:"-A,omitempty" jsonschema_description:"Lines after a match."`
	Before     *int   `json:"-B,omitempty" jsonschema_description:"Lines before a match."`
	Context    *int   `json:"-C,omitempty" jsonschema_description:"Lines around a match."`
	LineNums   *bool  `json:"-n,omitempty" jsonschema_description:"Line numbers (default true)."`
	IgnoreCase bool   `json:"-i,omitempty" jsonschema_description:"Ignore case."`
	Multiline  bool   `json:"multiline,omitempty" jsonschema_description:"Across lines; . matches newlines."`
	HeadLimit  *int   `json:"head_limit,omitempty" jsonschema_description:"First N results only."`
}

const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

// grepQuery is a validated Grep call, shared by both search paths.
type grepQuery struct {
	pattern    string // as the model wrote it
	root       string // absolute file or directory
	rootIsFile bool
	mode       string
	before     int
	after      int
	ignoreCase bool
	multiline  bool
	globs      []string
	typeGlobs  []string
	lineRe     *regexp.Regexp // matches one line (no line terminator)
	bufRe      *regexp.Regexp // matches a whole file; multi-line aware
	// rgPattern is bufRe's expression as Go's parser normalises it, for
	// ripgrep: classes such as \w and \d are spelled out as the ASCII
	// ranges RE2 gives them (ripgrep's are Unicode), flags are explicit.
	rgPattern string
	// maxLines bounds the content lines kept per file: more could never
	// fit in the answer. maxChars cuts long lines as they are collected.
	maxLines int
	maxChars int
}

// grepLine is one line of content output.
type grepLine struct {
	Num   int
	Text  string
	Match bool
}

// grepFile is what a search found in one file. Lines is filled in content
// mode, up to grepQuery.maxLines; Omitted counts the content lines beyond
// that. Matched counts matching lines.
type grepFile struct {
	Path    string
	ModTime time.Time
	Matched int
	Lines   []grepLine
	Omitted int
}

// addLine keeps a content line in display form, or counts it as omitted
// once the file has maxLines.
func (f *grepFile) addLine(q *grepQuery, num int, text []byte, match bool) {
	if len(f.Lines) >= q.maxLines {
		f.Omitted++
		return
	}
	f.Lines = append(f.Lines, grepLine{Num: num, Text: displayText(text, q.maxChars), Match: match})
}

// displayText is a line as Grep shows it: no carriage return, valid
// UTF-8, cut to maxChars characters.
func displayText(b []byte, maxChars int) string {
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) > 4*maxChars+8 {
		// Count what is cut without copying all of it.
		n := utf8.RuneCount(b)
		head := []rune(strings.ToValidUTF8(string(b[:4*maxChars]), "\uFFFD"))
		if len(head) > maxChars {
			head = head[:maxChars]
		}
		return fmt.Sprintf("%s… [line truncated: %d more characters]", string(head), n-len(head))
	}
	return truncateLine(strings.ToValidUTF8(string(b), "\uFFFD"), maxChars)
}

// NewGrep returns the Grep tool: a regex search over files that honours
// .gitignore, run by ripgrep when available and by Go otherwise.
func NewGrep(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameGrep, Subject: tool.BuiltinSubject(NameGrep), Description: grepDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in grepInput) (tool.Output, error) {
			return runGrep(ctx, cfg, env, in), nil
		})
}

func runGrep(ctx context.Context, cfg Config, env *tool.Env, in grepInput) tool.Output {
	q, problem := newGrepQuery(env, in)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	q.setLimits(cfg)
	files, err := search(ctx, cfg, q)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("Grep was cancelled: %v", ctx.Err())
		}
		return tool.Errorf("Grep failed: %v", err)
	}
	hidden := 0
	if env.Hidden != nil {
		kept := files[:0]
		for _, f := range files {
			if env.IsHidden(f.Path) {
				hidden++
				continue
			}
			kept = append(kept, f)
		}
		files = kept
	}
	head := 0
	if in.HeadLimit != nil {
		head = *in.HeadLimit
	}
	lineNums := in.LineNums == nil || *in.LineNums
	text := formatGrep(q, files, head, lineNums, cfg)
	return withResult(env, tool.Output{Text: text + hiddenNote(hidden)}, grepResult(env, q.mode, files, text))
}

// grepResult is Grep's structured result (toolresult.go): the files in
// files_with_matches mode, the text the model sees in the other modes.
func grepResult(env *tool.Env, mode string, files []grepFile, text string) grepResultJSON {
	res := grepResultJSON{Mode: mode, NumFiles: len(files), Filenames: []string{}}
	switch mode {
	case modeFiles:
		for _, f := range files {
			res.Filenames = append(res.Filenames, relPath(env, f.Path))
		}
		n := len(files)
		res.TotalFiles = &n
	case modeContent:
		n, total := 0, 0
		if len(files) > 0 {
			n = strings.Count(text, "\n") + 1
		}
		for _, f := range files {
			total += len(f.Lines) + f.Omitted
		}
		res.Content, res.NumLines, res.TotalLines = &text, &n, &total
	case modeCount:
		n := 0
		for _, f := range files {
			n += f.Matched
		}
		res.Content, res.NumMatches = &text, &n
	}
	return res
}

// search runs q with ripgrep when it is available, else with Go. A
// single named file is always searched by Go: there is nothing to walk,
// and ripgrep would treat a binary file named explicitly differently from
// one found by walking.
func search(ctx context.Context, cfg Config, q *grepQuery) ([]grepFile, error) {
	if rg := cfg.ripgrep(); rg != "" && !q.rootIsFile {
		return grepRipgrep(ctx, rg, q)
	}
	return grepGo(ctx, q, cfg.GrepWorkers)
}

func newGrepQuery(env *tool.Env, in grepInput) (*grepQuery, string) {
	if in.Pattern == "" {
		return nil, "pattern is required"
	}
	if strings.ContainsRune(in.Pattern, 0) {
		return nil, "pattern contains a NUL byte"
	}
	q := &grepQuery{pattern: in.Pattern, ignoreCase: in.IgnoreCase, multiline: in.Multiline}
	switch in.OutputMode {
	case "", modeFiles:
		q.mode = modeFiles
	case modeContent, modeCount:
		q.mode = in.OutputMode
	default:
		return nil, fmt.Sprintf("output_mode must be content, files_with_matches or count, got %q", in.OutputMode)
	}
	for _, c := range []struct {
		name string
		v    *int
	}{{"-A", in.After}, {"-B", in.Before}, {"-C", in.Context}, {"head_limit", in.HeadLimit}} {
		if c.v != nil && *c.v < 0 {
			return nil, fmt.Sprintf("%s must not be negative, got %d", c.name, *c.v)
		}
	}
	if in.Context != nil {
		q.before, q.after = *in.Context, *in.Context
	}
	if in.Before != nil {
		q.before = *in.Before
	}
	if in.After != nil {
		q.after = *in.After
	}
	if q.mode != modeContent {
		q.before, q.after = 0, 0
	}
	const maxContext = 1000
	if q.before > maxContext || q.after > maxContext {
		return nil, fmt.Sprintf("context lines are limited to %d", maxContext)
	}
	flags := ""
	if in.IgnoreCase {
		flags = "i"
	}
	var err error
	if q.lineRe, err = regexp.Compile(withFlags(flags, in.Pattern)); err != nil {
		return nil, fmt.Sprintf("invalid regular expression %q: %v", in.Pattern, err)
	}
	bufFlags := flags + "m"
	if in.Multiline {
		bufFlags += "s"
	}
	if q.bufRe, err = regexp.Compile(withFlags(bufFlags, in.Pattern)); err != nil {
		return nil, fmt.Sprintf("invalid regular expression %q: %v", in.Pattern, err)
	}
	parsed, err := syntax.Parse(withFlags(bufFlags, in.Pattern), syntax.Perl)
	if err != nil {
		return nil, fmt.Sprintf("invalid regular expression %q: %v", in.Pattern, err)
	}
	if !in.Multiline && matchesNewline(parsed) {
		return nil, fmt.Sprintf("pattern %q must match a line break, which a line-by-line search never sees: set multiline to true to search across lines", in.Pattern)
	}
	q.rgPattern = asciiWordBoundaries(parsed.String())
	for _, g := range strings.Fields(in.Glob) {
		if !doublestar.ValidatePattern(strings.TrimPrefix(g, "!")) {
			return nil, fmt.Sprintf("invalid glob %q", g)
		}
		q.globs = append(q.globs, g)
	}
	if in.Type != "" {
		globs, ok := grepTypes()[strings.ToLower(in.Type)]
		if !ok {
			return nil, fmt.Sprintf("unknown file type %q; known types: %s (or use glob)", in.Type, typeNames())
		}
		q.typeGlobs = globs
	}
	root, problem := searchRoot(env, in.Path)
	if problem != "" {
		return nil, problem
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Sprintf("cannot search %s: %v", root, err)
	}
	q.root = root
	q.rootIsFile = !fi.IsDir()
	q.setLimits(Config{}.withDefaults())
	return q, ""
}

// matchesNewline reports whether the expression contains a literal line
// break that any match must include.
func matchesNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if matchesNewline(sub) {
			return true
		}
	}
	return false
}

// asciiWordBoundaries rewrites \b and \B in a Go-printed expression to
// ripgrep's ASCII forms, so both engines agree on what a word is.
func asciiWordBoundaries(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c != '\\' || i+1 == len(expr) {
			b.WriteByte(c)
			continue
		}
		next := expr[i+1]
		i++
		if next == 'b' || next == 'B' {
			b.WriteString(`(?-u:\` + string(next) + `)`)
			continue
		}
		b.WriteByte(c)
		b.WriteByte(next)
	}
	return b.String()
}

// setLimits derives the collection bounds from the output limits: a
// shown line takes at least four characters ("p:1:"), so no file can show
// more than GrepOutputLimit/4 lines.
func (q *grepQuery) setLimits(cfg Config) {
	q.maxLines = cfg.GrepOutputLimit/4 + 1
	q.maxChars = cfg.MaxLineChars
}

func withFlags(flags, pattern string) string {
	if flags == "" {
		return pattern
	}
	return "(?" + flags + ")" + pattern
}

// formatGrep renders the results for the model. Files are listed newest
// first in files_with_matches mode and by path otherwise.
func formatGrep(q *grepQuery, files []grepFile, head int, lineNums bool, cfg Config) string {
	if len(files) == 0 {
		if q.mode == modeFiles {
			return "No files found"
		}
		return "No matches found"
	}
	hits := make([]grepFile, len(files))
	copy(hits, files)
	if q.mode == modeFiles {
		fh := make([]fileHit, len(hits))
		byPath := make(map[string]grepFile, len(hits))
		for i, f := range hits {
			fh[i] = fileHit{path: f.Path, mtime: f.ModTime}
			byPath[f.Path] = f
		}
		sortNewestFirst(fh)
		for i, h := range fh {
			hits[i] = byPath[h.path]
		}
	} else {
		sort.Slice(hits, func(i, j int) bool { return hits[i].Path < hits[j].Path })
	}
	w := newCappedLines(cfg.GrepOutputLimit, head)
	switch q.mode {
	case modeFiles:
		w.one, w.many = "more file", "more files"
		w.header = fmt.Sprintf("Found %s", plural(len(hits), "file", "files"))
		for _, f := range hits {
			w.add(f.Path)
		}
	case modeCount:
		w.one, w.many = "more file", "more files"
		total := 0
		for _, f := range hits {
			total += f.Matched
			w.add(f.Path + ":" + strconv.Itoa(f.Matched))
		}
		w.footer = fmt.Sprintf("Found %s in %s.", plural(total, "matching line", "matching lines"), plural(len(hits), "file", "files"))
	case modeContent:
		ctx := q.before > 0 || q.after > 0
		for fi, f := range hits {
			prev := -1
			for _, l := range f.Lines {
				if ctx && (prev >= 0 && l.Num != prev+1 || prev < 0 && fi > 0) {
					w.add("--")
				}
				prev = l.Num
				sep := "-"
				if l.Match {
					sep = ":"
				}
				if lineNums {
					w.add(f.Path + sep + strconv.Itoa(l.Num) + sep + l.Text)
				} else {
					w.add(f.Path + sep + l.Text)
				}
			}
			w.omit(f.Omitted)
		}
	}
	return w.String()
}

// cappedLines collects output lines up to a line count (head_limit) and a
// character budget, and says what it left out.
type cappedLines struct {
	b        strings.Builder
	header   string
	footer   string
	maxChars int
	maxLines int
	one      string // how to name what was left out: "more line"
	many     string
	lines    int
	dropped  int
	full     bool
}

func newCappedLines(maxChars, maxLines int) *cappedLines {
	return &cappedLines{maxChars: maxChars, maxLines: maxLines, one: "more line", many: "more lines"}
}

func (w *cappedLines) add(line string) {
	if w.full || w.maxLines > 0 && w.lines >= w.maxLines {
		w.dropped++
		return
	}
	if w.b.Len()+len(line)+1 > w.maxChars && w.lines > 0 {
		w.full = true
		w.dropped++
		return
	}
	w.b.WriteString(line)
	w.b.WriteByte('\n')
	w.lines++
}

// omit counts n lines that were never collected, because the size limit
// would have cut them anyway.
func (w *cappedLines) omit(n int) {
	if n > 0 {
		w.dropped += n
		if w.maxLines == 0 || w.lines < w.maxLines {
			w.full = true
		}
	}
}

func (w *cappedLines) String() string {
	var out strings.Builder
	if w.header != "" {
		out.WriteString(w.header + "\n")
	}
	out.WriteString(w.b.String())
	if w.dropped > 0 {
		why := "head_limit"
		if w.full {
			why = "the output size limit"
		}
		fmt.Fprintf(&out, "(%s not shown because of %s; narrow the search with path, glob or type, or raise head_limit.)\n", plural(w.dropped, w.one, w.many), why)
	}
	if w.footer != "" {
		out.WriteString("\n" + w.footer + "\n")
	}
	return strings.TrimSuffix(out.String(), "\n")
}
