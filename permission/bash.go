package permission

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// maxScriptDepth bounds how deep `bash -c`, `eval` and friends are followed.
// A script nested deeper than this is treated as unparseable.
const maxScriptDepth = 6

// maxScriptLen bounds the size of a command the splitter accepts.
const maxScriptLen = 1 << 20

// Arg is one shell word of a simple command after quote removal.
type Arg struct {
	// Value is the word's text after quote removal. For a word that is not
	// static it is the source text of the word.
	Value string
	// Static is true when the value is known before the shell runs: no
	// parameter, command or arithmetic expansion, no brace expansion.
	Static bool
	// Glob is true when the word has unquoted glob characters.
	Glob bool
	// Tilde is true when the word starts with an unquoted `~`.
	Tilde bool
}

// Command is one simple command found anywhere in a Bash script.
type Command struct {
	// Args are the command's words, the command name first. Harmless
	// wrappers (timeout, nice, nohup, env, command, exec, builtin, stdbuf)
	// are already removed.
	Args []Arg
	// Via names the construct this command was found through ("" at top
	// level; "xargs", "find -exec", "sudo", "bash -c", "eval", ...).
	Via string
}

// Name returns the command name, or "" when it is not static.
func (c Command) Name() string {
	if len(c.Args) == 0 || !c.Args[0].Static || c.Args[0].Glob {
		return ""
	}
	return c.Args[0].Value
}

// String renders the command as words separated by spaces.
func (c Command) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.Value
	}
	return strings.Join(parts, " ")
}

// Script is the result of splitting a Bash command line.
type Script struct {
	// Commands are every simple command the line would run, in source
	// order, including those inside substitutions, subshells, functions,
	// `bash -c` strings, `eval`, xargs and find -exec.
	Commands []Command
	// Writes are the targets of output redirections to files.
	Writes []Arg
	// Reads are the sources of input redirections from files.
	Reads []Arg
	// Uncertain lists constructs whose effect cannot be known before the
	// shell runs (a command name from a variable, a dynamic `bash -c`
	// string, arithmetic on variables, ...). A script with any is never
	// allowed without asking.
	Uncertain []string
	// ChangesDir is true when the script runs cd, pushd or popd, so
	// relative paths in later commands are not relative to the cwd.
	ChangesDir bool
	// DirTargets are the literal targets of cd and pushd; UnknownDir is
	// true when a directory change goes somewhere not known in advance.
	DirTargets []Arg
	UnknownDir bool
	// Opaque lists code the script runs that cadre cannot read (an
	// interpreter's inline program or its input): it could run any
	// command, so it is asked for whenever a Bash deny or ask rule could
	// be got around.
	Opaque []string

	// in is the standard input of the simple command being recorded.
	in input
	// aliases are the aliases the script defines, by name.
	aliases map[string]string
	// runs are script files the commands run (bash FILE, source FILE).
	runs []Arg
	// texts are literal here-document and here-string texts fed to
	// commands that are not shells (a shell's is parsed).
	texts []hereText
}

// ErrUnparseable is wrapped by SplitBash when the command is not valid
// Bash or is too large or too deeply nested to analyse.
var ErrUnparseable = errors.New("cannot parse Bash command")

// SplitBash parses a Bash command line with a real shell parser and returns
// every simple command it would run. A command that does not parse returns
// an error wrapping ErrUnparseable; callers must then ask.
func SplitBash(command string) (*Script, error) {
	s := &Script{}
	if err := s.addScript(command, 0, ""); err != nil {
		return nil, err
	}
	s.checkRuns()
	return s, nil
}

