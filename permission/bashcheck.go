package permission

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// bashFacts learns what a Bash call would do (see doc.go): a deny rule
// that may match one of its commands or paths, what cannot be analysed,
// what may touch paths deny rules protect, ask rules, and whether rules or
// the mode allow every part of it.
func (c bashCheck) bashFacts(s tool.Subject, e *env) facts {
	script, f, ok := parseBashCommand(s.Content)
	if !ok {
		return f
	}
	if f.deny, f.denyNote = c.bashDenyRule(script); f.deny != nil {
		return f
	}
	// Relative paths are checked against every directory the script may
	// be in: the cwd and each cd/pushd target.
	envs, dirsKnown := c.scriptEnvs(script, e)
	sf := scriptFactsOf(script)
	if f.deny = c.deniedPathRule(script, sf, envs); f.deny != nil {
		return f
	}
	f.write = !sf.readOnly
	// Uncertainty matters only where something could be refused: in
	// bypassPermissions with no rule that binds Bash, files or agents'
	// reads and writes, a dynamic command is no worse than a literal one.
	if len(script.Uncertain) > 0 && (c.cfg.Mode != ModeBypassPermissions || c.hasBindingRules()) {
		f.unsure = prompts.PermUncertain(script.Uncertain)
		return f
	}
	// A command a Bash deny or ask rule names may run where the rule
	// cannot see it: never allowed without asking, in any mode.
	if f.unsure = hiddenOf(c.Checker).hiddenRun(script, envs); f.unsure != "" {
		return f
	}
	if f.exposed = contentOf(c.Checker).bashExposure(script, sf, envs, dirsKnown); f.exposed != "" {
		return f
	}
	if f.ask = c.bashAskRule(script, sf, envs); f.ask != nil {
		return f
	}
	// Changing cadre's or Claude Code's configuration, git internals or
	// the MCP and memory files asks in every mode but bypassPermissions,
	// whatever Bash allow rules say.
	if p := c.bashProtectedWrite(script, envs); p != "" {
		f.protected = prompts.PermProtectedPath(p)
		return f
	}
	c.bashAllow(&f, script, sf, envs, dirsKnown)
	return f
}

// parseBashCommand splits the command of a Bash call. ok is false when it
// cannot be: f then says why, and that the call may write.
func parseBashCommand(cmd string) (script *Script, f facts, ok bool) {
	if strings.TrimSpace(cmd) == "" {
		f.unsure = prompts.PermNoCommand
		f.write = true
		return nil, f, false
	}
	script, err := SplitBash(cmd)
	if err != nil {
		f.unsure = prompts.PermUnparsable(err)
		f.write = true
		return nil, f, false
	}
	return script, f, true
}

// bashDenyRule returns the Bash deny rule that may match one of the
// script's commands, with a note when it only may.
func (c bashCheck) bashDenyRule(script *Script) (*Rule, string) {
	for _, cmd := range script.Commands {
		for _, sc := range ruleForms(cmd) {
			if r := c.firstMatch(Deny, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mayMatch(sc) }); r != nil {
				if r.Content != "" && !c.bashPattern(*r).mustMatch(baseNamed(sc)) {
					return r, prompts.PermDynamicWords(sc.String())
				}
				return r, ""
			}
		}
	}
	return nil, ""
}

// scriptFacts is what the commands of a script read and write, as far as
// their words tell.
type scriptFacts struct {
	// readOnly: no command writes (cd aside) and nothing is redirected
	// to a file.
	readOnly bool
	// readPaths are input redirections, the path words of read-only
	// commands and the sources of cp and mv.
	readPaths []Arg
	// perCommand holds each command's path words (read-only commands).
	perCommand [][]Arg
	// editPaths are what edit commands (mkdir, touch, cp, mv, rmdir)
	// write.
	editPaths []Arg
}

func scriptFactsOf(script *Script) scriptFacts {
	sf := scriptFacts{readOnly: len(script.Writes) == 0, readPaths: append([]Arg(nil), script.Reads...)}
	for _, sc := range script.Commands {
		paths, ro := readOnlyCommand(sc)
		sf.perCommand = append(sf.perCommand, paths)
		if ro {
			sf.readPaths = append(sf.readPaths, paths...)
		} else if !isCd(sc) {
			sf.readOnly = false
		}
		if ps, ok := editCommand(sc); ok {
			sf.editPaths = append(sf.editPaths, ps...)
			sf.readPaths = append(sf.readPaths, copySources(sc)...)
		}
	}
	return sf
}

