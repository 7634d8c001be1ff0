// Package mcpx connects cadre's agents to MCP servers with the official
// Go SDK (github.com/modelcontextprotocol/go-sdk): it reads server
// configurations where users already keep them (Claude Code's .mcp.json,
// --mcp-config values, the mcpServers objects of settings files), runs the
// stdio, streamable HTTP and SSE transports, and turns every server tool
// into a tool.Tool named mcp__<server>__<tool>.
//
// A Manager, owned by the runtime, holds the session's servers: shared ones
// connect in the background and are reference-counted; an agent's inline
// servers start with the agent and stop when its Lease is released. There is
// no package-level state.
package mcpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/textdist"
)

// Severity of a Diagnostic.
type Severity string

// Severities.
const (
	// Warning: the configuration loaded; something was ignored.
	Warning Severity = "warning"
	// Error: one server entry was skipped.
	Error Severity = "error"
)

// Diagnostic is a problem in a configuration that did not stop loading.
type Diagnostic struct {
	File     string
	Line     int
	Severity Severity
	Message  string
}

// String formats the diagnostic as "file:line: severity: message".
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", d.File, d.Line, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
}

// Keys Claude Code accepts in a server entry that cadre reads.
var (
	stdioKeys = []string{"type", "command", "args", "env", "timeout"}
	httpKeys  = []string{"type", "url", "headers", "timeout"}
	sdkKeys   = []string{"type", "name", "timeout"}
	// Keys Claude Code knows that cadre does not act on: a warning says
	// so, without a did-you-mean.
	ignoredKeys = []string{"alwaysLoad", "oauth", "headersHelper", "tools", "displayName",
		"request_timeout_ms", "bareElicitationCapability", "discoveryCache", "role", "toolPermissions"}
)

// ProjectFile is the name of the project's MCP configuration file.
const ProjectFile = ".mcp.json"

// ParseFile parses a file in .mcp.json form ({"mcpServers": {...}}) read
// from file. A file that is not valid JSON, or whose mcpServers is not an
// object, is an error naming file and line; problems in single entries are
// diagnostics and the other entries still load.
func ParseFile(file string, data []byte, scope Scope, getenv func(string) string) ([]ServerConfig, []Diagnostic, error) {
	pos, err := keyOffsets(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, lineError(data, err))
	}
	var top map[string]json.RawMessage
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' || json.Unmarshal(data, &top) != nil || top == nil {
		return nil, nil, fmt.Errorf("%s:1: an MCP configuration must be a JSON object with an \"mcpServers\" object", file)
	}
	p := parser{file: file, data: data, pos: pos, getenv: getenv}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "mcpServers" && k != "$schema" {
			p.warn("/"+k, "unknown key %q ignored%s", k, didYouMean(k, []string{"mcpServers"}))
		}
	}
	raw, ok := top["mcpServers"]
	if !ok {
		p.warn("", "no \"mcpServers\" object; no servers configured")
		return nil, p.diags, nil
	}
	servers, err := p.servers("/mcpServers", raw, scope)
	return servers, p.diags, err
}

// ParseServers parses the mcpServers object of a settings file (raw is
// that object, not the whole file). line is the line of file on which raw
// starts, so diagnostics name real lines; 0 when unknown.
func ParseServers(file string, line int, raw json.RawMessage, scope Scope, getenv func(string) string) ([]ServerConfig, []Diagnostic, error) {
	pos, err := keyOffsets(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: mcpServers: %w", file, lineError(raw, err))
	}
	p := parser{file: file, data: raw, pos: pos, getenv: getenv, lineBase: max(line-1, 0)}
	servers, err := p.servers("", raw, scope)
	return servers, p.diags, err
}

