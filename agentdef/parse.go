package agentdef

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/internal/text"
	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// MaxNameLen is the longest agent name accepted (S-4.3).
const MaxNameLen = 256

// knownKeys are the frontmatter keys cadre applies.
var knownKeys = []string{
	"name", "description", "tools", "disallowedTools", "model", "effort",
	"permissionMode", "mcpServers", "requiredMcpServers", "hooks", "maxTurns",
	"skills", "memory", "background", "isolation", "color", "initialPrompt",
	"omitInstructions", "omitClaudeMd", "autoCompactWindow",
}

// claudeOnlyKeys are keys Claude Code knows that cadre reads but does not
// apply; they get a quieter warning than unknown keys.
var claudeOnlyKeys = []string{
	"observer", "observerMessage", "observeSubagents",
	"observeToolResults", "experimental",
}

// toolsAlias maps a misspelled tools key to the key it stands for
// ("tools" or "disallowedTools"), or "" when k is not one. Treating such a
// key as the author's list keeps a typo from widening what the agent may
// do.
func toolsAlias(k string) string {
	if k == "tools" || k == "disallowedTools" {
		return ""
	}
	switch normKey(k) {
	case "tools", "tool", "allowedtools", "allowedtool", "allowtools":
		return "tools"
	case "disallowedtools", "disallowedtool", "disallowtools", "deniedtools",
		"denytools", "disabledtools", "blockedtools", "excludedtools":
		return "disallowedTools"
	}
	return ""
}

// normKey lowercases a key and drops "-", "_" and spaces.
func normKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r == '-' || r == '_' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Valid values of the enumerated fields.
var (
	validEffort     = []string{string(EffortLow), string(EffortMedium), string(EffortHigh), string(EffortXHigh), string(EffortMax)}
	validMemory     = []string{string(MemoryUser), string(MemoryProject), string(MemoryLocal)}
	validIsolation  = []string{string(IsolationWorktree), string(IsolationRemote)}
	validPermission = []string{
		string(permission.ModeDefault), string(permission.ModeAcceptEdits), string(permission.ModePlan),
		string(permission.ModeDontAsk), string(permission.ModeBypassPermissions), string(permission.ModeAuto),
	}
)

// ParseFile parses one Markdown agent file. It returns nil when the file
// is not an agent (no frontmatter) or cannot be loaded; the diagnostics say
// why, except for a file that simply has no frontmatter, which is treated
// as documentation and passes silently unless it looks like a misplaced
// frontmatter block.
func ParseFile(path string, data []byte, source Source) (*Definition, []Diagnostic) {
	def, diags := parseFile(path, data, source)
	sortByLine(diags) // def.Diagnostics shares the array, so it is sorted too
	return def, diags
}