// deniedPathRule returns the Read deny rule covering a file the script
// reads (a glob is expanded against the file system) or the Edit deny
// rule covering one it writes.
func (c bashCheck) deniedPathRule(script *Script, sf scriptFacts, envs []*env) *Rule {
	for _, be := range envs {
		for _, a := range sf.readPaths {
			for _, p := range contentOf(c.Checker).wordPaths(a, be) {
				if r := contentOf(c.Checker).contentRule(Deny, tool.Read, be, p); r != nil {
					return r
				}
			}
		}
		// Redirections and edit commands (mkdir, touch, cp, mv, rmdir)
		// are bound by Edit deny rules.
		for _, w := range append(append([]Arg(nil), script.Writes...), sf.editPaths...) {
			for _, p := range contentOf(c.Checker).wordPaths(w, be) {
				if r := contentOf(c.Checker).contentRule(Deny, tool.Edit, be, p); r != nil {
					return r
				}
			}
		}
	}
	return nil
}

// bashAskRule returns the Bash ask rule that may match one of the
// commands, or the Edit ask rule covering a path the script writes.
func (c bashCheck) bashAskRule(script *Script, sf scriptFacts, envs []*env) *Rule {
	for _, cmd := range script.Commands {
		for _, sc := range ruleForms(cmd) {
			if r := c.firstMatch(Ask, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mayMatch(sc) }); r != nil {
				return r
			}
		}
	}
	for _, be := range envs {
		for _, w := range append(append([]Arg(nil), script.Writes...), sf.editPaths...) {
			if r := c.redirectRule(Ask, w, be); r != nil {
				return r
			}
		}
	}
	return nil
}

// bashAllow decides whether rules or the mode allow the script: every
// command by a rule, or as a read-only command on paths inside the working
// directories, or (acceptEdits) as an edit command there; every
// redirection target writable.
func (c bashCheck) bashAllow(f *facts, script *Script, sf scriptFacts, envs []*env, dirsKnown bool) {
	all := func(fn func(*env) bool) bool {
		for _, be := range envs {
			if !fn(be) {
				return false
			}
		}
		return true
	}
	f.allowed = true
	editsInside := false
	for i, sc := range script.Commands {
		if r := c.firstMatch(Allow, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mustMatch(sc) }); r != nil {
			f.allowRules = append(f.allowRules, *r)
			continue
		}
		if isCd(sc) && dirsKnown {
			continue
		}
		_, ro := readOnlyCommand(sc)
		if ro && dirsKnown && all(func(be *env) bool { return c.readPathsOK(sf.perCommand[i], be) }) {
			continue
		}
		if ps, ok := editCommand(sc); ok && dirsKnown && all(func(be *env) bool { return c.editPathsOK(ps, be) }) {
			editsInside = true
			continue
		}
		f.allowed = false
		if f.why == "" {
			f.why = notAllowedWhy(sc, ro, dirsKnown)
		}
	}
	// Input redirections read files whatever the command: `$(<file)`
	// prints one.
	relative := func(a Arg) bool { return !dirsKnown && !strings.HasPrefix(a.Value, "/") && !a.Tilde }
	readsRelative := false
	for _, a := range script.Reads {
		readsRelative = readsRelative || relative(a)
	}
	if readsRelative || !all(func(be *env) bool { return c.readPathsOK(script.Reads, be) || c.readsAllowed(script.Reads, be) }) {
		f.allowed = false
		if f.why == "" {
			f.why = prompts.PermReadsOutside
		}
	}
	for _, w := range script.Writes {
		if relative(w) || !all(func(be *env) bool { return c.redirectOK(w, be) }) {
			f.allowed = false
			f.why = prompts.PermWritesOutside(w.Value)
		}
	}
	switch {
	case f.allowed && editsInside:
		// Edit commands inside the working directories: acceptEdits
		// runs them, other modes ask.
		f.allowed = false
		f.autoEdit = true
		f.why = prompts.PermChangesFiles
	case f.allowed && len(f.allowRules) == 0:
		// Nothing but read-only commands: the mode decides.
		f.allowed = false
		if sf.readOnly {
			f.auto = true
		} else {
			f.autoEdit = true
			f.why = prompts.PermWritesFiles
		}
	}
	if f.why == "" && !f.allowed && !f.auto {
		f.why = prompts.PermNotReadOnly
	}
}

// notAllowedWhy explains why a command needs approval.
func notAllowedWhy(sc Command, readOnly, dirsKnown bool) string {
	switch {
	case isCd(sc) || !dirsKnown:
		return prompts.PermCommandLeaves(sc.String())
	case readOnly:
		return prompts.PermCommandReadsOutside(sc.String())
	}
	return prompts.PermNoRuleForCommand(sc.String())
}