// ParseFlag parses one --mcp-config value: inline JSON (it starts with
// "{") or the path of a file in .mcp.json form, relative to cwd.
func ParseFlag(value, cwd string, getenv func(string) string) ([]ServerConfig, []Diagnostic, error) {
	v := strings.TrimSpace(value)
	if strings.HasPrefix(v, "{") {
		return ParseFile("--mcp-config", []byte(v), ScopeFlag, getenv)
	}
	if v == "" {
		return nil, nil, errors.New("--mcp-config: empty value (want a JSON object or a file path)")
	}
	path := v
	if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--mcp-config: %w", err)
	}
	return ParseFile(path, data, ScopeFlag, getenv)
}

// ParseInline parses one inline server configuration of an agent
// definition (the value of a {name: config} entry). file names the agent
// file for diagnostics.
func ParseInline(file, name string, raw json.RawMessage, getenv func(string) string) (ServerConfig, []Diagnostic, error) {
	// Lines inside the entry are not the agent file's: diagnostics name
	// the file only.
	if _, err := keyOffsets(raw); err != nil {
		return ServerConfig{}, nil, fmt.Errorf("%s: mcpServers %s: %w", file, name, lineError(raw, err))
	}
	p := parser{file: file, data: raw, getenv: getenv}
	s, ok := p.server("", name, raw, ScopeAgent)
	if !ok {
		return ServerConfig{}, p.diags, fmt.Errorf("%s: mcpServers %s: %s", file, name, p.diags[len(p.diags)-1].Message)
	}
	return s, p.diags, nil
}

