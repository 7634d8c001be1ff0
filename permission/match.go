package permission

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"mvdan.cc/sh/v3/syntax"
)

// bashPattern is the compiled content of a Bash rule.
type bashPattern struct {
	kind  int      // patPrefix, patExact or patGlob
	words []string // prefix and exact
	glob  string   // glob
}

const (
	patPrefix = iota
	patExact
	patGlob
)

func compileBash(content string) bashPattern {
	if strings.HasSuffix(content, ":*") {
		return bashPattern{kind: patPrefix, words: patternWords(strings.TrimSuffix(content, ":*"))}
	}
	if strings.Contains(strings.ReplaceAll(content, `\*`, ""), "*") {
		return bashPattern{kind: patGlob, glob: strings.TrimSpace(content)}
	}
	return bashPattern{kind: patExact, words: patternWords(content)}
}

// patternWords splits a rule's command into words with the shell's quote
// rules, so `Bash(git commit -m "a b")` compares word by word.
func patternWords(s string) []string {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	if f, err := p.Parse(strings.NewReader(s), ""); err == nil && len(f.Stmts) == 1 {
		if call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(call.Assigns) == 0 && len(f.Stmts[0].Redirs) == 0 {
			words := make([]string, 0, len(call.Args))
			static := true
			for _, w := range call.Args {
				a := wordArg(w)
				static = static && a.Static
				words = append(words, a.Value)
			}
			if static {
				return words
			}
		}
	}
	return strings.Fields(s)
}

// mustMatch reports whether the command certainly matches: every word the
// pattern looks at is known. Used for allow rules.
func (p bashPattern) mustMatch(c Command) bool {
	switch p.kind {
	case patPrefix, patExact:
		if len(c.Args) < len(p.words) || (p.kind == patExact && len(c.Args) != len(p.words)) {
			return false
		}
		n := len(p.words)
		if p.kind == patExact {
			n = len(c.Args)
		}
		for i := 0; i < n; i++ {
			a := c.Args[i]
			if !a.Static || a.Glob || a.Value != p.words[i] {
				return false
			}
		}
		return true
	default:
		if len(c.Args) == 0 || !c.Args[0].Static || c.Args[0].Glob {
			return false
		}
		return globMatch(p.glob, c.String())
	}
}

// mayMatch reports whether the command could match once expansions are
// known: an unknown word matches anything, and a command name matches by
// its base name (`/bin/rm` is `rm`). Used for deny and ask rules.
func (p bashPattern) mayMatch(c Command) bool {
	if len(c.Args) == 0 {
		return false
	}
	args := append([]Arg(nil), c.Args...)
	if a := args[0]; a.Static && strings.Contains(a.Value, "/") {
		args[0].Value = path.Base(a.Value)
	}
	switch p.kind {
	case patPrefix, patExact:
		for i, w := range p.words {
			if i >= len(args) {
				return false
			}
			a := args[i]
			if !a.Static || a.Glob {
				return true
			}
			if a.Value != w {
				return false
			}
		}
		if p.kind == patExact && len(args) > len(p.words) {
			return false
		}
		return true
	default:
		for i, a := range args {
			if !a.Static || a.Glob {
				// Compare only what is known: the words before the first
				// unknown one must be consistent with the pattern.
				prefix := Command{Args: args[:i]}.String()
				if i > 0 {
					prefix += " "
				}
				return globCanExtend(p.glob, prefix)
			}
		}
		return globMatch(p.glob, Command{Args: args}.String()) || globMatch(p.glob, c.String())
	}
}