func (s *Script) addScript(src string, depth int, via string) error {
	if depth > maxScriptDepth {
		return fmt.Errorf("%w: nested more than %d levels deep", ErrUnparseable, maxScriptDepth)
	}
	if len(src) > maxScriptLen {
		return fmt.Errorf("%w: command longer than %d bytes", ErrUnparseable, maxScriptLen)
	}
	if strings.ContainsRune(src, 0) {
		return fmt.Errorf("%w: NUL byte in command", ErrUnparseable)
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnparseable, err)
	}
	var werr error
	inputs := map[*syntax.CallExpr]input{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if werr != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			s.addRedirects(n.Redirs)
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				inputs[call] = inputOf(n.Redirs)
			}
		case *syntax.CallExpr:
			saved := s.in
			s.in = inputs[n]
			werr = s.addCall(n, depth, via)
			s.in = saved
		case *syntax.DeclClause:
			s.addDecl(n)
		case *syntax.ArithmExp:
			s.checkArithm(n.X, "arithmetic expansion")
		case *syntax.ArithmCmd:
			s.checkArithm(n.X, "arithmetic command")
		case *syntax.LetClause:
			for _, e := range n.Exprs {
				s.checkArithm(e, "let")
			}
		case *syntax.CStyleLoop:
			s.checkArithm(n.Init, "for (( ))")
			s.checkArithm(n.Cond, "for (( ))")
			s.checkArithm(n.Post, "for (( ))")
		case *syntax.ParamExp:
			if n.Index != nil {
				s.checkArithm(n.Index, "array subscript")
			}
			if n.Slice != nil {
				s.checkArithm(n.Slice.Offset, "substring expansion")
				s.checkArithm(n.Slice.Length, "substring expansion")
			}
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
				s.uncertain("${var@op} expansion")
			}
			if n.Excl {
				s.uncertain("indirect expansion ${!var}")
			}
		case *syntax.Assign:
			if n.Index != nil {
				s.checkArithm(n.Index, "array subscript")
			}
		case *syntax.ArrayElem:
			if n.Index != nil {
				s.checkArithm(n.Index, "array subscript")
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				if !numericTest(n.X) || !numericTest(n.Y) {
					s.uncertain("[[ ]] arithmetic comparison on a non-number")
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				s.uncertain("[[ -v ]] test")
			}
		case *syntax.ExtGlob:
			// Extended globs only match file names; harmless.
		}
		return true
	})
	return werr
}

func (s *Script) uncertain(reason string) {
	for _, r := range s.Uncertain {
		if r == reason {
			return
		}
	}
	s.Uncertain = append(s.Uncertain, reason)
}

// isNumber reports whether s is an optionally negative decimal integer
// (plain code: package-level regexps cost every start of cadre).
func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func numericTest(e syntax.TestExpr) bool {
	w, ok := e.(*syntax.Word)
	if !ok {
		return false
	}
	a := wordArg(w)
	return a.Static && isNumber(a.Value)
}

// checkArithm marks arithmetic on anything but number literals as
// uncertain: Bash evaluates variable values as expressions, and
// `a[$(cmd)]` inside such a value runs cmd.
func (s *Script) checkArithm(e syntax.ArithmExpr, what string) {
	if e == nil {
		return
	}
	bad := false
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			a := wordArg(n)
			if !a.Static || !isNumber(strings.TrimPrefix(a.Value, "+")) {
				bad = true
			}
			return false
		case *syntax.ParamExp:
			bad = true
			return false
		}
		return true
	})
	if bad {
		s.uncertain(what + " on variables")
	}
}

func (s *Script) addRedirects(rs []*syntax.Redirect) {
	for _, r := range rs {
		if r.Word == nil {
			continue
		}
		a := wordArg(r.Word)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
			if a.Static && harmlessSink(a.Value) {
				continue
			}
			s.Writes = append(s.Writes, a)
		case syntax.RdrInOut:
			s.Writes = append(s.Writes, a)
		case syntax.DplOut, syntax.DplIn:
			if a.Static && isFD(a.Value) {
				continue
			}
			if r.Op == syntax.DplOut {
				s.Writes = append(s.Writes, a)
			} else {
				s.Reads = append(s.Reads, a)
			}
		case syntax.RdrIn:
			s.Reads = append(s.Reads, a)
		}
	}
}