// Merge combines server lists, lowest precedence first: a later list's
// server replaces an earlier one of the same name. The result is sorted by
// name.
func Merge(layers ...[]ServerConfig) []ServerConfig {
	byName := map[string]ServerConfig{}
	for _, l := range layers {
		for _, s := range l {
			byName[s.Name] = s
		}
	}
	return slices.SortedFunc(maps.Values(byName), func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
}

// parser holds what the parse of one file needs for its diagnostics.
type parser struct {
	file     string
	data     []byte
	pos      map[string]int64 // JSON pointer of each object key → offset
	lineBase int
	getenv   func(string) string
	diags    []Diagnostic
}

func (p *parser) line(ptr string) int {
	off, ok := p.pos[ptr]
	if !ok {
		return 0
	}
	return p.lineBase + bytes.Count(p.data[:min(int(off), len(p.data))], []byte("\n")) + 1
}

func (p *parser) warn(ptr, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: p.line(ptr), Severity: Warning, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) fail(ptr, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: p.line(ptr), Severity: Error, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) servers(ptr string, raw json.RawMessage, scope Scope) ([]ServerConfig, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		line := p.line(ptr)
		if line == 0 {
			line = p.lineBase + 1
		}
		return nil, fmt.Errorf("%s:%d: \"mcpServers\" must be an object mapping server names to configurations", p.file, line)
	}
	var out []ServerConfig
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if s, ok := p.server(ptr+"/"+escapePtr(name), name, m[name], scope); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// server parses one entry; a bad entry is an error diagnostic and false.
func (p *parser) server(ptr, name string, raw json.RawMessage, scope Scope) (ServerConfig, bool) {
	if err := ValidateName(name); err != nil {
		p.fail(ptr, "server %q skipped: %v", name, err)
		return ServerConfig{}, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		p.fail(ptr, "server %q skipped: its configuration must be an object", name)
		return ServerConfig{}, false
	}
	s := ServerConfig{Name: name, Source: Source{Scope: scope, File: p.file, Line: p.line(ptr)}}
	tr, known, ok := p.transport(ptr, name, m)
	if !ok {
		return ServerConfig{}, false
	}
	s.Transport = tr
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch {
		case slices.Contains(known, k):
		case slices.Contains(ignoredKeys, k):
			p.warn(ptr+"/"+escapePtr(k), "server %q: %q is not supported by cadre; ignored", name, k)
		default:
			all := append(append([]string{}, stdioKeys...), httpKeys...)
			p.warn(ptr+"/"+escapePtr(k), "server %q: unknown key %q ignored%s", name, k, didYouMean(k, all))
		}
	}
	f := fields{p: p, ptr: ptr, server: name, m: m, ok: true}
	if s.Transport == InProcess {
		// Nothing to read: the program that runs cadre serves it.
	} else if s.Transport == Stdio {
		f.str("command", &s.Command)
		f.strList("args", &s.Args)
		f.strMap("env", &s.Env)
		if f.ok && strings.TrimSpace(s.Command) == "" {
			p.fail(ptr, "server %q skipped: a stdio server needs a \"command\"", name)
			f.ok = false
		}
	} else {
		f.str("url", &s.URL)
		f.strMap("headers", &s.Headers)
		if f.ok && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			p.fail(ptr+"/url", "server %q skipped: %q is not an http:// or https:// URL", name, s.URL)
			f.ok = false
		}
	}
	if v, has := m["timeout"]; has && f.ok {
		var ms float64
		if json.Unmarshal(v, &ms) != nil || ms <= 0 {
			p.warn(ptr+"/timeout", "server %q: \"timeout\" must be a positive number of milliseconds; ignored", name)
		} else if ms < 1000 {
			p.warn(ptr+"/timeout", "server %q: \"timeout\" below 1000 ms is ignored", name)
		} else {
			s.CallTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	return s, f.ok
}

// transport reads the entry's "type" and returns its transport and the
// keys that transport reads.
func (p *parser) transport(ptr, name string, m map[string]json.RawMessage) (Transport, []string, bool) {
	var typ string
	if t, ok := m["type"]; ok && json.Unmarshal(t, &typ) != nil {
		p.fail(ptr+"/type", "server %q skipped: \"type\" must be a string", name)
		return "", nil, false
	}
	_, hasURL := m["url"]
	_, hasCmd := m["command"]
	switch typ {
	case "":
		if hasURL && !hasCmd {
			p.fail(ptr, "server %q skipped: it has a \"url\" but no \"type\"; add \"type\": \"http\" or \"sse\"", name)
			return "", nil, false
		}
		return Stdio, stdioKeys, true
	case "stdio":
		return Stdio, stdioKeys, true
	case "http", "streamable-http", "streamableHttp":
		return HTTP, httpKeys, true
	case "sse":
		return SSE, httpKeys, true
	case "sdk":
		// An Agent SDK's in-process server: its messages travel over the
		// control protocol (mcp_message), which the SDK mode wires up.
		return InProcess, sdkKeys, true
	}
	p.fail(ptr+"/type", "server %q skipped: transport type %q is not supported (use stdio, http or sse)", name, typ)
	return "", nil, false
}

// fields decodes the values of one server entry; the first bad one is an
// error diagnostic and clears ok. Strings get ${VAR} expansion.
type fields struct {
	p      *parser
	ptr    string
	server string
	m      map[string]json.RawMessage
	ok     bool
}

func (f *fields) decode(k, want string, dst any) bool {
	v, has := f.m[k]
	if !has || !f.ok {
		return false
	}
	if json.Unmarshal(v, dst) != nil {
		f.p.fail(f.ptr+"/"+k, "server %q skipped: %q must be %s", f.server, k, want)
		f.ok = false
		return false
	}
	return true
}

func (f *fields) str(k string, dst *string) {
	if f.decode(k, "a string", dst) {
		*dst = f.p.expand(f.ptr+"/"+k, f.server, *dst)
	}
}

func (f *fields) strList(k string, dst *[]string) {
	if f.decode(k, "a list of strings", dst) {
		for i, a := range *dst {
			(*dst)[i] = f.p.expand(f.ptr+"/"+k, f.server, a)
		}
	}
}

func (f *fields) strMap(k string, dst *map[string]string) {
	if f.decode(k, "an object of strings", dst) {
		for kk, vv := range *dst {
			(*dst)[kk] = f.p.expand(f.ptr+"/"+k, f.server, vv)
		}
	}
}

// expand replaces ${VAR} and ${VAR:-default} in s. A variable that is
// not set and has no default stays as written, with a warning.
func (p *parser) expand(ptr, server, s string) string {
	out, missing := Expand(s, p.getenv)
	for _, v := range missing {
		p.warn(ptr, "server %q: environment variable %s is not set", server, v)
	}
	return out
}

// Expand replaces ${VAR} and ${VAR:-default} in s with values from getenv
// (nil reads nothing). It returns the names of unset variables that had no
// default; they stay in the result as written.
func Expand(s string, getenv func(string) string) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(ref, ":-")
		val := ""
		if getenv != nil && name != "" {
			val = getenv(name)
		}
		switch {
		case val != "":
			b.WriteString(val)
		case hasDef:
			b.WriteString(def)
		default:
			b.WriteString(s[i : i+j+1])
			missing = append(missing, name)
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String(), missing
}

// ValidateName checks a server name: not empty, at most 200 characters,
// no control characters. Characters outside [A-Za-z0-9_-] are allowed in
// configuration and replaced in tool names (see Normalize).
func ValidateName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("the server name is empty")
	case len(name) > 200:
		return errors.New("the server name is longer than 200 characters")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("the server name contains control characters")
	}
	return nil
}

