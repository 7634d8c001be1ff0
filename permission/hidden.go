package permission

import (
	"bytes"
	"os"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Commands a Bash deny or ask rule could miss because they run where the
// rule cannot see them (see bashrun.go for what the splitter follows).

// hereText is a literal here-document or here-string given to a command.
type hereText struct {
	cmd  Command
	text string
}

// isShell reports the shells whose input text the splitter parses.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su", "rbash", "tcsh", "csh", "yash", "posh", "oksh", "loksh", "source", ".", "at", "batch":
		return true
	}
	return false
}

// maxWordScript bounds the size of a word parsed as a command line.
const maxWordScript = 16 << 10

// maxCheckedWords bounds the words of one command checked as the start
// of a command it may run (the check is quadratic in them).
const maxCheckedWords = 2048

// ruleForms returns the forms of a command deny and ask rules are
// matched against: the command, and for git the command without its
// global options (`git -C d rm x` is `git rm x`).
func ruleForms(sc Command) []Command {
	if g, ok := gitCanonical(sc); ok {
		return []Command{sc, g}
	}
	return []Command{sc}
}

// bashRules returns the Bash deny and ask rules with content.
func (c hiddenCheck) bashRules() []Rule {
	var out []Rule
	for _, b := range []Behavior{Deny, Ask} {
		for _, r := range c.rulesFor(b, tool.Bash) {
			if r.Content != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// mayMatchAny returns the first rule that may match a command.
func (c hiddenCheck) mayMatchAny(rules []Rule, sc Command) *Rule {
	for _, r := range rules {
		for _, f := range ruleForms(sc) {
			if c.bashPattern(r).mayMatch(f) {
				r := r
				return &r
			}
		}
	}
	return nil
}

// noExecPrograms run no other program whatever their words: their words
// are data, options that only change output, or paths.
func noExecPrograms(name string) bool {
	switch name {
	case "find", "rg", "sort", "xargs", "parallel", "tree", "less", "more", "man", "git":
		return false
	}
	if _, ok := readOnlyCommands()[name]; ok {
		return true
	}
	if editCommands()[name] || harmlessBuiltins()[name] {
		return true
	}
	switch name {
	case "cd", "pushd", "popd", "rm", "ln", "chmod", "chown", "chgrp", "tee", "base64", "paste", "join", "expand",
		"unexpand", "fmt", "pr", "dd", "shred", "truncate", "mktemp", "kill", "alias", "unalias", "read", "printf",
		"mapfile", "readarray", "getopts", "hash", "enable", "shopt", "declare", "typeset", "local", "export", "history",
		"awk", "gawk", "mawk", "nawk", "sed", "gsed":
		// awk and sed programs are checked where they are split.
		return true
	}
	return false
}

// gitNoExec are git subcommands no word of which makes git run another
// program (the repository's own configuration aside).
var gitNoExec = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "diff": true, "log": true, "show": true, "rev-parse": true, "ls-files": true, "blame": true,
		"describe": true, "shortlog": true, "add": true, "commit": true, "checkout": true, "switch": true,
		"branch": true, "tag": true, "reset": true, "stash": true, "rm": true, "mv": true, "restore": true,
		"init": true, "merge-base": true, "rev-list": true, "cat-file": true, "ls-tree": true, "remote": true,
		"version": true, "help": true, "notes": true, "reflog": true, "clean": true, "apply": true, "am": true,
		"cherry-pick": true, "revert": true, "merge": true, "format-patch": true,
	}
})

// hiddenRun says why the script may run a command a Bash deny or ask rule
// names without that command being one of its own simple commands, or "":
// opaque code, a word naming such a command in the words of a program that
// may run its words, a word holding a command line that does, or a word
// only known when the shell runs given to a program that may run it.
func (c hiddenCheck) hiddenRun(script *Script, envs []*env) string {
	rules := c.bashRules()
	if len(rules) == 0 {
		return ""
	}
	if msg := c.runFiles(rules, script, envs); msg != "" {
		return msg
	}
	if len(script.Opaque) > 0 {
		return prompts.PermRunsHidden(script.Opaque[0], rules[0].Label())
	}
	for _, t := range script.texts {
		name := baseNamed(t.cmd).Name()
		if noExecPrograms(name) && scriptVia(t.cmd.Via) || followerOf(name) != nil && isShell(name) {
			continue
		}
		if r := c.textNames(rules, t.text); r != nil {
			return prompts.PermRunsHidden("`"+t.cmd.String()+"` is given text that names `"+c.ruleProgram(*r)+"`", r.Label())
		}
	}
	for _, sc := range script.Commands {
		if msg := c.commandRuns(rules, sc); msg != "" {
			return msg
		}
	}
	return ""
}

