package permission

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Deny rules bind Bash (S-10.5): a command that may read a path a Read
// deny rule protects, or write one an Edit deny rule protects, is never
// allowed without asking unless the sandbox will hold the rule for it.
// A path word the checker can resolve is matched against the rules
// directly (deniedPathRule); this file finds the commands that may touch
// such a path without naming it: words only known when the shell runs,
// globs, recursive readers, git commands that print file contents,
// interpreters given code inline, and programs cadre knows nothing about.

// maxGlobMatches bounds the expansion of one glob word; a broader glob is
// treated as reaching everything below its directory.
const maxGlobMatches = 4096

// wordPaths returns the paths a word names: the resolved path of a static
// word, the present matches of a glob (as the shell would expand it), or
// nothing for a word only known when the shell runs.
func (c contentCheck) wordPaths(a Arg, e *env) []pathCandidate {
	if !a.Static {
		return nil
	}
	lex, real := resolvePath(a.Value, e.cwd, e.home)
	out := []pathCandidate{{lexical: lex, real: real}}
	if !a.Glob {
		return out
	}
	matches, err := filepath.Glob(lex)
	if err != nil {
		return out
	}
	if len(matches) > maxGlobMatches {
		matches = matches[:maxGlobMatches]
	}
	for _, m := range matches {
		out = append(out, pathCandidate{lexical: m, real: evalExisting(m)})
	}
	return out
}

// contentRule returns the first rule of behaviour b on tool name's
// category with content (a path rule) that covers p.
func (c contentCheck) contentRule(b Behavior, name string, e *env, p pathCandidate) *Rule {
	r := c.firstMatch(b, name, func(r Rule) bool { return r.Content != "" && c.pathRuleMatches(r, e, p) })
	if r == nil || r.Content == "" {
		return nil
	}
	return r
}

// firstContentRule returns the first deny rule with content on the
// category of name (Read or Edit), or nil.
func (c contentCheck) firstContentRule(name string) *Rule {
	for _, r := range c.rulesFor(Deny, name) {
		if r.Content != "" {
			return &r
		}
	}
	return nil
}

// exposureCheck holds what bashExposure looks for in one script.
type exposureCheck struct {
	c contentCheck
	// readRule and editRule are a Read and an Edit deny rule with content
	// the script could get around; nil when there is none or the sandbox
	// holds them.
	readRule, editRule *Rule
	// historyRule is a Read deny rule with content even with the sandbox
	// on: it masks files, not the copies in a repository's history.
	historyRule *Rule
	envs        []*env
}

// bashExposure says why the script may read a path a Read deny rule
// protects, or write one an Edit deny rule protects, without naming it;
// "" when it cannot, or when the sandbox holds the rules for it.
func (c contentCheck) bashExposure(script *Script, sf scriptFacts, envs []*env, dirsKnown bool) string {
	x := exposureCheck{c: c, envs: envs, readRule: c.firstContentRule(tool.Read), editRule: c.firstContentRule(tool.Edit)}
	x.historyRule = x.readRule
	if c.cfg.Sandbox != nil {
		// The sandbox masks every path Read deny rules cover, and makes
		// read-only what Edit deny rules cover when it can.
		x.readRule = nil
		if c.sandboxHoldsEditRules(envs[0]) {
			x.editRule = nil
		}
	}
	if x.historyRule != nil {
		for _, sc := range script.Commands {
			if !dirsKnown && sc.Name() == "git" && gitPrintsContent(sc) {
				return x.say(x.historyRule, false, prompts.PermGitUnknownRepo(sc.String()))
			}
			if msg := x.gitContent(sc); msg != "" {
				return msg
			}
		}
	}
	if x.readRule == nil && x.editRule == nil {
		return ""
	}
	if !dirsKnown {
		return x.say(x.anyRule(), false, prompts.PermUnknownDirectory)
	}
	if x.readRule != nil {
		for _, a := range script.Reads {
			if !a.Static || indirectPath(a.Value) {
				return x.say(x.readRule, false, prompts.PermReadsUnresolved(a.Value))
			}
		}
	}
	if x.editRule != nil {
		for _, w := range append(append([]Arg(nil), script.Writes...), sf.editPaths...) {
			if !w.Static || w.Glob {
				return x.say(x.editRule, false, prompts.PermWritesUnresolved(w.Value))
			}
		}
	}
	for _, sc := range script.Commands {
		if msg := x.command(sc); msg != "" {
			return msg
		}
	}
	return ""
}