// isFD reports whether s is a redirection's descriptor word: digits,
// optionally followed by "-" (move), or "-" alone (close).
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func harmlessSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return false
}

// dangerousVars are variables whose value changes which program runs or
// makes a program run another one.
var dangerousVars = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"PATH": true, "IFS": true, "BASH_ENV": true, "ENV": true, "SHELLOPTS": true,
		"BASHOPTS": true, "PS4": true, "PROMPT_COMMAND": true, "CDPATH": true,
		"GLOBIGNORE": true, "BASH_XTRACEFD": true, "HOME": true,
		"PAGER": true, "GIT_PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true,
		"GIT_EDITOR": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_EXTERNAL_DIFF": true,
		"GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_EXEC_PATH": true, "GIT_CONFIG": true,
		"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true,
		"GIT_CONFIG_COUNT": true, "GIT_DIR": true, "GIT_WORK_TREE": true,
		"LESSOPEN": true, "LESSCLOSE": true, "PYTHONPATH": true, "PYTHONSTARTUP": true,
		"NODE_OPTIONS": true, "PERL5OPT": true, "PERL5LIB": true, "RUBYOPT": true, "RUBYLIB": true,
		"GOFLAGS": true, "NPM_CONFIG_SCRIPT_SHELL": true, "BASH_ALIASES": true, "BASH_CMDS": true,
		"BASH_LOADABLES_PATH": true, "SHELL": true, "EXECIGNORE": true, "FPATH": true,
	}
})

func dangerousVar(name string) bool {
	return dangerousVars()[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") ||
		strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") ||
		strings.HasPrefix(name, "BASH_FUNC_")
}

func (s *Script) checkAssigns(as []*syntax.Assign) {
	for _, a := range as {
		if a.Name != nil && dangerousVar(a.Name.Value) {
			s.uncertain("assignment to " + a.Name.Value)
		}
	}
}

func (s *Script) addDecl(d *syntax.DeclClause) {
	s.checkAssigns(d.Args)
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			v := wordArg(a.Value)
			if !v.Static {
				s.uncertain(d.Variant.Value + " with a dynamic argument")
				continue
			}
			if strings.HasPrefix(v.Value, "-") && strings.ContainsAny(v.Value, "inf") {
				// declare -i evaluates assigned values as arithmetic;
				// -n makes name references; -f touches functions.
				s.uncertain(d.Variant.Value + " " + v.Value)
			}
		}
	}
}

func (s *Script) addCall(c *syntax.CallExpr, depth int, via string) error {
	s.checkAssigns(c.Assigns)
	if len(c.Args) == 0 {
		return nil
	}
	args := make([]Arg, len(c.Args))
	for i, w := range c.Args {
		args[i] = wordArg(w)
	}
	return s.addArgs(args, depth, via)
}

// addArgs records one simple command given as words, unwrapping wrappers
// and following nested scripts.
func (s *Script) addArgs(args []Arg, depth int, via string) error {
	if depth > maxScriptDepth {
		return fmt.Errorf("%w: nested more than %d levels deep", ErrUnparseable, maxScriptDepth)
	}
	args = s.skipAssignments(args)
	if len(args) == 0 {
		return nil
	}
	cmd := Command{Args: args, Via: via}
	name := cmd.Name()
	if name == "" {
		s.uncertain("command name that is not a literal: " + args[0].Value)
		s.Commands = append(s.Commands, cmd)
		return nil
	}
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 && i < len(base)-1 {
		base = base[i+1:]
	}
	s.noteDirChange(base, args)
	if s.in.set && s.in.static && s.in.file == nil && s.in.text != "" {
		s.texts = append(s.texts, hereText{cmd: cmd, text: s.in.text})
	}
	if val, ok := s.aliases[name]; ok {
		delete(s.aliases, name) // an alias is not expanded inside itself
		err := s.expandAlias(val, args[1:], depth, "alias")
		s.aliases[name] = val
		return err
	}
	if follow := followerOf(base); follow != nil {
		return follow(s, cmd, base, depth)
	}
	s.Commands = append(s.Commands, cmd)
	return nil
}

