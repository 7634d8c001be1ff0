package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Subject is what one call of a tool acts on, as permission rules see it.
// A tool declares it (SubjectDeclarer); the permission checker matches the
// content of a rule — `Read(./src/**)`, `Bash(npm test:*)`,
// `WebFetch(domain:example.com)`, `Agent(Explore)`, `MyTool(./out/**)` —
// against it, so it never has to know a tool's input fields.
type Subject struct {
	// Paths are the files or directories the call reads or writes, as the
	// call gives them: absolute, relative to the agent's working directory,
	// or starting with `~`. A path rule matches them. An empty path means
	// the call names none (the checker asks).
	Paths []string
	// Glob is a pattern searched for under Paths[0] (Glob's pattern): the
	// search reaches as far as the pattern's fixed prefix leads.
	Glob string
	// Content is the text a content rule matches when the call is not
	// about paths: Bash's command, or whatever an embedder's tool names
	// (a rule's `*` matches any run of characters).
	Content string
	// URL is the address the call fetches; `domain:` rules match its host.
	URL string
	// AgentType is the kind of agent the call starts ("" is
	// general-purpose); `Agent(Type)` rules match it.
	AgentType string
	// Server is the MCP server the call goes to, normalised as in the
	// tool's name (mcp__<server>__<tool>): `mcp__server` and
	// `mcp__server__*` rules are matched against it, so a server whose
	// name contains "__" is not misread.
	Server string
}

// SubjectDeclarer is a Tool that declares the subject of its calls. A tool
// that does not is matched by whole-tool rules only (`MyTool`), and a
// content rule naming it protects the whole tool when it denies or asks,
// and allows nothing.
type SubjectDeclarer interface {
	// Subject returns what the call with this raw input acts on. An error
	// means the input cannot be read (it is not a JSON object); the
	// checker then asks.
	Subject(input json.RawMessage) (Subject, error)
}

// SubjectOf returns the subject t declares for input; declared is false
// when t declares none.
func SubjectOf(t Tool, input json.RawMessage) (s Subject, declared bool, err error) {
	d, ok := t.(SubjectDeclarer)
	if !ok {
		return Subject{}, false, nil
	}
	s, err = d.Subject(input)
	return s, true, err
}

// DecodeSubject returns a subject function over a typed view of the input:
// the raw input is decoded into In (unknown fields ignored) and subject
// reads it. Use a field of type LenientString for a string that may be
// missing or of another type. An empty input decodes as {}.
func DecodeSubject[In any](subject func(In) Subject) func(json.RawMessage) (Subject, error) {
	return func(input json.RawMessage) (Subject, error) {
		var in In
		if err := decodeView(input, &in); err != nil {
			return Subject{}, err
		}
		return subject(in), nil
	}
}

// LenientString is a string field of a subject's input view that is
// lenient about what the model sent: a JSON string sets it; null, a number
// or any other type leaves it empty. The checker then treats the field as
// missing instead of failing to read the whole input.
type LenientString string

// UnmarshalJSON implements json.Unmarshaler.
func (t *LenientString) UnmarshalJSON(b []byte) error {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && plainJSONText(b[1:n-1]) {
		// The usual path: its bytes are the string (what json.Unmarshal
		// decodes them to, without a decoder per field).
		*t = LenientString(b[1 : n-1])
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = LenientString(s)
	}
	return nil
}

// plainJSONText reports whether b, between a JSON string's quotes, needs no
// decoding: no escape, no quote, no control character, valid UTF-8.
func plainJSONText(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

// BuiltinSubject returns the subject function of a tool cadre defines
// (Read, Bash, WebFetch, Agent…), or nil for a name whose calls have no
// subject beyond the tool itself. The permission checker uses it for a
// call it gets by name alone (`cadre permission check`); the tools declare
// the same function through FuncConfig.Subject. Plain functions, not
// closures: nothing is allocated at start.
func BuiltinSubject(name string) func(json.RawMessage) (Subject, error) {
	switch name {
	case Read, Write, Edit, MultiEdit:
		return filePathSubject
	case NotebookEdit, NotebookRead:
		return notebookPathSubject
	case Glob:
		return globSubject
	case Grep, LS:
		return searchSubject
	case Bash:
		return commandSubject
	case WebFetch:
		return urlSubject
	case Agent, Task:
		return agentTypeSubject
	}
	return nil
}

// decodeView decodes input into a subject's view of it; an empty input is
// {}.
func decodeView(input json.RawMessage, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		return nil
	}
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("read the input: %w", err)
	}
	return nil
}

func filePathSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		FilePath LenientString `json:"file_path"`
	}
	if err := decodeView(input, &in); err != nil {
		return Subject{}, err
	}
	return Subject{Paths: []string{string(in.FilePath)}}, nil
}

func notebookPathSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		NotebookPath LenientString `json:"notebook_path"`
	}
	if err := decodeView(input, &in); err != nil {
		return Subject{}, err
	}
	return Subject{Paths: []string{string(in.NotebookPath)}}, nil
}

// searchSubject: a search under path, the working directory when the call
// names none.
func searchSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		Path LenientString `json:"path"`
	}
	if err := decodeView(input, &in); err != nil {
		return Subject{}, err
	}
	return Subject{Paths: []string{searchDir(in.Path)}}, nil
}

func globSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		Path    LenientString `json:"path"`
		Pattern LenientString `json:"pattern"`
	}
	if err := decodeView(input, &in); err != nil {
		return Subject{}, err
	}
	return Subject{Paths: []string{searchDir(in.Path)}, Glob: string(in.Pattern)}, nil
}

func searchDir(path LenientString) string {
	if path == "" {
		return "."
	}
	return string(path)
}

func commandSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		Command LenientString `json:"command"`
	}
	err := decodeView(input, &in)
	return Subject{Content: string(in.Command)}, err
}

func urlSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		URL LenientString `json:"url"`
	}
	err := decodeView(input, &in)
	return Subject{URL: string(in.URL)}, err
}

func agentTypeSubject(input json.RawMessage) (Subject, error) {
	var in struct {
		SubagentType LenientString `json:"subagent_type"`
	}
	err := decodeView(input, &in)
	return Subject{AgentType: string(in.SubagentType)}, err
}
