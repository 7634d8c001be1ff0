// Package skills finds and parses skills: directories holding a SKILL.md
// file whose YAML frontmatter names the skill and says when to use it, and
// whose body holds the instructions an agent loads on demand (the Skill
// tool) or up front (a definition's `skills:`). Other files in the
// directory (scripts, references) are the skill's resources; the agent is
// told where they are and reads them when the instructions call for them.
package skills

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
)

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"

// MaxFileSize is the largest SKILL.md read; bigger files are skipped with
// a diagnostic.
const MaxFileSize = 1 << 20

// Limits on frontmatter values, from the Agent Skills format.
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
)

// Skill is one parsed skill.
type Skill struct {
	// Name is the frontmatter name (the directory's name when missing).
	Name string
	// Description says what the skill does and when to use it; the model
	// chooses skills by it.
	Description string
	// AllowedTools are the tools the skill expects to use without asking,
	// as written (`Bash(git:*)`, `Read`).
	AllowedTools []string
	// Body is the Markdown after the frontmatter: the instructions.
	Body string
	// Dir is the skill's directory (absolute) and Path its SKILL.md.
	Dir  string
	Path string
	// Source says which skills directory it came from.
	Source Source
	// ShadowedBy is the path of the skill of the same name that replaces
	// this one, or "".
	ShadowedBy string
}

// Severity grades a diagnostic.
type Severity string

// Diagnostic severities: an error means the skill was not loaded.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is a problem found in a skill file.
type Diagnostic struct {
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String renders the diagnostic as path:line: severity: message.
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", d.Path, d.Line, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.Path, d.Severity, d.Message)
}

// knownKeys are frontmatter keys of SKILL.md files in the wild; others get
// a warning. Only name, description and allowed-tools mean something to
// cadre today.
var knownKeys = map[string]bool{
	"name": true, "description": true, "allowed-tools": true, "license": true, "metadata": true,
	"version": true, "model": true, "disable-model-invocation": true, "user-invocable": true,
	"argument-hint": true, "when_to_use": true, "compatibility": true,
}

// Parse parses one SKILL.md. dirName names the skill when the frontmatter
// has no name. It returns nil when the file cannot be a skill (no
// frontmatter, bad YAML, no description), with diagnostics saying why.
func Parse(path, dirName string, data []byte) (*Skill, []Diagnostic) {
	var diags []Diagnostic
	add := func(sev Severity, line int, format string, args ...any) {
		diags = append(diags, Diagnostic{Path: path, Line: line, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	text := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !utf8.ValidString(text) {
		add(SeverityError, 0, "the file is not valid UTF-8")
		return nil, diags
	}
	front, body, bodyLine, ok := splitFrontmatter(text)
	if !ok {
		add(SeverityError, 1, "no frontmatter: a SKILL.md starts with a --- line, then YAML with name and description, then ---")
		return nil, diags
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(front), &raw); err != nil {
		add(SeverityError, 2, "frontmatter is not valid YAML: %s", firstLine(err.Error()))
		return nil, diags
	}
	s := &Skill{Path: path, Body: strings.TrimSpace(body)}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !knownKeys[k] {
			add(SeverityWarning, keyLine(front, k), "unknown frontmatter key %q is ignored", k)
		}
	}
	if v, ok := raw["name"]; ok {
		name, isStr := v.(string)
		if !isStr {
			add(SeverityError, keyLine(front, "name"), "name must be a string")
			return nil, diags
		}
		s.Name = strings.TrimSpace(name)
	}
	if s.Name == "" {
		s.Name = dirName
		add(SeverityWarning, 1, "no name in the frontmatter; the directory name %q is used", dirName)
	}
	if problem := checkName(s.Name); problem != "" {
		add(SeverityError, keyLine(front, "name"), "%s", problem)
		return nil, diags
	}
	if v, ok := raw["description"]; ok {
		d, isStr := v.(string)
		if !isStr {
			add(SeverityError, keyLine(front, "description"), "description must be a string")
			return nil, diags
		}
		s.Description = strings.TrimSpace(d)
	}
	if s.Description == "" {
		add(SeverityError, 1, "description is required: it tells the model when to use the skill")
		return nil, diags
	}
	if n := utf8.RuneCountInString(s.Description); n > MaxDescriptionLength {
		add(SeverityWarning, keyLine(front, "description"), "description is %d characters; listings show the first %d", n, MaxDescriptionLength)
	}
	if v, ok := raw["allowed-tools"]; ok {
		tools, problem := toolList(v)
		if problem != "" {
			add(SeverityWarning, keyLine(front, "allowed-tools"), "allowed-tools %s; the field is ignored", problem)
		} else {
			s.AllowedTools = tools
		}
	}
	if s.Body == "" {
		add(SeverityWarning, bodyLine, "the skill has no instructions after the frontmatter")
	}
	return s, diags
}

// checkName returns a problem with a skill name, or "": names become
// listing entries and tool arguments, so they must be one short token.
func checkName(name string) string {
	switch {
	case utf8.RuneCountInString(name) > MaxNameLength:
		return fmt.Sprintf("name %q is longer than %d characters", name, MaxNameLength)
	case name == "." || name == ".." || strings.HasPrefix(name, "-"):
		return fmt.Sprintf("name %q is not allowed", name)
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' || r == ':') {
			return fmt.Sprintf("name %q may hold only letters, digits, '-', '_', '.' and ':'", name)
		}
	}
	return ""
}

// toolList reads allowed-tools: a YAML list, or a string split on commas
// and spaces outside parentheses.
func toolList(v any) ([]string, string) {
	switch x := v.(type) {
	case string:
		return splitTools(x), ""
	case []any:
		var out []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, "must be a list of strings"
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, ""
	case nil:
		return nil, ""
	}
	return nil, "must be a string or a list"
}

// splitTools splits "Read, Bash(git diff:*) Grep" into entries.
func splitTools(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ',' || r == ' ' || r == '\t') && depth == 0:
			flush(i)
			start = i + 1
		}
	}
	flush(len(s))
	return out
}

// splitFrontmatter cuts "---\n<yaml>\n---\n<body>". It returns the YAML,
// the body and the body's first line number.
func splitFrontmatter(text string) (front, body string, bodyLine int, ok bool) {
	rest, found := strings.CutPrefix(text, "---")
	if !found {
		return "", "", 0, false
	}
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		return "", "", 0, false
	}
	rest = rest[nl+1:]
	lines := strings.SplitAfter(rest, "\n")
	off := 0
	for i, l := range lines {
		if strings.TrimRight(l, " \t\n") == "---" {
			return rest[:off], rest[off+len(l):], i + 3, true
		}
		off += len(l)
	}
	return "", "", 0, false
}

// keyLine finds the line (counting the opening --- as 1) where key is set
// at the top level of the frontmatter, or 1.
func keyLine(front, key string) int {
	for i, l := range strings.Split(front, "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 2
		}
	}
	return 1
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