func didYouMean(k string, known []string) string {
	best, bestD := "", 4
	for _, c := range known {
		if d := textdist.Distance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || best == k {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// keyOffsets walks a JSON document and returns the offset of every object
// key by JSON pointer ("/mcpServers/name/command"); it also checks the
// document is one valid JSON value.
func keyOffsets(data []byte) (map[string]int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	pos := map[string]int64{}
	var walk func(ptr string) error
	walk = func(ptr string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			for dec.More() {
				start := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				kp := ptr + "/" + escapePtr(k)
				pos[kp] = skipSpace(data, start)
				if err := walk(kp); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s/%d", ptr, i)); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(""); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, offsetErr{off: int64(len(data)), err: errors.New("unexpected end of JSON")}
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, offsetErr{off: dec.InputOffset(), err: err}
	}
	if _, err := dec.Token(); err == nil {
		return nil, offsetErr{off: dec.InputOffset(), err: errors.New("unexpected data after the JSON value")}
	}
	return pos, nil
}

type offsetErr struct {
	off int64
	err error
}

func (e offsetErr) Error() string { return e.err.Error() }
func (e offsetErr) Unwrap() error { return e.err }

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r' || data[off] == ',') {
		off++
	}
	return off
}

// lineError turns a JSON error into "line N, column C: message".
func lineError(data []byte, err error) error {
	off := int64(-1)
	var se *json.SyntaxError
	var oe offsetErr
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &oe):
		off = oe.off
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err
	}
	off = min(off, int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Errorf("line %d, column %d: %s", line, col, err.Error())
}

// SettingsServers is the mcpServers object of one settings file, as the
// config package hands it over.
type SettingsServers struct {
	// Scope is ScopeUser, ScopeSettings, ScopeLocal or ScopeManaged.
	Scope Scope
	File  string
	// Line is the line of File on which Raw starts (0 when unknown).
	Line int
	Raw  json.RawMessage
}

// LoadOptions says where Load reads server configurations.
type LoadOptions struct {
	// Cwd is the project root; its .mcp.json is read unless NoProjectFile.
	Cwd           string
	NoProjectFile bool
	// Settings are the mcpServers objects of settings files.
	Settings []SettingsServers
	// Flags are the --mcp-config values, in order.
	Flags []string
	// Strict (--strict-mcp-config) uses the Flags' servers only.
	Strict bool
	Getenv func(string) string
}

// scopeRank orders scopes from lowest to highest precedence: user
// settings < .mcp.json < project settings < local settings <
// --mcp-config < managed settings.
var scopeRank = map[Scope]int{ScopeUser: 0, ScopeProject: 1, ScopeSettings: 2, ScopeLocal: 3, ScopeFlag: 4, ScopeManaged: 5}

// Load reads every configured server with the usual precedence (see
// scopeRank); a server of a higher scope replaces one of the same name.
// A malformed file is an error; problems in entries are diagnostics.
func Load(o LoadOptions) ([]ServerConfig, []Diagnostic, error) {
	type layer struct {
		rank    int
		servers []ServerConfig
	}
	var layers []layer
	var diags []Diagnostic
	add := func(rank int, s []ServerConfig, d []Diagnostic) {
		layers = append(layers, layer{rank, s})
		diags = append(diags, d...)
	}
	for _, v := range o.Flags {
		s, d, err := ParseFlag(v, o.Cwd, o.Getenv)
		if err != nil {
			return nil, nil, err
		}
		add(scopeRank[ScopeFlag], s, d)
	}
	if !o.Strict {
		if !o.NoProjectFile && o.Cwd != "" {
			path := filepath.Join(o.Cwd, ProjectFile)
			data, err := os.ReadFile(path)
			switch {
			case err == nil:
				s, d, err := ParseFile(path, data, ScopeProject, o.Getenv)
				if err != nil {
					return nil, nil, err
				}
				add(scopeRank[ScopeProject], s, d)
			case !errors.Is(err, fs.ErrNotExist):
				return nil, nil, fmt.Errorf("read %s: %w", path, err)
			}
		}
		for _, ss := range o.Settings {
			s, d, err := ParseServers(ss.File, ss.Line, ss.Raw, ss.Scope, o.Getenv)
			if err != nil {
				return nil, nil, err
			}
			add(scopeRank[ss.Scope], s, d)
		}
	}
	slices.SortStableFunc(layers, func(a, b layer) int { return a.rank - b.rank })
	lists := make([][]ServerConfig, len(layers))
	for i, l := range layers {
		lists[i] = l.servers
	}
	return Merge(lists...), diags, nil
}

// OptionsFromEnv reads Claude Code's variables: MCP_TIMEOUT (connect,
// ms), MCP_TOOL_TIMEOUT (one call, ms) and MAX_MCP_OUTPUT_TOKENS (about
// four characters a token). Unset or bad values keep the defaults.
func OptionsFromEnv(getenv func(string) string) Options {
	ms := func(k string) time.Duration {
		n, err := strconv.Atoi(strings.TrimSpace(getenv(k)))
		if err != nil || n <= 0 {
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}
	o := Options{ConnectTimeout: ms("MCP_TIMEOUT"), CallTimeout: ms("MCP_TOOL_TIMEOUT")}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("MAX_MCP_OUTPUT_TOKENS"))); err == nil && n > 0 {
		o.MaxOutputChars = n * 4
	}
	return o
}

