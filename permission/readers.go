package permission

import (
	"strings"
	"sync"
)

// What commands read and write, as far as deny rules on paths care.

// harmlessBuiltins are shell builtins that neither read nor write files
// (their words are options, names and values).
var harmlessBuiltins = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		":": true, "set": true, "unset": true, "export": true, "exit": true, "return": true, "shift": true,
		"wait": true, "umask": true, "ulimit": true, "local": true, "readonly": true, "break": true, "continue": true,
	}
})

// wordsAreNotFiles reports commands whose words are never paths they
// open: printing, tests on names, builtins.
func wordsAreNotFiles(c Command) bool {
	name := c.Name()
	if harmlessBuiltins()[name] {
		return true
	}
	switch name {
	case "echo", "printf", "true", "false", "seq", "sleep", "basename", "dirname", "pwd", "which", "type", "id", "date", "test", "[", "whoami", "uname", "nproc", "hostname":
		return scriptVia(c.Via)
	}
	return false
}

// knownCommand reports a command whose every read and write is told by its
// words: a read-only command, an edit command (mkdir, touch, cp, mv,
// rmdir), a directory change or a harmless builtin, with no word only
// known at run time that could change that.
func knownCommand(c Command) bool {
	if _, ok := readOnlyCommand(c); ok {
		return true
	}
	if _, ok := editCommand(c); ok {
		return true
	}
	return isCd(c) || harmlessBuiltins()[c.Name()] && c.Via == ""
}

// neverWrites reports a command that writes no file whatever its words:
// a printer, or a read-only command with no option that writes and no
// operand it could write to (so `cat $F` never writes, `sort $F` might:
// $F could be `-o file`).
func neverWrites(c Command) bool {
	if wordsAreNotFiles(c) {
		return true
	}
	spec, ok := readOnlyCommands()[c.Name()]
	return ok && len(spec.forbid) == 0 && spec.maxPositional < 0 && scriptVia(c.Via)
}

// copySources returns the words cp and mv read: every operand but the
// last, or every operand with -t/--target-directory.
func copySources(c Command) []Arg {
	name := c.Name()
	if name != "cp" && name != "mv" {
		return nil
	}
	var operands []Arg
	target := false
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.Value == "-t" || a.Value == "--target-directory":
			target = true
			i++
		case strings.HasPrefix(a.Value, "--target-directory="):
			target = true
		case a.Value == "-S" || a.Value == "--suffix":
			i++
		case strings.HasPrefix(a.Value, "-") && a.Value != "-":
		default:
			operands = append(operands, a)
		}
	}
	if !target && len(operands) > 0 {
		operands = operands[:len(operands)-1]
	}
	return operands
}

// interpreter describes a program that runs code: the options that take
// code inline, and whether its first operand is a program text (awk, sed).
type interpreter struct {
	inline       []string
	programFirst bool
	// fileOption names the option that reads the program from a file
	// instead (awk -f, sed -f).
	fileOption string
}

var interpreters = sync.OnceValue(func() map[string]interpreter {
	return map[string]interpreter{
		"python": {inline: []string{"-c"}}, "python2": {inline: []string{"-c"}}, "python3": {inline: []string{"-c"}},
		"pypy": {inline: []string{"-c"}}, "pypy3": {inline: []string{"-c"}},
		"node": {inline: []string{"-e", "--eval", "-p", "--print"}}, "nodejs": {inline: []string{"-e", "--eval", "-p", "--print"}},
		"bun": {inline: []string{"-e", "--eval", "-p", "--print"}}, "deno": {inline: []string{"eval"}},
		"perl": {inline: []string{"-e", "-E"}}, "ruby": {inline: []string{"-e"}}, "php": {inline: []string{"-r"}},
		"lua": {inline: []string{"-e"}}, "luajit": {inline: []string{"-e"}}, "Rscript": {inline: []string{"-e"}},
		"R": {inline: []string{"-e"}}, "julia": {inline: []string{"-e", "--eval"}}, "osascript": {inline: []string{"-e"}},
		"pwsh": {inline: []string{"-c", "-Command", "-command"}}, "groovy": {inline: []string{"-e"}},
		"tclsh": {}, "expect": {inline: []string{"-c"}}, "irb": {}, "jshell": {},
		"bash": {}, "sh": {}, "zsh": {}, "dash": {}, "ksh": {}, "mksh": {}, "ash": {}, "fish": {},
		"awk": {programFirst: true, fileOption: "-f"}, "gawk": {programFirst: true, fileOption: "-f"},
		"mawk": {programFirst: true, fileOption: "-f"}, "nawk": {programFirst: true, fileOption: "-f"},
		"sed":     {inline: []string{"-e", "--expression"}, programFirst: true, fileOption: "-f"},
		"gsed":    {inline: []string{"-e", "--expression"}, programFirst: true, fileOption: "-f"},
		"sqlite3": {programFirst: true},
	}
})

// inlineCode describes the code a command runs that is in its words or on
// its input rather than in a file ("" when there is none): `python3 -c`,
// `node -e`, an awk program, a shell reading commands from its input.
// Such code can open any file, whatever its path words say.
func inlineCode(c Command) string {
	name := c.Name()
	in, ok := interpreters()[name]
	if !ok {
		return ""
	}
	operands := 0
	for _, a := range c.Args[1:] {
		v := a.Value
		for _, f := range in.inline {
			if v == f || strings.HasPrefix(v, f+"=") || len(f) == 2 && f[0] == '-' && len(v) > 2 && v[0] == '-' && v[1] != '-' && strings.HasSuffix(v, f[1:]) {
				return name + " code given inline"
			}
		}
		if in.fileOption != "" && v == in.fileOption {
			return ""
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			operands++
			if v == "-" {
				return name + " code read from its input"
			}
			break
		}
		if name == "python" || name == "python2" || name == "python3" {
			if v == "-m" {
				return "" // a module: a program like any other
			}
		}
	}
	if in.programFirst {
		return name + " program text given inline"
	}
	if operands == 0 {
		return name + " code read from its input"
	}
	return ""
}