func parseFile(path string, data []byte, source Source) (*Definition, []Diagnostic) {
	b := &builder{path: path}
	text := normalize(data)
	sp, ok := splitFrontmatter(text)
	if !ok {
		trimmed := strings.TrimLeft(text, " \t\n\r")
		switch {
		case strings.HasPrefix(text, "---"):
			b.warn(1, "frontmatter opened here is never closed by a \"---\" line; the file is not loaded as an agent")
		case trimmed != text && strings.HasPrefix(trimmed, "---"):
			b.warn(lineOf(text, len(text)-len(trimmed)), "frontmatter must start with \"---\" on the first line of the file (found it after blank space); the file is not loaded as an agent")
		}
		return nil, b.diags
	}
	if sp.midLineEnd > 0 {
		b.warn(sp.midLineEnd, "\"---\" inside this line would end the frontmatter in Claude Code, dropping the keys after it; cadre reads on to the \"---\" line, but other tools may not")
	}
	if sp.unclean > 0 {
		b.warn(sp.unclean, "the frontmatter ends at a \"---\" inside this line; put \"---\" on a line of its own")
	}
	fields, isMap, err := parseBlock(sp.block, sp.blockLine)
	if err != nil {
		first := asParseError(err, sp.blockLine)
		requoted, dropped := requote(sp.block)
		fields, isMap, err = parseBlock(requoted, sp.blockLine)
		if err != nil {
			second := asParseError(err, sp.blockLine)
			if pe := checkLimits(requoted, sp.blockLine); pe != nil {
				b.errorf(pe.line, "%s; the file is not loaded", pe.msg)
				return nil, b.diags
			}
			if second.msg == aliasMessage {
				b.errorf(second.line, "%s (expanding them can take unbounded time and memory); the file is not loaded — write the value out", aliasMessage)
				return nil, b.diags
			}
			b.errorf(second.line, "%s; the file is not loaded — indent continuation lines under their key, or write the value as a block scalar (description: |)", explainFailure(text, first, second))
			return nil, b.diags
		}
		if lineStartsWithTab(text, first.line) {
			b.warn(first.line, "frontmatter is not strict YAML: this line is indented with a tab; it was read with each leading tab as two spaces, as Claude Code does — indent with spaces")
		} else {
			b.warn(first.line, "frontmatter is not strict YAML (%s); it was read by quoting the values of top-level keys, as Claude Code does — quote the value to make this explicit", oneLine(first.msg))
		}
		for _, i := range dropped {
			line := sp.blockLine + i
			b.warn(line, "this column-0 line is example text after a one-line description, not a setting; it is ignored rather than read as a key (Claude Code makes it a key) — indent it under the description or use a block scalar (description: |) to keep it")
		}
	}
	if !isMap {
		b.errorf(sp.blockLine, "frontmatter is not a mapping of keys; the file is not loaded")
		return nil, b.diags
	}
	base := strings.TrimSuffix(filepath.Base(path), ".md")
	def := b.build(fields, base, 1, source, false)
	if def == nil {
		return nil, b.diags
	}
	def.Body = sp.body
	def.Path = path
	def.Diagnostics = b.diags
	return def, b.diags
}

// asParseError returns err as a *parseError, placing any other error on
// line.
func asParseError(err error, line int) *parseError {
	var pe *parseError
	if errors.As(err, &pe) {
		return pe
	}
	return &parseError{line: line, msg: err.Error()}
}

// sortByLine orders one file's diagnostics by line, keeping the order of
// those on the same line.
func sortByLine(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Line < ds[j].Line })
}

// explainFailure says why a block failed both the strict parse and the
// quoting fallback, quoting the offending line.
func explainFailure(src string, first, second *parseError) string {
	lines := strings.Split(src, "\n")
	if second.line >= 1 && second.line <= len(lines) {
		ln := lines[second.line-1]
		if _, _, isKey := matchKeyLine(ln); !isKey && ln != "" && ln[0] != ' ' && ln[0] != '\t' {
			return fmt.Sprintf("frontmatter is not valid YAML: this line (%s) is neither a \"key: value\" line nor indented under one, so it cannot continue the value above it (%s)", strconv.Quote(text.Ellipsis(ln, 40)), oneLine(second.msg))
		}
		return fmt.Sprintf("frontmatter is not valid YAML at this line (%s): %s, and quoting the values as Claude Code does not help", strconv.Quote(text.Ellipsis(ln, 40)), oneLine(second.msg))
	}
	return fmt.Sprintf("frontmatter is not valid YAML (line %d: %s; after quoting values, line %d: %s)", first.line, oneLine(first.msg), second.line, oneLine(second.msg))
}

// lineStartsWithTab reports whether the 1-based line of text starts with
// a tab.
func lineStartsWithTab(text string, line int) bool {
	for i := 1; i < line; i++ {
		k := strings.IndexByte(text, '\n')
		if k < 0 {
			return false
		}
		text = text[k+1:]
	}
	return strings.HasPrefix(text, "\t")
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(s), " ")
}

// builder turns fields into a Definition, collecting diagnostics.
type builder struct {
	path  string
	diags []Diagnostic
}