// globCanExtend reports whether some string starting with prefix matches
// the glob. When the search would be too large it answers true, which is
// the safe answer for deny and ask rules.
func globCanExtend(pattern, prefix string) bool {
	type tok struct {
		star bool
		c    byte
	}
	var pat []tok
	for i := 0; i < len(pattern); i++ {
		switch {
		case pattern[i] == '\\' && i+1 < len(pattern) && pattern[i+1] == '*':
			pat = append(pat, tok{c: '*'})
			i++
		case pattern[i] == '*':
			pat = append(pat, tok{star: true})
		default:
			pat = append(pat, tok{c: pattern[i]})
		}
	}
	if (len(pat)+1)*(len(prefix)+1) > 1<<20 {
		return true
	}
	// reach[j] is true when pattern position j can be reached having
	// consumed the prefix so far.
	reach := make([]bool, len(pat)+1)
	reach[0] = true
	closeStars := func() {
		for j := 0; j < len(pat); j++ {
			if reach[j] && pat[j].star {
				reach[j+1] = true
			}
		}
	}
	closeStars()
	for i := 0; i < len(prefix); i++ {
		next := make([]bool, len(pat)+1)
		any := false
		for j := 0; j < len(pat); j++ {
			if !reach[j] {
				continue
			}
			if pat[j].star {
				next[j] = true
				any = true
			} else if pat[j].c == prefix[i] {
				next[j+1] = true
				any = true
			}
		}
		if !any {
			return false
		}
		reach = next
		closeStars()
	}
	return true
}