// ParseAgentServers reads an agent definition's mcpServers entries (as
// agentdef keeps them: a JSON string naming a configured server, or a
// {"name": config} object configuring one inline) and its
// requiredMcpServers into what Manager.Acquire takes. Bad inline entries
// are diagnostics naming file; the other entries still count.
func ParseAgentServers(file string, entries []json.RawMessage, required []string, getenv func(string) string) (AgentServers, []Diagnostic) {
	var out AgentServers
	var diags []Diagnostic
	for _, e := range entries {
		var name string
		if json.Unmarshal(e, &name) == nil {
			if name = strings.TrimSpace(name); name != "" && !slices.Contains(out.Names, name) {
				out.Names = append(out.Names, name)
			}
			continue
		}
		var inline map[string]json.RawMessage
		if json.Unmarshal(e, &inline) != nil || len(inline) == 0 {
			diags = append(diags, Diagnostic{File: file, Severity: Error, Message: fmt.Sprintf("mcpServers entry %s is neither a server name nor a {name: config} object; ignored", e)})
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(inline)) {
			s, d, err := ParseInline(file, n, inline[n], getenv)
			diags = append(diags, d...)
			if err != nil {
				continue
			}
			out.Inline = append(out.Inline, s)
		}
	}
	for _, r := range required {
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(out.Required, r) {
			out.Required = append(out.Required, r)
		}
	}
	return out, diags
}