// skipAssignments drops leading NAME=value words (after env they are
// assignments too), noting dangerous ones.
func (s *Script) skipAssignments(args []Arg) []Arg {
	for len(args) > 0 && args[0].Static && isAssign(args[0].Value) {
		name := args[0].Value[:strings.IndexByte(args[0].Value, '=')]
		if dangerousVar(name) {
			s.uncertain("assignment to " + name)
		}
		args = args[1:]
	}
	return args
}

// noteDirChange records cd, pushd and popd: where the script may go.
func (s *Script) noteDirChange(base string, args []Arg) {
	switch base {
	case "cd", "pushd":
		s.ChangesDir = true
		var targets []Arg
		for _, a := range args[1:] {
			if a.Static && (a.Value == "-L" || a.Value == "-P" || a.Value == "--") {
				continue
			}
			targets = append(targets, a)
		}
		if len(targets) == 1 && targets[0].Static && !targets[0].Glob && targets[0].Value != "-" && !strings.HasPrefix(targets[0].Value, "+") {
			s.DirTargets = append(s.DirTargets, targets[0])
		} else {
			// `cd` alone goes home, `cd -` to $OLDPWD, `pushd +1` rotates.
			s.UnknownDir = true
		}
	case "popd":
		// popd returns to a directory the script was in before.
		s.ChangesDir = true
	}
}

// followFunc records a command that runs another command or script (a
// wrapper, sudo, xargs, find -exec, a shell with -c, eval, trap, watch),
// following what it runs.
type followFunc func(s *Script, cmd Command, base string, depth int) error

// followerOf returns how the commands a command runs are found, or nil
// for a command that runs no other.
func followerOf(base string) followFunc {
	switch base {
	case "timeout", "nice", "nohup", "stdbuf", "env", "command", "builtin", "exec", "time", "setsid", "ionice":
		return followWrapper
	case "sudo", "doas":
		return followSudo
	case "xargs":
		return followXargs
	case "parallel":
		return followParallel
	case "find":
		return followFind
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su", "rbash", "tcsh", "csh", "yash", "posh", "oksh", "loksh":
		return followShell
	case "busybox", "toybox":
		return followBusybox
	case "source", ".":
		return followSource
	case "alias":
		return followAlias
	case "hash", "enable":
		return followHash
	case "read", "printf", "mapfile", "readarray", "getopts":
		return followAssigner
	case "git":
		return followGit
	case "eval":
		return followEval
	case "trap":
		return followTrap
	case "watch":
		return followWatch
	}
	if _, ok := runners()[base]; ok {
		return followRunner
	}
	if interpreterNames()[base] {
		return followInterpreter
	}
	switch base {
	case "awk", "gawk", "mawk", "nawk", "sed", "gsed":
		return followTextProgram
	}
	return nil
}

// followWrapper strips a harmless wrapper (timeout, nice, env, …) and
// records the command it runs in its place.
func followWrapper(s *Script, cmd Command, base string, depth int) error {
	args := cmd.Args
	if base == "command" && len(args) > 1 && (args[1].Value == "-v" || args[1].Value == "-V") ||
		base == "env" && len(args) == 1 {
		s.Commands = append(s.Commands, cmd)
		return nil
	}
	inner, ok := unwrap(base, args[1:])
	if !ok {
		s.uncertain("cannot tell what `" + base + "` runs")
		s.Commands = append(s.Commands, cmd)
		return nil
	}
	if len(inner) == 0 {
		s.Commands = append(s.Commands, cmd)
		return nil
	}
	return s.addArgs(inner, depth+1, cmd.Via)
}