func isCd(c Command) bool {
	switch c.Name() {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// maxScriptDirs bounds the directories a script's relative paths are
// checked against.
const maxScriptDirs = 16

// scriptEnvs returns one env per directory the script may run commands
// in: the cwd and every cd/pushd target, each resolved against every
// directory before it. known is false when a target is not literal, lies
// outside the working directories, or there are too many.
func (c bashCheck) scriptEnvs(s *Script, e *env) (envs []*env, known bool) {
	envs = []*env{e}
	if s.UnknownDir {
		return envs, false
	}
	bases := []string{e.cwd}
	seen := map[string]bool{e.cwd: true}
	for _, t := range s.DirTargets {
		for _, b := range append([]string(nil), bases...) {
			_, real := resolvePath(t.Value, b, e.home)
			if !e.insideReal(real) {
				return envs, false
			}
			if !seen[real] {
				seen[real] = true
				bases = append(bases, real)
				envs = append(envs, &env{cwd: real, ruleBase: e.ruleBase, home: e.home, dirs: e.dirs, real: e.memo()})
			}
			if len(bases) > maxScriptDirs {
				return envs[:1], false
			}
		}
	}
	return envs, true
}

// readPathsOK: every static path word is inside the working directories
// and not under a Read ask rule; dynamic words are not OK.
func (c bashCheck) readPathsOK(paths []Arg, e *env) bool {
	for _, a := range paths {
		if !a.Static {
			return false
		}
		_, real := resolvePath(a.Value, e.cwd, e.home)
		if a.Glob {
			// Check the directory part before the first wildcard.
			if i := strings.IndexAny(a.Value, "*?["); i >= 0 {
				_, real = resolvePath(filepath.Dir(a.Value[:i]+"x"), e.cwd, e.home)
			}
		}
		if !e.insideReal(real) {
			return false
		}
		p := pathCandidate{lexical: real, real: real}
		if r := c.firstMatch(Ask, tool.Read, func(r Rule) bool { return r.Content != "" && c.pathRuleMatches(r, e, p) }); r != nil && r.Content != "" {
			return false
		}
	}
	return true
}

// editPathsOK: every path an edit command writes is static and inside the
// working directories.
func (c bashCheck) editPathsOK(paths []Arg, e *env) bool {
	for _, a := range paths {
		if !a.Static {
			return false
		}
		v := a.Value
		if a.Glob {
			if i := strings.IndexAny(v, "*?["); i >= 0 {
				v = filepath.Dir(v[:i] + "x")
			}
		}
		_, real := resolvePath(v, e.cwd, e.home)
		if !e.insideReal(real) || e.protected(real) {
			return false
		}
	}
	return true
}

// readsAllowed: every input redirection is covered by a Read allow rule.
func (c bashCheck) readsAllowed(reads []Arg, e *env) bool {
	for _, a := range reads {
		if !a.Static {
			return false
		}
		lex, real := resolvePath(a.Value, e.cwd, e.home)
		p := pathCandidate{lexical: lex, real: real}
		if r := c.firstMatch(Allow, tool.Read, func(r Rule) bool { return c.pathRuleMatches(r, e, p) }); r == nil || r.Content == "" {
			return false
		}
	}
	return true
}

// redirectRule returns an Edit rule of behaviour b that covers a
// redirection target; unknown targets match no rule here (they are not
// allowed either, see redirectOK).
func (c bashCheck) redirectRule(b Behavior, w Arg, e *env) *Rule {
	if !w.Static {
		return nil
	}
	lex, real := resolvePath(w.Value, e.cwd, e.home)
	p := pathCandidate{lexical: lex, real: real}
	r := c.firstMatch(b, tool.Edit, func(r Rule) bool { return c.pathRuleMatches(r, e, p) })
	if r != nil && r.Content == "" {
		// A rule on the whole Edit tool says nothing about Bash.
		return nil
	}
	return r
}

// redirectOK: a redirection may write where an Edit allow rule allows or
// inside the working directories.
func (c bashCheck) redirectOK(w Arg, e *env) bool {
	if !w.Static || w.Glob {
		return false
	}
	lex, real := resolvePath(w.Value, e.cwd, e.home)
	if e.insideReal(real) && !e.protected(real) {
		return true
	}
	p := pathCandidate{lexical: lex, real: real}
	r := c.firstMatch(Allow, tool.Edit, func(r Rule) bool { return c.pathRuleMatches(r, e, p) })
	return r != nil && r.Content != ""
}

// protected reports a path whose change could grant permissions or run
// code later: inside a working directory, git internals (.git), cadre's
// and Claude Code's configuration (.cadre, .claude: settings, agents,
// hooks, skills), and at its root .mcp.json, CLAUDE.md, CLAUDE.local.md
// and AGENTS.md; in the home directory the user's own configuration
// (~/.claude, ~/.claude.json, ~/.cadre, ~/.config/cadre). Worktrees under
// .cadre/worktrees and agent notes under agent-memory and
// agent-memory-local are ordinary files.
func (e *env) protected(real string) bool {
	for _, d := range e.dirs {
		if rel, ok := relParts(d, real); ok && protectedRel(rel, true) {
			return true
		}
	}
	if e.home == "" {
		return false
	}
	for _, h := range []string{e.home, e.resolved(e.home)} {
		rel, ok := relParts(h, real)
		if !ok || len(rel) == 0 {
			continue
		}
		switch {
		case rel[0] == ".claude.json", rel[0] == ".mcp.json":
			return len(rel) == 1
		case rel[0] == ".claude", rel[0] == ".cadre":
			if protectedRel(rel, false) {
				return true
			}
		case rel[0] == ".config" && len(rel) > 1 && rel[1] == "cadre":
			return true
		}
	}
	return false
}

// relParts returns the components of p below dir; ok is false when p is
// not inside dir.
func relParts(dir, p string) ([]string, bool) {
	if !inside(p, dir) {
		return nil, false
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return nil, false
	}
	if rel == "." {
		return nil, true
	}
	return strings.Split(filepath.ToSlash(rel), "/"), true
}

// rootProtected are the files at the root of a working directory that
// configure agents: MCP servers and memory files.
var rootProtected = sync.OnceValue(func() map[string]bool {
	return map[string]bool{".mcp.json": true, "CLAUDE.md": true, "CLAUDE.local.md": true, "AGENTS.md": true}
})

// protectedRel reports a protected path given its components below a
// working directory (root) or the home directory.
func protectedRel(parts []string, root bool) bool {
	if root && len(parts) == 1 && rootProtected()[parts[0]] {
		return true
	}
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case ".git":
			if root {
				return true
			}
		case ".cadre", ".claude":
			if i+2 < len(parts) && (parts[i+1] == "worktrees" || parts[i+1] == "agent-memory" || parts[i+1] == "agent-memory-local") {
				i += 2
				continue
			}
			return true
		}
	}
	return false
}