// anyRule returns the read rule, else the edit rule.
func (x exposureCheck) anyRule() *Rule {
	if x.readRule != nil {
		return x.readRule
	}
	return x.editRule
}

// say builds the reason: what the command may do, the rule at stake, and
// the ways to run it.
func (x exposureCheck) say(r *Rule, opaque bool, what string) string {
	return prompts.PermExposure(what, r.Label(), opaque)
}

// command says why one simple command may get around a deny rule, or "".
func (x exposureCheck) command(sc Command) string {
	quoted := "`" + sc.String() + "`"
	if !wordsAreNotFiles(sc) {
		for _, a := range sc.Args[1:] {
			if a.Static {
				continue
			}
			if r := x.ruleFor(sc); r != nil {
				return x.say(r, false, prompts.PermDynamicWord(quoted, a.Value))
			}
		}
		if msg := x.namedPaths(sc, quoted); msg != "" {
			return msg
		}
	}
	if x.readRule != nil {
		if code := inlineCode(sc); code != "" {
			return x.say(x.readRule, false, prompts.PermInlineCode(quoted, code))
		}
		if msg := x.recursive(sc, quoted); msg != "" {
			return msg
		}
	}
	if knownCommand(sc) || x.readRule == nil && neverWrites(sc) {
		return ""
	}
	if x.c.namedByAllowRule(sc) {
		// A Bash allow rule that names the program vouches for what it
		// does with the words above, which were all checked.
		return ""
	}
	what := "read"
	if x.readRule == nil {
		what = "write"
	}
	return x.say(x.anyRule(), true, prompts.PermOpaqueProgram(quoted, what))
}

// namedByAllowRule reports a Bash allow rule with content that matches
// the command (a rule on the whole tool names nothing).
func (c contentCheck) namedByAllowRule(sc Command) bool {
	for _, r := range c.rulesFor(Allow, tool.Bash) {
		if r.Content != "" && c.bashPattern(r).mustMatch(sc) {
			return true
		}
	}
	return false
}

// ruleFor returns the rule a command's unknown words put at stake: the
// Read rule, or the Edit rule when the command could write through them
// (a command cadre knows writes only the paths it checked).
func (x exposureCheck) ruleFor(sc Command) *Rule {
	if x.readRule != nil {
		return x.readRule
	}
	if neverWrites(sc) {
		return nil
	}
	return x.editRule
}