// recursiveRoots returns the trees a command reads whole (ok false when it
// reads no tree): grep -r, rg, find, ls -R, tree, diff -r, cp -r. No roots
// with ok means the current directory.
func recursiveRoots(c Command) ([]Arg, bool) {
	name := c.Name()
	args := c.Args[1:]
	switch name {
	case "grep", "egrep", "fgrep":
		if !hasOption(args, "r", "recursive") && !hasOption(args, "R", "dereference-recursive") && !hasOptionValue(args, "-d", "recurse") && !hasOptionValue(args, "--directories", "recurse") {
			return nil, false
		}
		return searchRoots(args), true
	case "rg", "ag", "ack":
		return searchRoots(args), true
	case "find":
		var roots []Arg
		for _, a := range args {
			if strings.HasPrefix(a.Value, "-") || a.Value == "(" || a.Value == "!" {
				break
			}
			roots = append(roots, a)
		}
		return roots, true
	case "ls":
		if !hasOption(args, "R", "recursive") {
			return nil, false
		}
		return operandsOf(args), true
	case "diff":
		if !hasOption(args, "r", "recursive") {
			return nil, false
		}
		return operandsOf(args), true
	case "tree":
		return operandsOf(args), true
	case "cp":
		if !hasOption(args, "r", "recursive") && !hasOption(args, "R", "") && !hasOption(args, "a", "archive") {
			return nil, false
		}
		src := copySources(c)
		return src, len(src) > 0
	}
	return nil, false
}

// searchRoots returns the paths of grep-like commands: the operands after
// the pattern (every operand when -e, -f or --files gives the pattern).
func searchRoots(args []Arg) []Arg {
	ops := operandsOf(args)
	if hasOption(args, "e", "regexp") || hasOption(args, "f", "file") || hasOption(args, "", "files") {
		return ops
	}
	if len(ops) > 0 {
		return ops[1:]
	}
	return nil
}

// operandsOf returns the words that are not options.
func operandsOf(args []Arg) []Arg {
	var out []Arg
	for i, a := range args {
		if a.Value == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			out = append(out, a)
		}
	}
	return out
}

// hasOption reports a short option letter (alone or in a cluster like
// -rn) or a long option (--name or --name=…) among args.
func hasOption(args []Arg, short, long string) bool {
	for _, a := range args {
		v := a.Value
		switch {
		case v == "--":
			return false
		case strings.HasPrefix(v, "--"):
			if long != "" && (v == "--"+long || strings.HasPrefix(v, "--"+long+"=")) {
				return true
			}
		case strings.HasPrefix(v, "-") && short != "":
			if strings.Contains(v[1:], short) {
				return true
			}
		}
	}
	return false
}

// hasOptionValue reports `opt value` or `opt=value` among args.
func hasOptionValue(args []Arg, opt, value string) bool {
	for i, a := range args {
		if a.Value == opt+"="+value || a.Value == opt && i+1 < len(args) && args[i+1].Value == value {
			return true
		}
	}
	return false
}

// gitContentSafe are git subcommands whose output never holds file
// contents (names, commit messages and states at most). log is safe only
// without the options that print patches.
var gitContentSafe = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "rev-parse": true, "ls-files": true, "describe": true, "shortlog": true,
		"branch": true, "tag": true, "remote": true, "rev-list": true, "merge-base": true,
		"ls-remote": true, "version": true, "help": true, "var": true, "count-objects": true,
	}
})

// gitPrintsContent reports a git command that may print file contents:
// show, diff, grep, cat-file, archive, blame, log -p and every
// subcommand not known to print none.
func gitPrintsContent(c Command) bool {
	sub, rest, ok := gitSubcommand(c)
	if !ok {
		return true
	}
	switch {
	case sub == "log":
		for _, a := range rest {
			v := a.Value
			if v == "-p" || v == "-u" || v == "--patch" || v == "--cc" || v == "-c" || strings.HasPrefix(v, "-L") ||
				v == "--full-diff" || v == "-m" || strings.HasPrefix(v, "--diff-merges") || v == "--word-diff" || !a.Static {
				return true
			}
		}
		return false
	case gitContentSafe()[sub]:
		return false
	}
	return true
}

// gitSubcommand returns git's subcommand and its words, skipping global
// options; ok is false when the subcommand cannot be told.
func gitSubcommand(c Command) (string, []Arg, bool) {
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return "", nil, false
		}
		switch {
		case a.Value == "-C" || a.Value == "-c" || a.Value == "--git-dir" || a.Value == "--work-tree" || a.Value == "--namespace":
			i++
		case strings.HasPrefix(a.Value, "-"):
		default:
			return a.Value, args[i+1:], true
		}
	}
	return "", nil, false
}

// gitDirOption returns the directory of `git -C DIR`, if given.
func gitDirOption(c Command) (string, bool) {
	args := c.Args[1:]
	for i := 0; i+1 < len(args); i++ {
		if args[i].Value == "-C" {
			return args[i+1].Value, true
		}
		if !strings.HasPrefix(args[i].Value, "-") {
			break
		}
	}
	return "", false
}
