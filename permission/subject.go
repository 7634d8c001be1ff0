package permission

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

// subjectOf returns what the request's call acts on, as its tool declares
// it: the request's Declarer, or else the declaration of the tool cadre
// defines under that name. declared is false when there is none.
func subjectOf(req Request) (s tool.Subject, declared bool, err error) {
	if req.Declarer != nil {
		s, err = req.Declarer.Subject(req.Input)
		return s, true, err
	}
	if f := tool.BuiltinSubject(canonicalTool(req.Tool)); f != nil {
		s, err = f(req.Input)
		return s, true, err
	}
	return tool.Subject{}, false, nil
}

// isObject reports an input that is a JSON object, null or empty: what a
// tool call's input may be.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return true
	}
	return t[0] == '{' && json.Valid(t)
}

// declaredMatcher matches the content rules of a tool that declares its
// subject: a rule matches when its content, with `*` for any run of
// characters, matches the declared content, or when it matches the
// declared paths as a path rule does (`MyTool(./src/**)`) — any of them
// for deny and ask, every one of them for allow.
func (c *Checker) declaredMatcher(s tool.Subject, e *env) func(Rule) bool {
	var paths []pathCandidate
	for _, p := range s.Paths {
		lex, real := resolvePath(p, e.cwd, e.home)
		paths = append(paths, pathCandidate{lexical: lex, real: real})
	}
	return func(r Rule) bool {
		if s.Content != "" && wildcardMatch(r.Content, s.Content) {
			return true
		}
		if len(paths) == 0 {
			return false
		}
		for _, p := range paths {
			m := c.pathRuleMatches(r, e, p)
			if r.Behavior == Allow && !m {
				return false
			}
			if r.Behavior != Allow && m {
				return true
			}
		}
		return r.Behavior == Allow
	}
}

// wildcardMatch matches s against pattern, where `*` stands for any run
// of characters and everything else for itself.
func wildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