// globMatch matches s against a pattern where `*` matches any run of
// characters (spaces included) and `\*` a literal star. A pattern ending in
// ` *` also matches the command with no further words (`git *` ~ `git`).
func globMatch(pattern, s string) bool {
	if strings.HasSuffix(pattern, " *") && !strings.HasSuffix(pattern, `\ *`) && globMatch(strings.TrimSuffix(pattern, " *"), s) {
		return true
	}
	var segs []string
	var cur strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch {
		case pattern[i] == '\\' && i+1 < len(pattern) && pattern[i+1] == '*':
			cur.WriteByte('*')
			i++
		case pattern[i] == '*':
			segs = append(segs, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(pattern[i])
		}
	}
	segs = append(segs, cur.String())
	if len(segs) == 1 {
		return s == segs[0]
	}
	if !strings.HasPrefix(s, segs[0]) {
		return false
	}
	s = s[len(segs[0]):]
	last := segs[len(segs)-1]
	for _, seg := range segs[1 : len(segs)-1] {
		i := strings.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	return strings.HasSuffix(s, last)
}

// pathPatterns compiles a path rule's content into absolute doublestar
// patterns, gitignore style: `//abs` is absolute, `~/x` is under home, `/x`
// and `./x` and `x/y` are anchored at base, a bare `x` matches at any depth
// below base, and a trailing `/` means everything under it.
func pathPatterns(content, base, home string) []string {
	// base and home are literal directories: a project in "a[1]" or
	// "{x}" must not turn into a pattern.
	base, home = escapeMeta(base), escapeMeta(home)
	c := content
	dirOnly := strings.HasSuffix(c, "/") && len(c) > 1
	c = strings.TrimSuffix(c, "/")
	var abs string
	switch {
	case strings.HasPrefix(c, "//"):
		abs = "/" + strings.TrimLeft(c, "/")
	case c == "~" || strings.HasPrefix(c, "~/"):
		abs = home + strings.TrimPrefix(c, "~")
	case strings.HasPrefix(c, "/"):
		abs = base + c
	case strings.HasPrefix(c, "./") || c == ".":
		abs = base + "/" + strings.TrimPrefix(strings.TrimPrefix(c, "."), "/")
	case strings.Contains(c, "/"):
		abs = base + "/" + c
	default:
		abs = base + "/**/" + c
	}
	abs = cleanPattern(abs)
	if dirOnly {
		abs = strings.TrimSuffix(abs, "/") + "/**"
	}
	return []string{abs}
}

// escapeMeta escapes the characters doublestar reads as pattern syntax,
// so a literal path matches only itself.
func escapeMeta(s string) string {
	if !strings.ContainsAny(s, `*?[]{}\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// splitPattern splits an absolute pattern into its literal directory
// part — the leading components without pattern syntax, unescaped, at or
// below which everything it matches lies — and the rest ("" when the
// whole pattern is literal, else starting with "/").
func splitPattern(pat string) (fixed, rest string) {
	parts := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	var lit []string
	for i, p := range parts {
		if hasMeta(p) {
			return "/" + strings.Join(lit, "/"), "/" + strings.Join(parts[i:], "/")
		}
		lit = append(lit, unescapeMeta(p))
	}
	return filepath.Clean("/" + strings.Join(lit, "/")), ""
}

// hasMeta reports pattern syntax that is not escaped.
func hasMeta(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

// unescapeMeta drops the backslashes of escaped characters.
func unescapeMeta(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// cleanPattern cleans the literal part of a glob without touching `**`.
func cleanPattern(p string) string {
	i := strings.IndexAny(p, "*?[{")
	if i < 0 {
		return filepath.Clean(p)
	}
	head := p[:i]
	j := strings.LastIndexByte(head, '/')
	if j < 0 {
		return p
	}
	return strings.TrimSuffix(filepath.Clean(head[:j+1]), "/") + "/" + p[j+1:]
}

// pathMatches reports whether p or any directory above it matches one of
// the patterns (gitignore: excluding a directory excludes its contents).
func pathMatches(patterns []string, p string) bool {
	for cur := p; ; {
		for _, pat := range patterns {
			if ok, err := doublestar.Match(pat, cur); err == nil && ok {
				return true
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return false
		}
		cur = parent
	}
}

// resolvePath returns the cleaned absolute path and the same path with
// symlinks resolved (as far as the path exists). `~` and `~/…` are under
// home, `~+` and `~+/…` under cwd.
func resolvePath(p, cwd, home string) (lexical, real string) {
	lexical = lexicalPath(p, cwd, home)
	return lexical, evalExisting(lexical)
}

// lexicalPath is resolvePath's lexical part: p with ~ and ~+ expanded,
// made absolute against cwd and cleaned.
func lexicalPath(p, cwd, home string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = home + strings.TrimPrefix(p, "~")
	case p == "~+" || strings.HasPrefix(p, "~+/"):
		// Bash expands ~+ to $PWD.
		p = cwd + strings.TrimPrefix(p, "~+")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// evalExisting resolves symlinks in the longest existing prefix of p and
// appends the rest.
func evalExisting(p string) string {
	if filepath.IsAbs(p) {
		if r, ok := realPath(p); ok {
			return r // p exists: what EvalSymlinks(p) returns, cheaper
		}
	}
	rest := ""
	cur := p
	for i := 0; i < 256; i++ {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		if _, err := os.Lstat(cur); err == nil {
			// Exists but cannot be resolved (a symlink loop or a dangling
			// link): keep it as is; the lexical path is matched too.
			return p
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	return p
}

// inside reports whether p is dir or below it.
func inside(p, dir string) bool {
	if dir == "" {
		return false
	}
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// hostMatches matches a WebFetch `domain:` rule against a URL.
func hostMatches(domain, rawURL string) bool {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Hostname() == "" {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	d := strings.ToLower(domain)
	if strings.HasPrefix(d, "*.") {
		return strings.HasSuffix(h, d[1:])
	}
	return h == d
}

// globRoot returns the directory a Glob pattern can reach: the static
// prefix of the pattern joined to the search path. ok is false when a `..`
// follows a wildcard, so the reach cannot be bounded.
func globRoot(pattern, dir string) (string, bool) {
	p := pattern
	i := strings.IndexAny(p, "*?[{")
	static := p
	if i >= 0 {
		static = p[:i]
		if strings.Contains(p[i:], "..") {
			// `*/../..` or `{../..,x}` can climb anywhere.
			return "", false
		}
		if j := strings.LastIndexByte(static, '/'); j >= 0 {
			static = static[:j+1]
		} else {
			static = ""
		}
	}
	if filepath.IsAbs(static) {
		return filepath.Clean(static), true
	}
	return filepath.Clean(filepath.Join(dir, static)), true
}

// hostOf returns the lower-case host of a URL, or "".
func hostOf(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