func (b *builder) warn(line int, format string, args ...any) {
	b.diags = append(b.diags, Diagnostic{File: b.path, Line: line, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)})
}

func (b *builder) errorf(line int, format string, args ...any) {
	b.diags = append(b.diags, Diagnostic{File: b.path, Line: line, Severity: SeverityError, Message: fmt.Sprintf(format, args...)})
}

// build validates the fields of one definition. fallbackName is used when
// the name key is missing (the file name, or the JSON object key);
// headLine is where to report file-level problems. fromJSON selects the
// JSON spelling ("prompt" holds the body). It returns nil when the
// definition cannot be loaded; the diagnostics say why.
func (b *builder) build(fields []field, fallbackName string, headLine int, source Source, fromJSON bool) *Definition {
	fs := b.index(fields)
	b.unknownKeys(fs, fromJSON)
	def := &Definition{Source: source}
	var ok bool
	if def.Name, ok = b.name(fs, fallbackName, headLine, fromJSON); !ok {
		return nil
	}
	if def.Description, ok = b.description(fs, def.Name, headLine); !ok {
		return nil
	}
	if !b.toolLists(def, fs) {
		return nil
	}
	b.options(def, fs)
	b.extensions(def, fs, fromJSON)
	if source == SourcePlugin {
		for _, k := range []string{"permissionMode", "hooks", "mcpServers"} {
			if f, ok := fs.byKey[k]; ok {
				b.warn(f.line, "plugin agents cannot set %q; ignored", k)
			}
		}
		def.PermissionMode = ""
		def.Hooks = nil
		def.MCPServers = nil
	}
	return def
}

// fieldSet is a definition's fields by key, with the keys in file order.
type fieldSet struct {
	byKey map[string]field
	order []string
}

// index collects the fields by key; a repeated key keeps its last value,
// with a warning.
func (b *builder) index(fields []field) fieldSet {
	fs := fieldSet{byKey: make(map[string]field, len(fields))}
	for _, f := range fields {
		if prev, dup := fs.byKey[f.key]; dup {
			b.warn(f.line, "key %q is repeated (first on line %d); the last value is used", f.key, prev.line)
		} else {
			fs.order = append(fs.order, f.key)
		}
		fs.byKey[f.key] = f
	}
	return fs
}

// unknownKeys warns about keys that are not fields (misspelled tools keys
// are handled with the tools).
func (b *builder) unknownKeys(fs fieldSet, fromJSON bool) {
	for _, k := range fs.order {
		if slices.Contains(knownKeys, k) || toolsAlias(k) != "" || (fromJSON && k == "prompt") {
			continue
		}
		f := fs.byKey[k]
		switch {
		case slices.Contains(claudeOnlyKeys, k):
			b.warn(f.line, "key %q is a Claude Code setting cadre does not apply; ignored", k)
		case slices.Contains(hookEvents, k):
			b.warn(f.line, "unknown key %q; hook events belong under \"hooks:\" — ignored", k)
		default:
			if s := suggest(k); s != "" {
				b.warn(f.line, "unknown key %q (did you mean %q?); ignored", k, s)
			} else {
				b.warn(f.line, "unknown key %q; ignored", k)
			}
		}
	}
}

// name returns the definition's name; ok is false when it is invalid
// (an error diagnostic says why).
func (b *builder) name(fs fieldSet, fallbackName string, headLine int, fromJSON bool) (name string, ok bool) {
	nameField, hasName := fs.byKey["name"]
	switch {
	case fromJSON:
		name = fallbackName
		if hasName {
			if s, ok := nameField.value.(string); !ok || s != fallbackName {
				b.warn(nameField.line, "\"name\" differs from the object key %q; the key is used", fallbackName)
			}
		}
	case !hasName || nameField.value == nil || nameField.value == "":
		name = fallbackName
		b.warn(headLine, "frontmatter has no \"name\"; loaded as %q from the file name (Claude Code skips this file) — add \"name: %s\"", fallbackName, fallbackName)
	default:
		switch v := nameField.value.(type) {
		case string:
			name = v
		case bool, uint64, int64, float64, json.Number, int:
			name = fmt.Sprint(v)
			b.warn(nameField.line, "\"name\" is not a string; using %q — quote it", name)
		default:
			name = fallbackName
			b.warn(nameField.line, "\"name\" must be a string, not a %s; loaded as %q from the file name", kind(v), fallbackName)
		}
	}
	if msg := checkName(name); msg != "" {
		line := headLine
		if hasName {
			line = nameField.line
		}
		b.errorf(line, "invalid name %q: %s; the agent is not loaded", text.Ellipsis(name, 80), msg)
		return "", false
	}
	return name, true
}