// bashProtectedWrite returns a protected path the script may change: a
// redirection target, or a path word of a command that is not read-only
// (tee, cp, mv, sed -i, rm, an interpreter given the path, …; git, which
// writes .git by design, aside) — unless an Edit allow rule names it.
func (c bashCheck) bashProtectedWrite(script *Script, envs []*env) string {
	for _, e := range envs {
		check := func(a Arg) string {
			for _, p := range contentOf(c.Checker).wordPaths(a, e) {
				for _, cand := range []string{p.real, p.lexical} {
					if !e.protected(cand) {
						continue
					}
					if r := contentOf(c.Checker).contentRule(Allow, tool.Edit, e, p); r != nil {
						continue
					}
					return cand
				}
			}
			return ""
		}
		for _, w := range script.Writes {
			if p := check(w); p != "" {
				return p
			}
		}
		for _, sc := range script.Commands {
			if _, ro := readOnlyCommand(sc); ro || baseNamed(sc).Name() == "git" || isCd(sc) || wordsAreNotFiles(sc) {
				continue
			}
			for _, a := range sc.Args[1:] {
				words := []Arg{a}
				if a.Static && strings.HasPrefix(a.Value, "-") {
					words = optionPaths(a.Value)
				} else if a.Static && strings.Contains(a.Value, "=") {
					// dd of=FILE and the like.
					_, v, _ := strings.Cut(a.Value, "=")
					words = append(words, Arg{Value: v, Static: true})
				}
				for _, w := range words {
					if p := check(w); p != "" {
						return p
					}
				}
			}
		}
	}
	return ""
}

// baseNamed returns the command with its name reduced to the base name
// (`/bin/rm` → `rm`), as deny rules see it.
func baseNamed(c Command) Command {
	if len(c.Args) == 0 || !c.Args[0].Static || !strings.Contains(c.Args[0].Value, "/") {
		return c
	}
	args := append([]Arg(nil), c.Args...)
	args[0].Value = filepath.Base(args[0].Value)
	return Command{Args: args, Via: c.Via}
}
