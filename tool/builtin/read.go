package builtin

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed read.md
var readDescription string

type readInput struct {
	FilePath string `json:"file_path" jsonschema_description:"Absolute path."`
	Offset   *int   `json:"offset,omitempty" jsonschema_description:"1-based first line."`
	Limit    *int   `json:"limit,omitempty" jsonschema_description:"Lines (default 2000)."`
}

// NewRead returns the Read tool: a file's lines numbered like cat -n.
func NewRead(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameRead, Subject: tool.BuiltinSubject(NameRead), Description: readDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in readInput) (tool.Output, error) {
			return runRead(cfg, env, in), nil
		})
}

func runRead(cfg Config, env *tool.Env, in readInput) tool.Output {
	path, problem := absFilePath(in.FilePath)
	if problem != "" {
		return tool.Errorf("%s", problem)
	}
	start, limit := 1, cfg.ReadDefaultLimit
	if in.Offset != nil {
		if *in.Offset < 0 {
			return tool.Errorf("offset must be a line number of 1 or more, got %d", *in.Offset)
		}
		if *in.Offset > 0 {
			start = *in.Offset
		}
	}
	if in.Limit != nil {
		if *in.Limit <= 0 {
			return tool.Errorf("limit must be 1 or more, got %d", *in.Limit)
		}
		limit = *in.Limit
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			msg := fmt.Sprintf("File does not exist: %s", path)
			if s := didYouMean(path); s != "" {
				msg += fmt.Sprintf(". Did you mean %s?", s)
			}
			return tool.Errorf("%s", msg)
		}
		return tool.Errorf("cannot read %s: %v", path, err)
	}
	if fi.IsDir() {
		return tool.Errorf("%s is a directory, not a file: use LS to list it, or Glob to find files in it", path)
	}
	if !fi.Mode().IsRegular() {
		return tool.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return tool.Errorf("cannot open %s: %v", path, err)
	}
	defer f.Close()

	// The head the checks below look at: the first 8 KiB, or the whole of
	// a smaller file (512 bytes at least, for files whose size the system
	// does not report).
	head := make([]byte, min(max(fi.Size(), 512), 8192))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tool.Errorf("cannot read %s: %v", path, err)
	}
	head = head[:n]
	record := func(partial bool) {
		if st := fileState(env); st != nil {
			st.Record(path, stampOf(fi, partial))
		}
	}
	if kind := imageKind(head); kind != "" {
		record(false)
		return tool.Output{Text: fmt.Sprintf("%s is a %s image of %d bytes. Images are not passed to the model by this runtime yet, so its pixels cannot be shown.", path, kind, fi.Size())}
	}
	if looksBinary(head) {
		return tool.Errorf("%s looks like a binary file (%d bytes), not text; Read only shows text files", path, fi.Size())
	}
	if in.Offset == nil && in.Limit == nil && strings.EqualFold(filepath.Ext(path), ".ipynb") && fi.Size() <= maxNotebookBytes {
		if data, err := os.ReadFile(path); err == nil {
			if nb, err := parseNotebook(data); err == nil {
				record(false)
				return tool.Output{Text: renderNotebook(nb, path, int(cfg.ReadMaxBytes))}
			}
		}
	}
	if fi.Size() == 0 && n == 0 {
		record(false)
		return tool.Output{Text: fmt.Sprintf("(%s exists but is empty)", path)}
	}
	if in.Offset == nil && in.Limit == nil && fi.Size() > cfg.ReadMaxBytes {
		return tool.Errorf("%s is %d bytes, more than the %d bytes Read returns at once: pass offset and limit to read it in parts, or use Grep to find the lines you need", path, fi.Size(), cfg.ReadMaxBytes)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Errorf("cannot read %s: %v", path, err)
	}
	// A small file gets a small buffer: most reads are of small files, and
	// a 64 KiB buffer each is most of what a sub-agent allocates.
	bufSize := int(min(max(fi.Size()+1, 512), 64<<10))
	lines, total, more, err := sliceLines(bufio.NewReaderSize(f, bufSize), start, limit, cfg.MaxLineChars)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", path, err)
	}
	if len(lines) == 0 {
		record(true)
		return tool.Output{Text: fmt.Sprintf("(%s has %s; offset %d is past the end)", path, plural(total, "line", "lines"), start)}
	}
	var b strings.Builder
	size := 0
	for _, l := range lines {
		size += len(l) + 8
	}
	b.Grow(size)
	for i, l := range lines {
		writeNumbered(&b, start+i, l)
	}
	if more {
		last := start + len(lines) - 1
		fmt.Fprintf(&b, "\n(Showing lines %d-%d; the file continues. Read on with offset=%d.)\n", start, last, last+1)
	}
	record(start > 1 || more)
	out := tool.Output{Text: b.String()}
	if env != nil && env.OmitResults {
		return out // a sub-agent's call: no structured result to build (withResult)
	}
	return withResult(env, out, readResultJSON{Type: "text", File: readFileJSON{FilePath: path,
		Content: strings.Join(lines, "\n") + "\n", NumLines: len(lines), StartLine: start, TotalLines: total}})
}