// description returns the definition's description; ok is false when it
// is missing or not a non-empty string.
func (b *builder) description(fs fieldSet, name string, headLine int) (string, bool) {
	df, hasDesc := fs.byKey["description"]
	desc, isStr := df.value.(string)
	switch {
	case !hasDesc:
		b.errorf(headLine, "agent %q has no \"description\"; add one saying when to use the agent — the agent is not loaded", name)
		return "", false
	case !isStr || desc == "":
		b.errorf(df.line, "\"description\" must be a non-empty string (got %s); the agent is not loaded", kind(df.value))
		return "", false
	}
	return strings.ReplaceAll(desc, `\n`, "\n"), true
}

// toolLists reads tools and disallowedTools, with misspelled keys
// standing in. A misspelled tools key is the allow-list when tools is
// absent; every disallowedTools spelling adds to the deny-list. Either way
// a typo never gives the agent more than its author wrote. It returns
// false when a deny-list cannot be read, so the agent is not loaded.
func (b *builder) toolLists(def *Definition, fs fieldSet) bool {
	for _, target := range []string{"tools", "disallowedTools"} {
		var srcs []field
		if f, ok := fs.byKey[target]; ok {
			srcs = append(srcs, f)
		}
		for _, k := range fs.order {
			if toolsAlias(k) != target {
				continue
			}
			alias := fs.byKey[k]
			switch {
			case target == "disallowedTools":
				b.warn(alias.line, "unknown key %q (did you mean %q?); its entries are denied too, as its author meant (Claude Code ignores it) — rename it to %q", k, target, target)
			case len(srcs) > 0:
				b.warn(alias.line, "unknown key %q (did you mean %q?); ignored because %q is set", k, target, srcs[0].key)
				continue
			default:
				b.warn(alias.line, "unknown key %q (did you mean %q?); used as the %s list so the agent gets no more than its author wrote (Claude Code ignores it) — rename it to %q", k, target, target, target)
			}
			srcs = append(srcs, alias)
		}
		for _, f := range srcs {
			entries, valid := b.toolList(f, target)
			if target == "tools" {
				def.Tools = entries
				continue
			}
			if !valid {
				b.errorf(f.line, "%q must be a string or a list of strings, not a %s; the agent is not loaded so it cannot use tools its author meant to deny", f.key, kind(f.value))
				return false
			}
			if def.DisallowedTools == nil {
				def.DisallowedTools = []ToolEntry{}
			}
			def.DisallowedTools = append(def.DisallowedTools, entries...)
		}
	}
	return true
}