// followSudo records sudo itself and the command it runs.
func followSudo(s *Script, cmd Command, base string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	inner, ok := skipOptions(cmd.Args[1:], "uUgpCDhrtTa")
	if !ok {
		s.uncertain("cannot tell what `" + base + "` runs")
		return nil
	}
	if len(inner) == 0 {
		for _, a := range cmd.Args[1:] {
			if a.Value == "--shell" || a.Value == "--login" || strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.ContainsAny(a.Value[1:], "si") {
				// sudo -s / -i without a command: a shell reading its input.
				return s.readsScript(base, depth)
			}
		}
		return nil
	}
	return s.addArgs(inner, depth+1, base)
}

// followXargs records xargs itself and the command it runs, which also
// gets words from its input.
func followXargs(s *Script, cmd Command, base string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	inner, ok := skipOptions(cmd.Args[1:], "IdEeLlnPsaS")
	if !ok {
		s.uncertain("cannot tell what `" + base + "` runs")
		return nil
	}
	if len(inner) == 0 {
		return nil
	}
	// With -I/-i/--replace the replacement string is a word only known
	// when it runs, wherever it appears.
	if rep, ok := xargsReplace(cmd.Args[1:]); ok {
		words := make([]Arg, len(inner))
		for i, a := range inner {
			if strings.Contains(a.Value, rep) {
				a.Static = false
			}
			words[i] = a
		}
		inner = words
	}
	inner = append(append([]Arg(nil), inner...), Arg{Value: "<input>", Static: false})
	return s.addArgs(inner, depth+1, base)
}

// followFind records find itself and each -exec/-ok command, whose `{}`
// is a word only known when it runs.
func followFind(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args
	for i := 1; i < len(args); i++ {
		switch args[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].Value != ";" && args[j].Value != "+" {
				j++
			}
			inner := make([]Arg, 0, j-i-1)
			for _, a := range args[i+1 : j] {
				if strings.Contains(a.Value, "{}") {
					a.Static = false
				}
				inner = append(inner, a)
			}
			if len(inner) > 0 {
				if err := s.addArgs(inner, depth+1, "find "+args[i].Value); err != nil {
					return err
				}
			}
			i = j
		}
	}
	return nil
}

// followShell parses the script of `sh -c SCRIPT` (and friends); a shell
// without -c is an ordinary command.
func followShell(s *Script, cmd Command, base string, depth int) error {
	script, found, ok := shellScriptArg(base, cmd.Args[1:])
	if !found {
		s.Commands = append(s.Commands, cmd)
		if base == "su" {
			// su without -c starts a shell reading its input.
			return s.readsScript(base, depth)
		}
		file, fromInput, ok := shellScriptFile(cmd.Args[1:])
		switch {
		case !ok:
			s.opaque("`" + base + "` with words that are not literals")
		case fromInput:
			return s.readsScript(base, depth)
		default:
			s.runs = append(s.runs, file)
		}
		return nil
	}
	if !ok {
		s.Commands = append(s.Commands, cmd)
		s.uncertain("`" + base + " -c` with a script that is not a literal")
		return nil
	}
	if base == "su" {
		s.Commands = append(s.Commands, cmd)
	}
	return s.addScript(script, depth+1, base+" -c")
}

// followEval parses the words of eval as a script.
func followEval(s *Script, cmd Command, _ string, depth int) error {
	var parts []string
	for _, a := range cmd.Args[1:] {
		if !a.Static {
			s.Commands = append(s.Commands, cmd)
			s.uncertain("eval of a string that is not a literal")
			return nil
		}
		parts = append(parts, a.Value)
	}
	return s.addScript(strings.Join(parts, " "), depth+1, "eval")
}

// followTrap parses a trap's handler as a script.
func followTrap(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args
	if len(args) > 2 && !strings.HasPrefix(args[1].Value, "-") {
		if !args[1].Static {
			s.uncertain("trap with a handler that is not a literal")
			return nil
		}
		return s.addScript(args[1].Value, depth+1, "trap")
	}
	return nil
}