// commandRuns checks the words of one simple command.
func (c hiddenCheck) commandRuns(rules []Rule, sc Command) string {
	name := baseNamed(sc).Name()
	if name == "" || noExecPrograms(name) && scriptVia(sc.Via) && name != "git" {
		return ""
	}
	quoted := "`" + sc.String() + "`"
	if len(sc.Args) > maxCheckedWords {
		return prompts.PermRunsHidden(quoted+" has too many words to check", rules[0].Label())
	}
	gitSafe := false
	if name == "git" {
		if sub, _, ok := gitSubcommand(sc); ok && gitNoExec()[sub] {
			gitSafe = true
		}
	}
	// A git subcommand known to run nothing is checked only for alias
	// definitions; another one (submodule foreach, rebase -x, bisect run)
	// like any program that may run its words.
	isGit := gitSafe
	for i := 1; i < len(sc.Args); i++ {
		a := sc.Args[i]
		if !a.Static {
			if gitSafe || noExecPrograms(name) || contentOf(c.Checker).namedByAllowRule(sc) {
				continue
			}
			return prompts.PermRunsHidden(quoted+" with "+a.Value+", a word only known when it runs", rules[0].Label())
		}
		v := a.Value
		if strings.HasPrefix(v, "-") {
			_, after, ok := strings.Cut(v, "=")
			if !ok {
				continue
			}
			v = after
		}
		if !isGit && !noExecPrograms(name) {
			// The rest of the words, from this one, as a command.
			rest := append([]Arg{{Value: v, Static: true}}, sc.Args[i+1:]...)
			if r := c.mayMatchAny(rules, Command{Args: rest}); r != nil {
				return prompts.PermRunsHidden(quoted+" may run `"+Command{Args: rest}.String()+"`", r.Label())
			}
		}
		if isGit && !strings.HasPrefix(v, "!") {
			continue
		}
		if r := c.textNames(rules, strings.TrimPrefix(v, "!")); r != nil {
			return prompts.PermRunsHidden(quoted+" may run the command line "+v, r.Label())
		}
	}
	return ""
}

// textNames returns a rule that may match a command in a text that may be
// run as a command line: its commands when it parses as Bash, otherwise a
// rule's program named as a word anywhere in it.
func (c hiddenCheck) textNames(rules []Rule, text string) *Rule {
	if !strings.ContainsAny(text, " \t\n;|&()`$<>'\"\\{}") || len(text) > maxWordScript {
		return nil
	}
	if s, err := SplitBash(text); err == nil {
		for _, sc := range s.Commands {
			if r := c.mayMatchAny(rules, sc); r != nil {
				return r
			}
		}
	}
	// Whether or not it parses as Bash (vim -c '!rm x', a Python
	// script), a rule's program standing as a word is a command it may run.
	for _, r := range rules {
		if p := c.ruleProgram(r); p != "" && namesWord(text, p) {
			r := r
			return &r
		}
	}
	return nil
}

// ruleProgram returns the program a Bash rule names (its first word), or
// "" when the rule does not start with a literal word.
func (c hiddenCheck) ruleProgram(r Rule) string {
	p := c.bashPattern(r)
	if p.kind == patGlob {
		w, _, _ := strings.Cut(p.glob, " ")
		if strings.Contains(w, "*") {
			return ""
		}
		return w
	}
	if len(p.words) == 0 {
		return ""
	}
	return p.words[0]
}

// namesWord reports name standing as a word of its own in text.
func namesWord(text, name string) bool {
	wordChar := func(b byte) bool {
		return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '.'
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !wordChar(text[j-1])) && (end == len(text) || !wordChar(text[end]) && text[end] != '/') {
			return true
		}
		i = j + 1
	}
}

// maxRunFile bounds the size of a script file read to check what it runs.
const maxRunFile = 256 << 10

// runFiles checks the script files the command runs (`bash FILE`,
// `source FILE`, `./FILE`) that exist now: one whose text names a
// command a Bash deny or ask rule is about may run it. A binary file is a
// program like any other; a file the line itself writes is opaque
// (checkRuns).
func (c hiddenCheck) runFiles(rules []Rule, script *Script, envs []*env) string {
	files := append([]Arg(nil), script.runs...)
	for _, sc := range script.Commands {
		if len(sc.Args) > 0 && sc.Args[0].Static && strings.Contains(sc.Args[0].Value, "/") {
			files = append(files, sc.Args[0])
		}
	}
	for _, e := range envs {
		for _, f := range files {
			if !f.Static || f.Glob {
				continue
			}
			_, real := resolvePath(f.Value, e.cwd, e.home)
			st, err := os.Stat(real)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			if st.Size() > maxRunFile {
				return prompts.PermRunsHidden("`"+f.Value+"` is a script too large to check", rules[0].Label())
			}
			b, err := os.ReadFile(real)
			if err != nil || bytes.IndexByte(b, 0) >= 0 {
				continue
			}
			if r := c.textNames(rules, string(b)); r != nil {
				return prompts.PermRunsHidden("`"+f.Value+"` is a script that names `"+c.ruleProgram(*r)+"`", r.Label())
			}
		}
	}
	return ""
}
