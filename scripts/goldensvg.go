//go:build ignore

// goldensvg draws the terminal UI's golden views
// (internal/tui/testdata/*.golden) as SVG pictures for the docs
// (docs/images/*.svg): plain SVG text in a monospace font on a terminal's
// dark background, each character at its terminal column, so the picture
// is the golden view exactly. Run it from the repository root after a
// golden view changes:
//
//	go run scripts/goldensvg.go
//
// (or scripts/goldensvg.sh). The docs' tests run it into a temporary
// directory and fail when a committed picture is not what it draws now.
// It is a `go run` script, not a package: nothing cadre links imports it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The cell of one terminal column and row, in SVG pixels, and the margin
// around the screen.
const (
	cellW    = 8.4
	cellH    = 18.0
	fontSize = 14
	margin   = 12.0
)

// Colours: the screen, the text, and the few glyphs the UI colours so a
// reader finds the structure (bullets, tree and box lines, the spinner).
const (
	background = "#1e1e2e"
	foreground = "#cdd6f4"
)

func colourOf(r rune) string {
	switch {
	case r == '●':
		return "#a6e3a1"
	case r == '◆':
		return "#cba6f7"
	case r == '›':
		return "#89b4fa"
	case r == '⎿' || (r >= 0x2500 && r <= 0x257f): // box drawing
		return "#7f849c"
	case r >= 0x2800 && r <= 0x28ff: // the braille spinner
		return "#f9e2af"
	}
	return ""
}

var sizeRE = regexp.MustCompile(`_(\d+)x(\d+)\.golden$`)

func main() {
	in := flag.String("in", "internal/tui/testdata", "directory of the golden views")
	out := flag.String("out", "docs/images", "directory the SVG pictures are written to")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "goldensvg:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	goldens, err := filepath.Glob(filepath.Join(in, "*.golden"))
	if err != nil {
		return err
	}
	if len(goldens) == 0 {
		return fmt.Errorf("no golden views in %s", in)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			return err
		}
		svg, err := render(filepath.Base(g), string(data))
		if err != nil {
			return fmt.Errorf("%s: %w", g, err)
		}
		name := strings.TrimSuffix(filepath.Base(g), ".golden") + ".svg"
		if err := os.WriteFile(filepath.Join(out, name), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// render draws one golden view. Its name gives the terminal's size
// (tree_80x24.golden: 80 columns, 24 rows).
func render(name, view string) ([]byte, error) {
	m := sizeRE.FindStringSubmatch(name)
	if m == nil {
		return nil, fmt.Errorf("the name does not say the size (want NAME_COLSxROWS.golden)")
	}
	cols, _ := strconv.Atoi(m[1])
	rows, _ := strconv.Atoi(m[2])
	lines := strings.Split(strings.TrimSuffix(view, "\n"), "\n")
	if len(lines) > rows {
		rows = len(lines)
	}
	w := margin*2 + float64(cols)*cellW
	h := margin*2 + float64(rows)*cellH
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img">`+"\n", num(w), num(h), num(w), num(h))
	fmt.Fprintf(&b, "<title>%s</title>\n", escape(strings.TrimSuffix(name, ".golden")))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="6" fill="%s"/>`+"\n", background)
	fmt.Fprintf(&b, `<g font-family="ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="%d" fill="%s" xml:space="preserve">`+"\n", fontSize, foreground)
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		y := margin + float64(i)*cellH + cellH*0.75
		fmt.Fprintf(&b, `<text y="%s">`, num(y))
		writeLine(&b, line)
		b.WriteString("</text>\n")
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Bytes(), nil
}

// writeLine writes a line as runs of plain ASCII text, each placed at its
// column, and every other character on its own at its column, so a glyph
// the font draws wider or narrower never shifts the rest of the line.
func writeLine(b *bytes.Buffer, line string) {
	col := 0
	var run strings.Builder
	runCol := 0
	flush := func() {
		if strings.TrimSpace(run.String()) != "" {
			// textLength pins the run to its columns whatever the font's
			// advance (the cell assumes 0.6 em).
			fmt.Fprintf(b, `<tspan x="%s" textLength="%s" lengthAdjust="spacing">%s</tspan>`,
				num(margin+float64(runCol)*cellW), num(float64(run.Len())*cellW), escape(run.String()))
		}
		run.Reset()
	}
	for _, r := range line {
		width := ansi.StringWidth(string(r))
		if r < 0x80 {
			if run.Len() == 0 {
				runCol = col
			}
			run.WriteRune(r)
			col += width
			continue
		}
		flush()
		fill := ""
		if c := colourOf(r); c != "" {
			fill = fmt.Sprintf(` fill="%s"`, c)
		}
		fmt.Fprintf(b, `<tspan x="%s"%s>%s</tspan>`, num(margin+float64(col)*cellW), fill, escape(string(r)))
		col += width
	}
	flush()
}

// num prints a coordinate with at most one decimal.
func num(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