// followWatch parses the command watch repeats as a script.
func followWatch(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	inner, ok := skipOptions(cmd.Args[1:], "nd")
	if !ok {
		s.uncertain("cannot tell what `watch` runs")
		return nil
	}
	var parts []string
	for _, a := range inner {
		if !a.Static {
			s.uncertain("watch of a command that is not a literal")
			return nil
		}
		parts = append(parts, a.Value)
	}
	if len(parts) == 0 {
		return nil
	}
	return s.addScript(strings.Join(parts, " "), depth+1, "watch")
}

// isAssign reports whether s starts with a shell variable assignment
// (NAME=).
func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unwrap removes a harmless wrapper's own options and returns the command
// it runs. ok is false when that cannot be told.
func unwrap(wrapper string, args []Arg) ([]Arg, bool) {
	for _, a := range args {
		if !a.Static {
			// A dynamic word before the command could be an option that
			// changes everything; only accept it after the command name.
			break
		}
	}
	i := 0
	next := func() (Arg, bool) {
		if i >= len(args) {
			return Arg{}, false
		}
		a := args[i]
		i++
		return a, true
	}
	switch wrapper {
	case "timeout":
		for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
			a, _ := next()
			if !a.Static {
				return nil, false
			}
			if a.Value == "-s" || a.Value == "-k" || a.Value == "--signal" || a.Value == "--kill-after" {
				if _, ok := next(); !ok {
					return nil, false
				}
			}
			if a.Value == "--" {
				break
			}
		}
		if _, ok := next(); !ok { // duration
			return nil, true
		}
	case "nice", "ionice":
		for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
			a, _ := next()
			if !a.Static {
				return nil, false
			}
			if a.Value == "-n" || a.Value == "-c" || a.Value == "-p" || a.Value == "--adjustment" {
				if _, ok := next(); !ok {
					return nil, false
				}
			}
		}
	case "stdbuf", "nohup", "builtin", "time", "setsid":
		for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
			a, _ := next()
			if !a.Static {
				return nil, false
			}
			if a.Value == "--" {
				break
			}
			if wrapper == "stdbuf" && (a.Value == "-i" || a.Value == "-o" || a.Value == "-e") ||
				wrapper == "time" && (a.Value == "-f" || a.Value == "-o" || a.Value == "--format" || a.Value == "--output") {
				if _, ok := next(); !ok {
					return nil, false
				}
			}
		}
	case "command", "exec":
		for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
			a, _ := next()
			if !a.Static {
				return nil, false
			}
			if a.Value == "--" {
				break
			}
			if wrapper == "exec" && a.Value == "-a" {
				if _, ok := next(); !ok {
					return nil, false
				}
			}
		}
	case "env":
		for i < len(args) {
			a := args[i]
			if !a.Static {
				return nil, false
			}
			if a.Value == "--" {
				i++
				break
			}
			if a.Value == "-S" || strings.HasPrefix(a.Value, "--split-string") || (strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "S")) {
				return nil, false
			}
			if a.Value == "-u" || a.Value == "-C" || a.Value == "--unset" || a.Value == "--chdir" {
				i += 2
				continue
			}
			if strings.HasPrefix(a.Value, "-") {
				i++
				continue
			}
			break
		}
		if i > len(args) {
			return nil, false
		}
	}
	return args[i:], true
}

// skipOptions skips leading options; letters in withValue take the next
// word as their value when given alone.
func skipOptions(args []Arg, withValue string) ([]Arg, bool) {
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.Static {
			return nil, false
		}
		if a.Value == "--" {
			return args[i+1:], true
		}
		if !strings.HasPrefix(a.Value, "-") || a.Value == "-" {
			break
		}
		i++
		if !strings.HasPrefix(a.Value, "--") && len(a.Value) == 2 && strings.IndexByte(withValue, a.Value[1]) >= 0 {
			i++
		}
		if strings.HasPrefix(a.Value, "--") && !strings.Contains(a.Value, "=") {
			// Long options of these tools that take a value.
			switch a.Value {
			case "--user", "--group", "--max-args", "--max-procs", "--max-lines", "--delimiter",
				"--arg-file", "--replace", "--eof", "--max-chars", "--interval", "--chdir":
				i++
			}
		}
	}
	if i > len(args) {
		return nil, false
	}
	return args[i:], true
}

