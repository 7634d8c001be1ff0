package permission

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/tool"
)

// Sources used for rules that do not come from a settings file.
const (
	SourceAllowedTools    = "--allowedTools"
	SourceDisallowedTools = "--disallowedTools"
	SourceCLI             = "cli"
	SourceSession         = "session"
)

// Rule is one allow, ask or deny rule (S-10.2): a tool name, optionally
// with content that narrows it (`Bash(npm test:*)`, `Read(./src/**)`,
// `Agent(Explore)`, `WebFetch(domain:x.com)`), and where it came from.
type Rule struct {
	// Behavior is what the rule does when it matches.
	Behavior Behavior `json:"behavior,omitempty"`
	// Tool is the tool name as written (`Task` stays `Task`).
	Tool string `json:"tool"`
	// Content is the text inside the parentheses, unescaped; "" for a rule
	// on the whole tool.
	Content string `json:"content,omitempty"`
	// Source is the settings file path or flag the rule came from.
	Source string `json:"source,omitempty"`
	// Base is the directory relative path patterns are anchored to (the
	// project root for project settings files); "" means the working
	// directory of the request.
	Base string `json:"base,omitempty"`
}

// String renders the rule as it would be written in a settings file.
func (r Rule) String() string {
	if r.Content == "" {
		return r.Tool
	}
	c := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(r.Content)
	return r.Tool + "(" + c + ")"
}

// Label is the rule with its behaviour and source, for messages.
func (r Rule) Label() string {
	s := r.String()
	if r.Source != "" {
		s += " from " + r.Source
	}
	return s
}

var (
	toolNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`) })
	mcpNameRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^mcp__(\*|[A-Za-z0-9_.-]+?(__(\*|[A-Za-z0-9_.-]+))?)$`)
	})
)

// maxRuleLen bounds a rule's length; nothing real comes close.
const maxRuleLen = 8192

// ParseRule parses one rule as written in settings or flags: `Tool` or
// `Tool(content)`, with `\(` and `\)` escaping parentheses in content.
// `Tool()` and `Tool(*)` mean the whole tool. The result has no Behavior
// or Source; see ParseRules.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, fmt.Errorf("empty rule")
	}
	if len(s) > maxRuleLen {
		return Rule{}, fmt.Errorf("rule longer than %d bytes", maxRuleLen)
	}
	open := strings.IndexByte(s, '(')
	name, content := s, ""
	if open >= 0 {
		if !strings.HasSuffix(s, ")") || len(s) < open+2 {
			return Rule{}, fmt.Errorf("rule %q: missing closing parenthesis", s)
		}
		name = strings.TrimSpace(s[:open])
		raw := s[open+1 : len(s)-1]
		var err error
		content, err = unescapeContent(raw)
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %w", s, err)
		}
		content = strings.TrimSpace(content)
		if content == "*" {
			content = ""
		}
	} else if strings.ContainsAny(s, ")") {
		return Rule{}, fmt.Errorf("rule %q: unbalanced parenthesis", s)
	}
	if strings.HasPrefix(name, tool.MCPPrefix) {
		if !mcpNameRE().MatchString(name) {
			return Rule{}, fmt.Errorf("rule %q: bad MCP tool name (want mcp__server, mcp__server__tool, mcp__server__* or mcp__*)", s)
		}
	} else if !toolNameRE().MatchString(name) {
		return Rule{}, fmt.Errorf("rule %q: bad tool name %q", s, name)
	}
	r := Rule{Tool: name, Content: content}
	if err := validateContent(r); err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	return r, nil
}

func unescapeContent(raw string) (string, error) {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) && (raw[i+1] == '(' || raw[i+1] == ')' || raw[i+1] == '\\') {
			i++
			b.WriteByte(raw[i])
			continue
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return "", fmt.Errorf("unbalanced parenthesis in content")
			}
		}
		b.WriteByte(c)
	}
	if depth != 0 {
		return "", fmt.Errorf("unbalanced parenthesis in content")
	}
	return b.String(), nil
}