// options reads the scalar fields; a bad value drops the field with a
// warning.
func (b *builder) options(def *Definition, fs fieldSet) {
	if f, ok := fs.byKey["model"]; ok {
		switch v := f.value.(type) {
		case string:
			if strings.TrimSpace(v) == "" {
				b.warn(f.line, "\"model\" is empty; ignored — the default model is used")
			} else {
				def.Model = strings.TrimSpace(v)
			}
		case nil:
		default:
			b.warn(f.line, "\"model\" must be a string (an alias such as sonnet, opus, haiku, a model id, or inherit), not a %s; ignored", kind(v))
		}
	}
	def.Effort = Effort(b.enum(fs.byKey, "effort", validEffort))
	if f, ok := fs.byKey["permissionMode"]; ok {
		s, isS := f.value.(string)
		switch {
		case isS && slices.Contains(validPermission, s):
			def.PermissionMode = permission.Mode(s)
		case isS && s == "manual":
			def.PermissionMode = permission.ModeDefault
		case isS && s == string(permission.ModeBubble):
			b.warn(f.line, "permissionMode \"bubble\" is internal to forked agents; ignored — valid values: %s", strings.Join(validPermission, ", "))
		default:
			b.warn(f.line, "invalid permissionMode %s; ignored — valid values: %s", show(f.value), strings.Join(validPermission, ", "))
		}
	}
	if f, ok := fs.byKey["maxTurns"]; ok {
		if n, ok := toInt(f.value); ok && n > 0 {
			def.MaxTurns = n
		} else {
			b.warn(f.line, "invalid maxTurns %s; ignored — it must be a positive whole number", show(f.value))
		}
	}
	if f, ok := fs.byKey["autoCompactWindow"]; ok {
		if n, ok := toInt(f.value); ok && n >= MinCompactWindow {
			def.AutoCompactWindow = int64(n)
		} else {
			b.warn(f.line, "invalid autoCompactWindow %s; ignored — it must be a context window in tokens, %d or more", show(f.value), MinCompactWindow)
		}
	}
	def.Memory = MemoryScope(b.enum(fs.byKey, "memory", validMemory))
	def.Isolation = Isolation(b.enum(fs.byKey, "isolation", validIsolation))
	def.Background = b.boolean(fs.byKey, "background")
	if f, ok := fs.byKey["color"]; ok {
		s, isS := f.value.(string)
		if c := strings.TrimSpace(s); isS && validColor(c) {
			def.Color = c
		} else {
			b.warn(f.line, "invalid color %s; ignored — use a colour name such as red, blue, green, yellow, purple, orange, pink or cyan", show(f.value))
		}
	}
	if f, ok := fs.byKey["initialPrompt"]; ok {
		if s, isS := f.value.(string); isS {
			def.InitialPrompt = s
		} else {
			b.warn(f.line, "\"initialPrompt\" must be a string, not a %s; ignored", kind(f.value))
		}
	}
	def.OmitInstructions = b.boolean(fs.byKey, "omitInstructions")
	if _, ok := fs.byKey["omitClaudeMd"]; ok && !def.OmitInstructions {
		def.OmitInstructions = b.boolean(fs.byKey, "omitClaudeMd")
	}
}

// extensions reads the fields other layers apply (skills, MCP servers,
// hooks) and, in JSON, the prompt.
func (b *builder) extensions(def *Definition, fs fieldSet, fromJSON bool) {
	if f, ok := fs.byKey["skills"]; ok {
		def.Skills = b.names(f, "skills")
	}
	if f, ok := fs.byKey["requiredMcpServers"]; ok {
		def.RequiredMCPServers = b.names(f, "requiredMcpServers")
	}
	if f, ok := fs.byKey["mcpServers"]; ok {
		def.MCPServers = b.mcpServers(f)
	}
	if f, ok := fs.byKey["hooks"]; ok {
		if m, isMap := f.value.(map[string]any); isMap {
			raw, err := json.Marshal(m)
			if err != nil {
				b.warn(f.line, "\"hooks\" cannot be represented as JSON (%v); ignored", err)
			} else {
				def.Hooks = raw
			}
		} else if f.value != nil {
			b.warn(f.line, "\"hooks\" must be a mapping of hook events, not a %s; ignored", kind(f.value))
		}
	}
	if f, ok := fs.byKey["prompt"]; ok && fromJSON {
		if s, isS := f.value.(string); isS {
			def.Body = strings.TrimSpace(s)
		} else {
			b.warn(f.line, "\"prompt\" must be a string, not a %s; ignored", kind(f.value))
		}
	}
}

// validColor accepts a colour name (letters and "-") or a #hex value.
func validColor(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	if c[0] == '#' {
		for _, r := range c[1:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
		return len(c) == 4 || len(c) == 7
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
			return false
		}
	}
	return true
}