// shellScriptArg finds the script of `sh -c SCRIPT`. found is false when
// the shell is not given -c; ok is false when the script is not static.
func shellScriptArg(shell string, args []Arg) (script string, found, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return "", true, false
		}
		if a.Value == "--" || !strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "+") {
			return "", false, false
		}
		if a.Value == "-o" || a.Value == "+o" || a.Value == "-O" || a.Value == "+O" {
			i++
			continue
		}
		if strings.HasPrefix(a.Value, "--") {
			if a.Value == "--command" {
				if i+1 < len(args) && args[i+1].Static {
					return args[i+1].Value, true, true
				}
				return "", true, false
			}
			continue
		}
		if strings.Contains(a.Value[1:], "c") {
			// The script is the first word that is not an option.
			for j := i + 1; j < len(args); j++ {
				if !args[j].Static {
					return "", true, false
				}
				if !strings.HasPrefix(args[j].Value, "-") {
					return args[j].Value, true, true
				}
			}
			return "", true, false
		}
	}
	return "", false, false
}

// wordArg evaluates a word as far as it can be without running anything.
func wordArg(w *syntax.Word) Arg {
	var b strings.Builder
	// shape is the word with quoted parts replaced by a placeholder:
	// brace expansion is decided on the unquoted characters.
	var shape strings.Builder
	a := Arg{Static: true}
	for i, p := range w.Parts {
		if _, lit := p.(*syntax.Lit); !lit {
			shape.WriteByte('Q')
		}
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				a.Tilde = true
				// ~ and ~+ ($PWD) are known; ~- ($OLDPWD) and ~user
				// are only known when the shell runs.
				if prefix, _, _ := strings.Cut(v, "/"); prefix != "~" && prefix != "~+" {
					a.Static = false
				}
			}
			if hasGlob(unescapedSpecials(v)) {
				a.Glob = true
			}
			shape.WriteString(unescapedSpecials(v))
			b.WriteString(unescapeUnquoted(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else {
					a.Static = false
					b.WriteString(nodeText(q))
				}
			}
		default:
			a.Static = false
			b.WriteString(nodeText(p))
		}
	}
	if braceExpands(shape.String()) {
		// Brace expansion can turn one word into many.
		a.Static = false
	}
	a.Value = b.String()
	return a
}

// braceExpands reports a `{…,…}` or `{a..b}` in the unquoted characters
// of a word (`{}` and `{x}` stay as they are).
func braceExpands(shape string) bool {
	for i := 0; i < len(shape); i++ {
		if shape[i] != '{' {
			continue
		}
		depth := 0
		for j := i; j < len(shape); j++ {
			switch shape[j] {
			case '{':
				depth++
			case '}':
				depth--
			case ',':
				return true
			case '.':
				if j+1 < len(shape) && shape[j+1] == '.' {
					return true
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return false
}

// hasGlob reports unquoted pattern characters: `*`, `?`, or a `[` with a
// `]` after it (a lone `[` is the test command).
func hasGlob(v string) bool {
	if strings.ContainsAny(v, "*?") {
		return true
	}
	i := strings.IndexByte(v, '[')
	return i >= 0 && strings.IndexByte(v[i+1:], ']') >= 0
}

// unescapedSpecials returns v with backslash-escaped characters removed, so
// only unquoted special characters remain.
func unescapedSpecials(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func unescapeUnquoted(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func unescapeDouble(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'...' string.
func ansiC(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(v) && j-i-1 < max && strings.IndexByte("0123456789abcdefABCDEF", v[j]) >= 0 {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(v[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(v[i:j], 8, 32)
			b.WriteByte(byte(n))
			i = j - 1
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			}
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}

func nodeText(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}