// sliceLines reads r and returns the display text of lines
// [start, start+limit) (1-based), each cut to maxChars characters, the number
// of lines seen, and whether more lines follow. Memory stays bounded by the
// returned lines, however long a line in the file is.
func sliceLines(r *bufio.Reader, start, limit, maxChars int) ([]string, int, bool, error) {
	// The lines shown are written to one builder and cut from its string
	// at the end: a few allocations for them all, not one per line.
	var arena strings.Builder
	arena.Grow(min(r.Size(), 4<<10))
	var ends []int
	lines := func() []string {
		if ends == nil {
			return nil
		}
		all := arena.String()
		out := make([]string, len(ends))
		from := 0
		for i, e := range ends {
			out[i], from = all[from:e], e
		}
		return out
	}
	var buf []byte
	keep := maxChars*4 + 8 // enough bytes for maxChars characters plus a line end
	lineNo := 0
	for {
		if len(ends) >= limit {
			_, err := r.Peek(1)
			return lines(), lineNo, err == nil, nil
		}
		want := lineNo+1 >= start
		buf = buf[:0]      // displayLine copies what it keeps
		overflowRunes := 0 // characters beyond buf, counted per chunk
		sawAny := false
		var readErr error
		for {
			chunk, err := r.ReadSlice('\n')
			if len(chunk) > 0 {
				sawAny = true
			}
			if want {
				room := max(0, keep-len(buf))
				k := min(room, len(chunk))
				buf = append(buf, chunk[:k]...)
				overflowRunes += utf8.RuneCount(chunk[k:])
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			readErr = err
			break
		}
		if !sawAny {
			if readErr != nil && !errors.Is(readErr, io.EOF) {
				return nil, lineNo, false, readErr
			}
			return lines(), lineNo, false, nil
		}
		lineNo++
		if want {
			writeDisplayLine(&arena, buf, overflowRunes, maxChars)
			ends = append(ends, arena.Len())
		}
		if readErr != nil {
			if errors.Is(readErr, io.EOF) {
				return lines(), lineNo, false, nil
			}
			return nil, lineNo, false, readErr
		}
	}
}

// writeDisplayLine writes displayLine(buf, overflow, maxChars) to w,
// buf as it is when it needs no change (the common case).
func writeDisplayLine(w *strings.Builder, buf []byte, overflow, maxChars int) {
	if overflow == 0 {
		b := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if utf8.Valid(b) && utf8.RuneCount(b) <= maxChars {
			w.Write(b)
			return
		}
	}
	w.WriteString(displayLine(buf, overflow, maxChars))
}

// displayLine renders one line read by sliceLines: without its line end,
// cut to maxChars characters. When the line did not fit in buf, overflow
// counts the characters left out (the line end among them).
func displayLine(buf []byte, overflow, maxChars int) string {
	if overflow > 0 {
		overflow-- // the line end, if any, was in the overflow
	} else {
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
	}
	if utf8.Valid(buf) && utf8.RuneCount(buf)+overflow <= maxChars {
		return string(buf) // what the rune round trip below gives valid text
	}
	line := []rune(string(buf))
	if len(line)+overflow <= maxChars {
		return string(line)
	}
	return fmt.Sprintf("%s… [line truncated: %d more characters]", string(line[:maxChars]), len(line)+overflow-maxChars)
}

// imageKind names the image format from its magic bytes, or "".
func imageKind(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "PNG"
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "JPEG"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "GIF"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "WebP"
	}
	return ""
}

// looksBinary reports whether a file's first bytes say it is not text: a
// NUL byte, or mostly bytes that are not UTF-8.
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	if len(b) == 0 || utf8.Valid(b) {
		return false
	}
	// Ignore a rune cut by the end of the sample.
	body := b
	if len(body) > 4 {
		body = body[:len(body)-3]
	}
	bad := 0
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			bad++
		}
		i += max(size, 1)
	}
	return bad*10 > len(body)*3
}

// didYouMean returns a file in the same directory whose name is close to
// the missing path's, or "".
func didYouMean(path string) string {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	if len(entries) > 5000 {
		entries = entries[:5000]
	}
	lower := strings.ToLower(base)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	best, bestScore := "", 1<<30
	for _, e := range entries {
		name := e.Name()
		score := -1
		switch {
		case strings.ToLower(name) == lower:
			score = 0
		case stem != "" && strings.TrimSuffix(name, filepath.Ext(name)) == stem:
			score = 1
		default:
			if d := editDistance(lower, strings.ToLower(name), 2); d <= 2 {
				score = 1 + d
			}
		}
		if score >= 0 && (score < bestScore || score == bestScore && name < filepath.Base(best)) {
			best, bestScore = filepath.Join(dir, name), score
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit+1 once it
// is known to exceed limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// writeNumbered writes line l as Read shows it: its number right-aligned in
// six columns, a tab, the text and a line end (fmt's "%6d\t%s\n", without
// its per-call allocations).
func writeNumbered(b *strings.Builder, n int, l string) {
	var num [20]byte
	d := strconv.AppendInt(num[:0], int64(n), 10)
	for range 6 - len(d) {
		b.WriteByte(' ')
	}
	b.Write(d)
	b.WriteByte('\t')
	b.WriteString(l)
	b.WriteByte('\n')
}