// checkName returns why a name is invalid, or "".
func checkName(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "it is empty"
	case strings.HasPrefix(name, "-"):
		return "it must not start with \"-\""
	case len([]rune(name)) > MaxNameLen:
		return fmt.Sprintf("it is longer than %d characters", MaxNameLen)
	case strings.ContainsAny(name, ":\uFF1A\uFE55\uFE13\u2A74"):
		return "\":\" is reserved for plugin namespaces (plugin:name)"
	}
	return pathUnsafe(name)
}

// toolList parses a tools or disallowedTools value. valid is false when
// the value has the wrong type; entries is then empty (never nil), so an
// invalid tools value gives no tools rather than all.
func (b *builder) toolList(f field, key string) (entries []ToolEntry, valid bool) {
	entries = []ToolEntry{}
	switch v := f.value.(type) {
	case nil:
		if key == "tools" {
			b.warn(f.line, "\"tools\" is empty, so this agent gets no tools (Claude Code would give it every tool) — remove the key to inherit every tool, or write tools: \"*\"")
		}
		return entries, true
	case string:
		if strings.TrimSpace(v) == "" && key == "tools" {
			b.warn(f.line, "\"tools\" is empty, so this agent gets no tools (Claude Code would give it every tool) — remove the key to inherit every tool, or write tools: \"*\"")
		}
		for _, s := range splitOutsideParens(v) {
			entries = append(entries, ParseToolEntry(s))
		}
	case []any:
		if len(v) == 0 && key == "tools" {
			b.warn(f.line, "\"tools: []\" gives this agent no tools (Claude Code treats an empty list as every tool) — remove the key to inherit every tool, or write tools: \"*\"")
		}
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				b.warn(f.line, "%s entry %s is not a string; ignored", key, show(item))
				continue
			}
			for _, part := range splitOutsideParens(s) {
				entries = append(entries, ParseToolEntry(part))
			}
		}
	default:
		if key == "tools" {
			b.warn(f.line, "\"tools\" must be a string or a list of strings, not a %s; the agent gets no tools until this is fixed", kind(v))
		}
		return entries, false
	}
	if key == "disallowedTools" && hasRaw(entries, "*") {
		b.warn(f.line, "disallowedTools contains \"*\", which denies every tool")
	}
	b.unknownTools(f.line, key, entries)
	return entries, true
}

// unknownTools warns about entries that name no tool cadre knows (the
// registry in package tool; MCP tools are known by their prefix): such an
// entry matches nothing.
func (b *builder) unknownTools(line int, key string, entries []ToolEntry) {
	effect := "the agent does not get it"
	if key == "disallowedTools" {
		effect = "it denies nothing"
	}
	for _, e := range entries {
		if e.IsWildcard() || e.IsMCP() {
			continue
		}
		if _, known := tool.Lookup(e.Name); known {
			continue
		}
		if s := closest(e.Name, tool.Known()); s != "" {
			b.warn(line, "%s entry %q names no tool cadre knows (did you mean %q?); %s", key, e.Raw, s, effect)
		} else {
			b.warn(line, "%s entry %q names no tool cadre knows; %s", key, e.Raw, effect)
		}
	}
}

// closest returns the candidate nearest to name (case aside), if close
// enough to be a likely misspelling.
func closest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := textdist.Distance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD == 0 || bestD <= max(1, len(name)/4) {
		return best
	}
	return ""
}

// names parses a list of names given as a list or a comma/space-separated
// string.
func (b *builder) names(f field, key string) []string {
	var out []string
	switch v := f.value.(type) {
	case nil:
		return nil
	case string:
		out = append(out, splitOutsideParens(v)...)
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				b.warn(f.line, "%s entry %s is not a string; ignored", key, show(item))
				continue
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	default:
		b.warn(f.line, "%q must be a string or a list of strings, not a %s; ignored", key, kind(v))
	}
	return out
}

