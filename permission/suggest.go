package permission

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/tool"
)

// subcommandTools are commands whose second word picks what they do, so a
// suggested prefix keeps it (`npm test:*`, `git log:*`).
var subcommandTools = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "go": true, "cargo": true,
		"docker": true, "kubectl": true, "make": true, "pip": true, "pip3": true, "uv": true,
		"poetry": true, "gh": true, "dotnet": true, "mvn": true, "gradle": true, "bundle": true,
		"rake": true, "npx": true, "deno": true, "terraform": true, "helm": true,
	}
})

// SuggestRule returns the allow rule that would let the request run, for
// prompts and denial messages: `Bash(npm test:*)` for the first command no
// rule allows, `Edit(./src/x.go)` or `Read(//abs/path)` for files, the
// tool name otherwise. ok is false when no single rule can help (an
// unparseable command).
func SuggestRule(req Request) (Rule, bool) {
	s, _, err := subjectOf(req)
	if err != nil || !isObject(req.Input) {
		return Rule{}, false
	}
	tname := canonicalTool(req.Tool)
	switch {
	case tname == tool.Bash:
		script, err := SplitBash(s.Content)
		if err != nil || len(script.Uncertain) > 0 || len(script.Commands) == 0 {
			return Rule{}, false
		}
		for _, c := range script.Commands {
			if _, ro := readOnlyCommand(c); ro {
				continue
			}
			return Rule{Behavior: Allow, Tool: tool.Bash, Content: bashPrefix(c)}, true
		}
		return Rule{Behavior: Allow, Tool: tool.Bash, Content: bashPrefix(script.Commands[0])}, true
	case isEditTool(tname) || isReadTool(tname):
		var p string
		if len(s.Paths) > 0 {
			p = s.Paths[0]
		}
		if p == "" {
			p = req.Cwd
		}
		lex, _ := resolvePath(p, req.Cwd, "")
		rt := tool.Read
		if isEditTool(tname) {
			rt = tool.Edit
		}
		content := "/" + lex
		if req.Cwd != "" && inside(lex, req.Cwd) {
			rel, err := filepath.Rel(req.Cwd, lex)
			if err == nil {
				content = "./" + filepath.ToSlash(rel)
			}
		}
		if tname == tool.Glob || tname == tool.Grep || tname == tool.LS {
			content = strings.TrimSuffix(content, "/") + "/**"
		}
		return Rule{Behavior: Allow, Tool: rt, Content: content}, true
	case tname == tool.Agent:
		t := s.AgentType
		if t == "" {
			t = "general-purpose"
		}
		return Rule{Behavior: Allow, Tool: tool.Agent, Content: t}, true
	case tname == tool.WebFetch:
		if h := hostOf(s.URL); h != "" {
			return Rule{Behavior: Allow, Tool: tool.WebFetch, Content: "domain:" + h}, true
		}
	}
	return Rule{Behavior: Allow, Tool: req.Tool}, true
}

func bashPrefix(c Command) string {
	var words []string
	for i, a := range c.Args {
		if i >= 2 || !a.Static || a.Glob || strings.ContainsAny(a.Value, " \t\n()\\") {
			break
		}
		if i == 1 && (!subcommandTools()[c.Args[0].Value] || strings.HasPrefix(a.Value, "-")) {
			break
		}
		words = append(words, a.Value)
	}
	if len(words) == 0 {
		return c.String()
	}
	return strings.Join(words, " ") + ":*"
}