// namedPaths checks the static words of a command that are not known to
// be harmless: one that resolves to (or, as a glob, matches) a protected
// path exposes it.
func (x exposureCheck) namedPaths(sc Command, quoted string) string {
	for _, e := range x.envs {
		for _, a := range sc.Args[1:] {
			// The word itself, and a file an option or @FILE names.
			words := []Arg{a}
			if a.Static {
				if strings.HasPrefix(a.Value, "-") {
					words = nil
				}
				words = append(words, optionPaths(a.Value)...)
			}
			for _, v := range words {
				if msg := x.namedPath(sc, quoted, v, e); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// namedPath checks one path word of a command for namedPaths.
func (x exposureCheck) namedPath(sc Command, quoted string, v Arg, e *env) string {
	for _, p := range x.c.wordPaths(v, e) {
		if indirectPath(p.lexical) {
			return x.say(x.anyRule(), false, prompts.PermIndirectPath(quoted, p.lexical))
		}
		if x.readRule != nil {
			if r := x.c.contentRule(Deny, tool.Read, e, p); r != nil {
				return x.say(r, false, prompts.PermNamesPath(quoted, p.lexical))
			}
		}
		if x.editRule != nil && !knownCommand(sc) {
			if r := x.c.contentRule(Deny, tool.Edit, e, p); r != nil {
				return x.say(r, false, prompts.PermNamesPath(quoted, p.lexical))
			}
		}
	}
	return ""
}

// recursive checks a command that reads whole directory trees: every
// tree it reads must hold no path a Read deny rule protects.
func (x exposureCheck) recursive(sc Command, quoted string) string {
	dirs, ok := recursiveRoots(sc)
	if !ok {
		return ""
	}
	for _, e := range x.envs {
		roots := dirs
		if len(roots) == 0 {
			roots = []Arg{{Value: ".", Static: true}}
		}
		for _, a := range roots {
			for _, p := range x.c.wordPaths(a, e) {
				for _, d := range []string{p.lexical, p.real} {
					if r := x.c.readRuleUnder(d, e, true); r != nil {
						return x.say(r, false, prompts.PermReadsTree(quoted, d))
					}
				}
			}
		}
	}
	return ""
}

// gitContent checks git commands that print file contents from the
// repository's history (show, diff, grep, log -p…): they can print a
// protected file whatever their path words say, even one that no longer
// exists in the work tree — and the sandbox masks files, not history.
func (x exposureCheck) gitContent(sc Command) string {
	if sc.Name() != "git" || !gitPrintsContent(sc) {
		return ""
	}
	quoted := "`" + sc.String() + "`"
	for _, e := range x.envs {
		dir := e.cwd
		if d, ok := gitDirOption(sc); ok {
			_, dir = resolvePath(d, e.cwd, e.home)
		}
		root := gitRoot(dir)
		if r := x.c.readRuleUnder(root, e, false); r != nil {
			return prompts.PermGitHistory(quoted, root, r.Label())
		}
	}
	return ""
}

// indirectPath reports a path whose target cadre cannot resolve for the
// command: /proc/self/cwd, /proc/<pid>/root, /dev/fd/3 lead wherever the
// running process is or has open.
func indirectPath(p string) bool {
	return p == "/proc" || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
}

// readRuleUnder returns a Read deny rule with content that may cover a
// path at or below dir. With mustExist, a rule whose fixed part names a
// path that does not exist covers nothing there.
func (c contentCheck) readRuleUnder(dir string, e *env, mustExist bool) *Rule {
	for _, r := range c.rulesFor(Deny, tool.Read) {
		if r.Content == "" {
			continue
		}
		for _, pat := range c.patternsFor(r, e) {
			fixed, _ := splitPattern(pat)
			if inside(dir, fixed) {
				return &r
			}
			if inside(fixed, dir) {
				if _, err := os.Lstat(fixed); err == nil || !mustExist {
					return &r
				}
			}
		}
	}
	return nil
}

// sandboxHoldsEditRules reports whether the sandbox can enforce every Edit
// deny rule: a rule's fixed part lies outside the writable places (the
// file system is read-only there), or the rule names that fixed path or
// everything below it and the path exists (it is mounted read-only).
// A pattern like `**/*.pem` inside a working directory cannot be held:
// a new file could match it.
func (c contentCheck) sandboxHoldsEditRules(e *env) bool {
	writable := append([]string(nil), e.dirs...)
	if c.cfg.Sandbox != nil {
		writable = append(writable, c.cfg.Sandbox.Writable...)
	}
	for _, r := range c.rulesFor(Deny, tool.Edit) {
		if r.Content == "" {
			continue
		}
		for _, pat := range c.patternsFor(r, e) {
			fixed, rest := splitPattern(pat)
			reachable := false
			for _, w := range writable {
				if inside(fixed, w) || inside(w, fixed) {
					reachable = true
				}
			}
			if !reachable {
				continue
			}
			if _, err := os.Lstat(fixed); err != nil || rest != "" && rest != "/**" {
				return false
			}
		}
	}
	return true
}

// gitRoot returns the top of the git work tree holding dir (the directory
// with .git), or dir itself outside any.
func gitRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