// mcpServers keeps each server reference as raw JSON: a name string or an
// inline {"name": config} object.
func (b *builder) mcpServers(f field) []json.RawMessage {
	var items []any
	switch v := f.value.(type) {
	case nil:
		return nil
	case string:
		for _, s := range splitOutsideParens(v) {
			items = append(items, s)
		}
	case []any:
		items = v
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			items = append(items, map[string]any{k: v[k]})
		}
	default:
		b.warn(f.line, "\"mcpServers\" must be a list of server names or inline configs, not a %s; ignored", kind(v))
		return nil
	}
	var out []json.RawMessage
	for _, item := range items {
		switch item.(type) {
		case string, map[string]any:
			raw, err := json.Marshal(item)
			if err != nil {
				b.warn(f.line, "mcpServers entry cannot be represented as JSON (%v); ignored", err)
				continue
			}
			out = append(out, raw)
		default:
			b.warn(f.line, "mcpServers entry %s must be a server name or a {name: config} mapping; ignored", show(item))
		}
	}
	return out
}

func (b *builder) enum(byKey map[string]field, key string, valid []string) string {
	f, ok := byKey[key]
	if !ok {
		return ""
	}
	if s, isS := f.value.(string); isS && slices.Contains(valid, s) {
		return s
	}
	b.warn(f.line, "invalid %s %s; ignored — valid values: %s", key, show(f.value), strings.Join(valid, ", "))
	return ""
}

func (b *builder) boolean(byKey map[string]field, key string) bool {
	f, ok := byKey[key]
	if !ok {
		return false
	}
	switch v := f.value.(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true
		case "false":
			return false
		}
	}
	b.warn(f.line, "invalid %s %s; ignored — use true or false", key, show(f.value))
	return false
}

// toInt converts a decoded YAML or JSON number (or a string of digits) to
// an int.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case uint64:
		if n <= math.MaxInt32 {
			return int(n), true
		}
	case int64:
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return int(n), true
		}
	case int:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= math.MaxInt32 {
			return int(n), true
		}
	case json.Number:
		if i, err := n.Int64(); err == nil && i >= math.MinInt32 && i <= math.MaxInt32 {
			return int(i), true
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
			return i, true
		}
	}
	return 0, false
}

// kind names a decoded value's type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case uint64, int64, int, float64, json.Number:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// show renders a value for a message.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(text.Ellipsis(x, 60))
	case nil:
		return "(empty)"
	case []any, map[string]any:
		return "(a " + kind(v) + ")"
	}
	return text.Ellipsis(fmt.Sprint(v), 60)
}

// splitOutsideParens splits s on commas and white space, except inside
// parentheses: "Read, Bash(git diff:*, git log) Grep" gives three items.
// Groups do not nest; an unclosed "(" runs to the end.
func splitOutsideParens(s string) []string {
	var out []string
	start := -1
	depth := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth:
			if c == ')' {
				depth = false
			}
		case c == '(':
			depth = true
			if start < 0 {
				start = i
			}
		case c == ',' || isSpace(c):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// hookEvents are hook event names, which belong under hooks:.
var hookEvents = []string{
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStart",
	"SubagentStop", "UserPromptSubmit", "SessionStart", "SessionEnd",
	"PermissionRequest", "WorktreeCreate", "WorktreeRemove", "Notification",
	"PreCompact", "TeammateIdle", "TaskCreated", "TaskCompleted",
}

// suggest returns the known key closest to k, or "" when none is close.
func suggest(k string) string {
	nk := normKey(k)
	best, bestD := "", 1<<30
	for _, cand := range knownKeys {
		nc := normKey(cand)
		if nc == nk {
			return cand
		}
		d := textdist.Distance(nk, nc)
		if d < bestD {
			best, bestD = cand, d
		}
	}
	limit := 1
	if len(nk) >= 5 {
		limit = 2
	}
	if bestD <= limit {
		return best
	}
	return ""
}