func validateContent(r Rule) error {
	if r.Content == "" {
		return nil
	}
	switch canonicalTool(r.Tool) {
	case tool.Bash:
		if strings.Contains(strings.TrimSuffix(r.Content, ":*"), ":*") {
			return fmt.Errorf("`:*` is only allowed at the end of a Bash rule")
		}
		if strings.TrimSpace(strings.TrimSuffix(r.Content, ":*")) == "" {
			return fmt.Errorf("empty command prefix")
		}
	case tool.WebFetch:
		if !strings.HasPrefix(r.Content, "domain:") || strings.TrimPrefix(r.Content, "domain:") == "" {
			return fmt.Errorf("WebFetch rules take `domain:HOST`")
		}
	case tool.Agent:
		for _, t := range strings.Split(r.Content, ",") {
			if strings.TrimSpace(t) == "" {
				return fmt.Errorf("empty agent type")
			}
		}
	}
	return nil
}

// ParseRules parses rules and stamps each with behaviour, source and base.
func ParseRules(b Behavior, source, base string, rules []string) ([]Rule, error) {
	out := make([]Rule, 0, len(rules))
	for _, s := range rules {
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		r.Behavior, r.Source, r.Base = b, source, base
		out = append(out, r)
	}
	return out, nil
}

// SplitToolList splits a flag or frontmatter tool list the way Claude Code
// does: on commas and whitespace outside parentheses. Empty items vanish.
func SplitToolList(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && depth > 0:
			cur.WriteByte(c)
			i++
			cur.WriteByte(s[i])
			continue
		case c == '(':
			depth++
		case c == ')':
			if depth > 0 {
				depth--
			}
		case (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') && depth == 0:
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// canonicalTool maps aliases to the tool they name (`Task` → `Agent`).
func canonicalTool(name string) string { return tool.Canonical(name) }

// caseVariant returns the known tool name that name differs from only by
// case, or "".
func caseVariant(name string) string { return tool.FoldVariant(name) }

// toolMatches reports whether a rule's tool name selects the requested
// tool, following MCP wildcards and the Task alias. Names are
// case-sensitive.
func toolMatches(ruleTool, tname string) bool {
	rt, t := canonicalTool(ruleTool), canonicalTool(tname)
	if rt == t {
		return true
	}
	if !tool.IsMCP(rt) || !tool.IsMCP(t) {
		return false
	}
	if rt == "mcp__*" {
		return true
	}
	server, rtool, hasTool := strings.Cut(strings.TrimPrefix(rt, tool.MCPPrefix), "__")
	tserver, _, _ := strings.Cut(strings.TrimPrefix(t, tool.MCPPrefix), "__")
	if server != tserver {
		return false
	}
	return !hasTool || rtool == "*"
}

// toolSelects is toolMatches for a call whose subject names the MCP
// server it goes to: mcp__server and mcp__server__* rules are compared
// with the declared server, so a server whose name contains "__" is not
// misread. Without a server it is toolMatches.
func toolSelects(ruleTool, tname, server string) bool {
	if server == "" || !tool.IsMCP(ruleTool) || !tool.IsMCP(tname) {
		return toolMatches(ruleTool, tname)
	}
	return ruleTool == tname || ruleTool == "mcp__*" || ruleTool == tool.MCPPrefix+server || ruleTool == tool.MCPPrefix+server+"__*"
}

// isEditTool and isReadTool report the tools path rules apply to: an Edit
// rule covers every file-writing tool, a Read rule every file-reading one.
func isEditTool(name string) bool { return tool.InCategory(name, tool.CategoryEdit) }
func isReadTool(name string) bool { return tool.InCategory(name, tool.CategoryRead) }

// sameCategory reports whether a path rule on ruleTool covers tool.
func sameCategory(ruleTool, tname string) bool {
	return (isEditTool(ruleTool) && isEditTool(tname)) || (isReadTool(ruleTool) && isReadTool(tname))
}
