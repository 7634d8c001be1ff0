package permission

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// What a command runs that is not among its own words: a shell reading
// its script from a here-document, a here-string, a pipe or a process
// substitution; `source` of a substitution or of /dev/stdin; wrappers that
// run their arguments (flock, script -c, chroot, setpriv, unshare,
// busybox, …); git's -c aliases and global options; aliases defined in
// the same command line; a file the line writes and then runs. Where the
// text is literal it is parsed and its commands are checked like any
// other; where it is not, the script is uncertain (never allowed without
// asking) or opaque (asked for whenever a Bash deny or ask rule could be
// got around).

// input is what a simple command reads on its standard input, as far as
// its own redirections tell.
type input struct {
	// set: a redirection of fd 0 gives the input.
	set bool
	// text is the here-document or here-string text; static says it is
	// known before the shell runs.
	text   string
	static bool
	// file is the source of `< file`, when that is the input.
	file *Arg
}

// inputOf returns the standard input the redirections of one statement
// give (the last redirection of fd 0 wins).
func inputOf(rs []*syntax.Redirect) input {
	var in input
	for _, r := range rs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			in = input{set: true}
			in.text, in.static = hdocText(r)
		case syntax.WordHdoc:
			a := wordArg(r.Word)
			in = input{set: true, text: a.Value + "\n", static: a.Static}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			a := wordArg(r.Word)
			if r.Op == syntax.DplIn && a.Static && isFD(a.Value) {
				// <&3: some other descriptor, not known here.
				in = input{set: true}
				continue
			}
			in = input{set: true, file: &a}
		}
	}
	return in
}

// hdocText returns a here-document's body and whether it is known before
// the shell runs: always with a quoted delimiter, otherwise when the body
// has no expansion.
func hdocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			switch p := p.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted:
				quoted = true
			case *syntax.Lit:
				quoted = quoted || strings.Contains(p.Value, `\`)
			}
		}
	}
	var b strings.Builder
	static := true
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			static = false
			b.WriteString(nodeText(p))
			continue
		}
		if quoted {
			b.WriteString(l.Value)
		} else {
			b.WriteString(unescapeHdoc(l.Value))
		}
	}
	return b.String(), static
}

// unescapeHdoc applies the backslash rules of an unquoted here-document:
// only `\$`, "\`", `\\` and a backslash-newline are escapes.
func unescapeHdoc(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '\\':
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

// stdinPath reports a path that is the process's standard input or some
// other open descriptor.
func stdinPath(p string) bool {
	return p == "-" || p == "/dev/stdin" || indirectPath(p)
}

// readsScript records a shell (or `source`) that reads its commands from
// its standard input: literal here-document or here-string text is parsed
// as a script; anything else is uncertain.
func (s *Script) readsScript(who string, depth int) error {
	in := s.in
	switch {
	case in.set && in.file == nil && in.static:
		return s.addScript(in.text, depth+1, who+" -c")
	case in.file != nil && in.file.Static && !stdinPath(in.file.Value):
		// `bash < script.sh` runs a file like `bash script.sh`.
		s.runs = append(s.runs, *in.file)
		return nil
	}
	s.opaque("`" + who + "` reading commands from its input (a pipe, a file or text only known when it runs)")
	return nil
}

// shellScriptFile finds what a shell without -c runs: the script file
// (its first operand), or its input. ok is false when a word before the
// script is not a literal.
func shellScriptFile(args []Arg) (file Arg, fromInput, ok bool) {
	stdin := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return Arg{}, false, false
		}
		v := a.Value
		switch {
		case v == "--" || v == "-":
			if i+1 < len(args) && !stdin {
				f := args[i+1]
				if !f.Static {
					return Arg{}, false, false
				}
				return f, stdinPath(f.Value), true
			}
			return Arg{}, true, true
		case v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file" || v == "-C" || v == "--init-command":
			i++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if strings.ContainsAny(v[1:], "si") {
				stdin = true
			}
		default:
			if stdin {
				return Arg{}, true, true
			}
			return a, stdinPath(v), true
		}
	}
	return Arg{}, true, true
}

// followSource records `source FILE` / `. FILE`: a file is run like a
// script; /dev/stdin reads the input; a substitution or a variable is
// uncertain.
func followSource(s *Script, cmd Command, base string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args[1:]
	for len(args) > 0 && args[0].Static && (args[0].Value == "--" || args[0].Value == "-p") {
		if args[0].Value == "-p" && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return nil
	}
	f := args[0]
	switch {
	case !f.Static:
		s.opaque("`" + base + "` of a file only known when it runs: " + f.Value)
	case stdinPath(f.Value):
		return s.readsScript(base, depth)
	default:
		s.runs = append(s.runs, f)
	}
	return nil
}

// runner describes a program that runs the command given in its words.
type runner struct {
	// shortVal are short options that take a value; longVal are long
	// options (without `=`) that take one.
	shortVal string
	longVal  []string
	// operands is how many words come before the command (flock FILE,
	// chroot DIR, taskset MASK).
	operands int
	// cmdOpt is the short option whose value is a command line run by a
	// shell (`script -c`, `flock -c`); cmdLong its long form.
	cmdOpt  byte
	cmdLong string
	// noCommand: the program's operands are not a command (script's is
	// the typescript file).
	noCommand bool
	// shellIfNone: with no command, the program starts a shell that reads
	// commands from its input.
	shellIfNone bool
}

// runners are the programs that run another one, beyond the harmless
// wrappers unwrap strips.
var runners = sync.OnceValue(func() map[string]runner {
	return map[string]runner{
		"flock":            {shortVal: "wEn", longVal: []string{"--wait", "--timeout", "--conflict-exit-code"}, operands: 1, cmdOpt: 'c', cmdLong: "--command"},
		"script":           {shortVal: "cEIOBTm", longVal: []string{"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"}, cmdOpt: 'c', cmdLong: "--command", noCommand: true, shellIfNone: true},
		"chroot":           {longVal: []string{"--userspec", "--groups"}, operands: 1, shellIfNone: true},
		"setpriv":          {},
		"unshare":          {shortVal: "SGRw", longVal: []string{"--setuid", "--setgid", "--root", "--wd", "--propagation", "--map-user", "--map-group", "--map-users", "--map-groups"}, shellIfNone: true},
		"nsenter":          {shortVal: "tSGrwmuinpUCT", longVal: []string{"--target", "--setuid", "--setgid", "--root", "--wd"}, shellIfNone: true},
		"taskset":          {operands: 1},
		"chrt":             {shortVal: "T P D", operands: 1},
		"setarch":          {shortVal: "", operands: 1},
		"linux32":          {},
		"linux64":          {},
		"prlimit":          {shortVal: "p"},
		"runuser":          {shortVal: "ugcsw", longVal: []string{"--user", "--group", "--command", "--shell", "--whitelist-environment"}, cmdOpt: 'c', cmdLong: "--command", shellIfNone: true},
		"sg":               {operands: 1, cmdOpt: 'c'},
		"newgrp":           {operands: 1, shellIfNone: true},
		"strace":           {shortVal: "abeEIoOpPsSuUX"},
		"ltrace":           {shortVal: "aAeElnopsuwxXDF"},
		"valgrind":         {},
		"fakeroot":         {shortVal: "lsi"},
		"proot":            {shortVal: "rbmwvkq"},
		"xvfb-run":         {shortVal: "efnpsw", longVal: []string{"--error-file", "--auth-file", "--server-num", "--xauth-protocol", "--server-args", "--wait"}},
		"dbus-run-session": {longVal: []string{"--config-file", "--dbus-daemon"}},
		"numactl":          {shortVal: "CNmlpPi"},
		"gosu":             {operands: 1},
		"su-exec":          {operands: 1},
		"setuidgid":        {operands: 1},
		"envuidgid":        {operands: 1},
		"envdir":           {operands: 1},
		"softlimit":        {shortVal: "amdosflcrpt"},
		"chpst":            {shortVal: "uUenlLm"},
		"catchsegv":        {},
		"unbuffer":         {},
		"rlwrap":           {shortVal: "aAbcCeEfgHilmMnoOpPqrRsSTtWz"},
		"torsocks":         {shortVal: "udaPi"},
		"proxychains":      {shortVal: "f"},
		"proxychains4":     {shortVal: "f"},
		"faketime":         {shortVal: "m", operands: 1},
		"firejail":         {},
		"systemd-run":      {shortVal: "pEuMH", longVal: []string{"--unit", "--property", "--description", "--slice", "--uid", "--gid", "--working-directory", "--setenv", "--machine", "--host", "--nice"}},
		"pkexec":           {longVal: []string{"--user"}},
		"caffeinate":       {shortVal: "tw"},
		"tini":             {shortVal: "pe"},
		"dumb-init":        {},
		"chronic":          {},
		"entr":             {},
		"daemonize":        {shortVal: "aceEopPlu"},
		"at":               {shortVal: "qfmt", noCommand: true, shellIfNone: true},
		"batch":            {shortVal: "qfmt", noCommand: true, shellIfNone: true},
		"perf":             {},
		"gdb":              {},
		"sem":              {},
		"ssh-agent":        {shortVal: "aEPt"},
	}
})

// followRunner records a runner and the command it runs (through a
// shell for its -c option; a shell reading its input when it starts one).
func followRunner(s *Script, cmd Command, base string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	r := runners()[base]
	args := cmd.Args[1:]
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.Static {
			s.uncertain("cannot tell what `" + base + "` runs")
			return nil
		}
		v := a.Value
		if v == "--" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			if r.noCommand {
				// Its operands are files; options may follow them.
				i++
				continue
			}
			break
		}
		i++
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v, "=")
			takes := false
			for _, l := range r.longVal {
				takes = takes || l == name
			}
			if name == r.cmdLong && r.cmdLong != "" {
				if !hasVal {
					if i >= len(args) {
						return nil
					}
					if !args[i].Static {
						s.uncertain("`" + base + " " + name + "` with a command that is not a literal")
						return nil
					}
					val = args[i].Value
				}
				return s.addScript(val, depth+1, base+" -c")
			}
			if takes && !hasVal {
				i++
			}
			continue
		}
		// A cluster of short options; the first that takes a value takes
		// the rest of the word, or the next word.
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if ch == r.cmdOpt && r.cmdOpt != 0 {
				script := v[j+1:]
				if script == "" {
					if i >= len(args) {
						return nil
					}
					if !args[i].Static {
						s.uncertain("`" + base + " -" + string(ch) + "` with a command that is not a literal")
						return nil
					}
					script = args[i].Value
				}
				return s.addScript(script, depth+1, base+" -c")
			}
			if strings.IndexByte(r.shortVal, ch) >= 0 && ch != ' ' {
				if j == len(v)-1 {
					i++
				}
				break
			}
		}
	}
	if r.noCommand {
		if r.shellIfNone {
			return s.readsScript(base, depth)
		}
		return nil
	}
	for k := 0; k < r.operands && i < len(args); k++ {
		if !args[i].Static {
			s.uncertain("cannot tell what `" + base + "` runs")
			return nil
		}
		i++
	}
	// `flock FILE -c CMD`: the command option after the operands.
	if i+1 < len(args) && r.cmdOpt != 0 && (args[i].Value == "-"+string(r.cmdOpt) || r.cmdLong != "" && args[i].Value == r.cmdLong) {
		if !args[i+1].Static {
			s.uncertain("`" + base + " " + args[i].Value + "` with a command that is not a literal")
			return nil
		}
		return s.addScript(args[i+1].Value, depth+1, base+" -c")
	}
	if i >= len(args) {
		if r.shellIfNone {
			return s.readsScript(base, depth)
		}
		return nil
	}
	return s.addArgs(args[i:], depth+1, base)
}

// followBusybox records busybox and the applet it runs (`busybox rm x`
// is rm; `busybox sh` is a shell).
func followBusybox(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args[1:]
	if len(args) == 0 || args[0].Static && strings.HasPrefix(args[0].Value, "-") {
		return nil
	}
	return s.addArgs(args, depth+1, "busybox")
}

// followAlias parses each alias value as a script (its commands are
// checked where they are defined) and remembers it, so later uses of the
// name run that text.
func followAlias(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	for _, a := range cmd.Args[1:] {
		if !a.Static {
			s.opaque("alias with a definition that is not a literal")
			continue
		}
		name, val, ok := strings.Cut(a.Value, "=")
		if !ok || strings.HasPrefix(a.Value, "-") {
			continue
		}
		if s.aliases == nil {
			s.aliases = map[string]string{}
		}
		s.aliases[name] = val
		if err := s.addScript(val, depth+1, "alias"); err != nil {
			return err
		}
	}
	return nil
}

// expandAlias runs a command whose name an earlier alias in the same line
// defined: the alias text followed by the remaining words.
func (s *Script) expandAlias(val string, rest []Arg, depth int, via string) error {
	var b strings.Builder
	b.WriteString(val)
	for _, a := range rest {
		b.WriteByte(' ')
		if a.Static {
			b.WriteString(shellQuote(a.Value))
		} else {
			b.WriteString(a.Value)
		}
	}
	return s.addScript(b.String(), depth+1, via)
}

// shellQuote quotes a word for the shell.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// followHash notes `hash -p PATH NAME`, which makes NAME run PATH, and
// `enable -f`, which loads a builtin from a file.
func followHash(s *Script, cmd Command, base string, _ int) error {
	s.Commands = append(s.Commands, cmd)
	for _, a := range cmd.Args[1:] {
		if !a.Static || strings.HasPrefix(a.Value, "-") && strings.ContainsAny(a.Value[1:], map[string]string{"hash": "p", "enable": "f"}[base]) {
			s.uncertain("`" + base + " " + a.Value + "` makes a name run another program")
			return nil
		}
	}
	return nil
}

// followAssigner notes builtins that assign to the variables they name
// (read, printf -v, mapfile, getopts): a dangerous name is uncertain, and
// mapfile's -C callback is a command.
func followAssigner(s *Script, cmd Command, base string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args[1:]
	for i, a := range args {
		if base == "printf" {
			if a.Static && a.Value == "-v" && i+1 < len(args) {
				if v := args[i+1]; !v.Static || dangerousVar(strings.SplitN(v.Value, "[", 2)[0]) {
					s.uncertain("`printf -v " + v.Value + "`")
				}
			}
			continue
		}
		if !a.Static {
			s.uncertain("`" + base + "` with a word that is not a literal")
			return nil
		}
		if name, _, _ := strings.Cut(a.Value, "["); dangerousVar(name) {
			s.uncertain("`" + base + "` assigning to " + name)
		}
		if (base == "mapfile" || base == "readarray") && a.Value == "-C" && i+1 < len(args) {
			if !args[i+1].Static {
				s.opaque("`" + base + " -C` with a callback that is not a literal")
				return nil
			}
			if err := s.addScript(args[i+1].Value, depth+1, base+" -C"); err != nil {
				return err
			}
		}
	}
	return nil
}

// xargsReplace returns the replacement string of xargs -I/-i/--replace.
func xargsReplace(args []Arg) (string, bool) {
	for i, a := range args {
		v := a.Value
		switch {
		case v == "-I" && i+1 < len(args):
			return args[i+1].Value, true
		case strings.HasPrefix(v, "-I") && len(v) > 2:
			return v[2:], true
		case v == "-i" || v == "--replace":
			return "{}", true
		case strings.HasPrefix(v, "-i") && len(v) > 2:
			return v[2:], true
		case strings.HasPrefix(v, "--replace="):
			return strings.TrimPrefix(v, "--replace="), true
		case v == "--" || !strings.HasPrefix(v, "-"):
			return "", false
		}
	}
	return "", false
}

// followParallel records GNU parallel: with a command, like xargs; with
// none, each argument after ::: is a command line.
func followParallel(s *Script, cmd Command, base string, depth int) error {
	args := cmd.Args[1:]
	sep := -1
	for i, a := range args {
		if a.Static && (a.Value == ":::" || a.Value == "::::" || a.Value == ":::+" || a.Value == "::::+") {
			sep = i
			break
		}
	}
	inner, ok := skipOptions(args, "IdEeLlnPsaSjX")
	if ok && sep >= 0 && len(inner) <= len(args)-sep {
		// No command before :::: the arguments are the commands.
		s.Commands = append(s.Commands, cmd)
		for _, a := range args[sep+1:] {
			if !a.Static {
				s.opaque("parallel of a command that is not a literal")
				return nil
			}
			if strings.HasPrefix(a.Value, ":::") {
				continue
			}
			if err := s.addScript(a.Value, depth+1, "parallel"); err != nil {
				return err
			}
		}
		return nil
	}
	if sep >= 0 {
		cmd = Command{Args: append([]Arg{cmd.Args[0]}, args[:sep]...), Via: cmd.Via}
	}
	return followXargs(s, cmd, base, depth)
}

// interpreterNames are programs (not shells) that run code: given inline
// or on their input it is code cadre cannot read.
var interpreterNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"python": true, "python2": true, "python3": true, "pypy": true, "pypy3": true, "node": true, "nodejs": true,
		"bun": true, "deno": true, "perl": true, "ruby": true, "php": true, "lua": true, "luajit": true,
		"Rscript": true, "R": true, "julia": true, "osascript": true, "pwsh": true, "groovy": true,
		"tclsh": true, "wish": true, "expect": true, "irb": true, "jshell": true, "gdb": true,
	}
})

// followInterpreter records an interpreter: inline code or code read from
// its input is opaque; a program file is a file it runs.
func followInterpreter(s *Script, cmd Command, base string, _ int) error {
	s.Commands = append(s.Commands, cmd)
	if base == "gdb" {
		for _, a := range cmd.Args[1:] {
			if a.Value == "-ex" || a.Value == "-x" || a.Value == "--command" || a.Value == "--eval-command" || strings.HasPrefix(a.Value, "--eval-command=") || a.Value == "--args" {
				s.opaque("`gdb` running commands or a program")
				return nil
			}
		}
		return nil
	}
	code := inlineCode(cmd)
	if code == "" {
		for _, a := range cmd.Args[1:] {
			if !strings.HasPrefix(a.Value, "-") {
				s.runs = append(s.runs, a)
				break
			}
		}
		return nil
	}
	s.opaque(code)
	return nil
}

// followTextProgram records awk and sed, whose programs can run commands
// (awk's system() and pipes, sed's e command and s///e flag): such a
// program, or one only known when it runs, is opaque.
func followTextProgram(s *Script, cmd Command, base string, _ int) error {
	s.Commands = append(s.Commands, cmd)
	isSed := strings.HasSuffix(base, "sed")
	var progs []Arg
	explicit := false
	args := cmd.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case !a.Static && !explicit && len(progs) == 0:
			s.opaque("`" + base + "` with a program only known when it runs")
			return nil
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "-f") && len(v) > 2 && !isSed:
			s.opaque("`" + base + "` running a program file")
			return nil
		case v == "-e" || v == "--expression" || v == "--source":
			explicit = true
			if i+1 < len(args) {
				progs = append(progs, args[i+1])
				i++
			}
		case strings.HasPrefix(v, "--expression=") || strings.HasPrefix(v, "--source="):
			explicit = true
			_, after, _ := strings.Cut(v, "=")
			progs = append(progs, Arg{Value: after, Static: a.Static})
		case !isSed && (v == "-v" || v == "-F"):
			i++
		case strings.HasPrefix(v, "-") && v != "-":
		default:
			if !explicit && len(progs) == 0 {
				progs = append(progs, a)
			}
		}
	}
	for _, p := range progs {
		if !p.Static {
			s.opaque("`" + base + "` with a program only known when it runs")
			return nil
		}
		if isSed && sedRuns(p.Value) || !isSed && (strings.Contains(p.Value, "system") || strings.Contains(p.Value, "|")) {
			s.opaque("`" + base + "` program that runs commands")
			return nil
		}
	}
	return nil
}

// sedRuns reports a sed program with an e command or an s///e flag.
func sedRuns(prog string) bool {
	for _, piece := range strings.FieldsFunc(prog, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		p := strings.TrimLeft(piece, " \t0123456789$,~!")
		if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "\\") {
			// An address /re/ or \cREc: skip it.
			d := byte('/')
			start := 1
			if p[0] == '\\' && len(p) > 1 {
				d, start = p[1], 2
			}
			j := skipDelimited(p, start, d)
			p = strings.TrimLeft(p[j:], " \t0123456789$,~!")
		}
		switch {
		case strings.HasPrefix(p, "e"):
			return true
		case strings.HasPrefix(p, "s") && len(p) > 1:
			d := p[1]
			j := skipDelimited(p, 2, d)
			j = skipDelimited(p, j, d)
			for ; j < len(p) && (p[j] >= 'a' && p[j] <= 'z' || p[j] >= 'A' && p[j] <= 'Z' || p[j] >= '0' && p[j] <= '9'); j++ {
				if p[j] == 'e' {
					return true
				}
				if p[j] == 'w' {
					break
				}
			}
		}
	}
	return false
}

// skipDelimited returns the index after the next unescaped d in p from
// start (len(p) when there is none).
func skipDelimited(p string, start int, d byte) int {
	for j := start; j < len(p); j++ {
		if p[j] == '\\' {
			j++
			continue
		}
		if p[j] == d {
			return j + 1
		}
	}
	return len(p)
}

// opaque notes code cadre cannot read.
func (s *Script) opaque(reason string) {
	for _, r := range s.Opaque {
		if r == reason {
			return
		}
	}
	s.Opaque = append(s.Opaque, reason)
}

// gitSafeConfig are configuration keys (and prefixes ending in `.`) that
// `git -c` may set without making git run anything.
var gitSafeConfig = []string{
	"user.", "author.", "committer.", "color.", "advice.", "i18n.", "init.defaultbranch", "core.quotepath",
	"core.autocrlf", "core.safecrlf", "core.abbrev", "core.filemode", "core.ignorecase", "core.precomposeunicode",
	"log.", "format.pretty", "pretty.", "diff.noprefix", "diff.mnemonicprefix", "diff.renames", "diff.algorithm",
	"diff.relative", "diff.context", "commit.gpgsign", "tag.gpgsign", "push.default", "pull.rebase", "pull.ff",
	"merge.conflictstyle", "merge.ff", "rebase.autosquash", "rebase.autostash", "safe.directory", "protocol.version",
	"gc.auto", "maintenance.auto", "fetch.prune", "status.", "column.", "grep.linenumber", "grep.patterntype",
	"blame.date", "blame.coloring", "branch.sort", "tag.sort", "versionsort.", "feature.", "index.", "pack.threads",
	"checkout.defaultremote", "submodule.recurse", "http.sslverify", "credential.interactive",
}

func gitConfigSafe(key string) bool {
	for _, k := range gitSafeConfig {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) || key == k {
			return true
		}
	}
	return false
}

// gitGlobal walks git's options before the subcommand: i is the
// subcommand's index in args (len(args) when there is none), aliases the
// `-c alias.NAME=…` definitions (names lower case), bad a reason the
// options make the command uncertain.
func gitGlobal(args []Arg) (i int, aliases map[string]string, bad string) {
	for i = 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			return i, aliases, "git with a global option that is not a literal"
		}
		v := a.Value
		if !strings.HasPrefix(v, "-") {
			return i, aliases, bad
		}
		switch {
		case v == "-c" || strings.HasPrefix(v, "-c") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			kv := strings.TrimPrefix(v, "-c")
			if kv == "" {
				i++
				if i >= len(args) {
					return i, aliases, ""
				}
				if !args[i].Static {
					return i, aliases, "`git -c` with a value that is not a literal"
				}
				kv = args[i].Value
			}
			key, val, _ := strings.Cut(kv, "=")
			key = strings.ToLower(key)
			switch {
			case strings.HasPrefix(key, "alias."):
				if aliases == nil {
					aliases = map[string]string{}
				}
				aliases[strings.TrimPrefix(key, "alias.")] = val
			case !gitConfigSafe(key):
				bad = "`git -c " + key + "` may make git run a command"
			}
		case v == "--config-env" || strings.HasPrefix(v, "--config-env="):
			return i, aliases, "`git --config-env` sets configuration that may run a command"
		case strings.HasPrefix(v, "--exec-path="):
			return i, aliases, "`git --exec-path=…` runs subcommands from another directory"
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix" || v == "--list-cmds":
			i++
		}
	}
	return i, aliases, bad
}

// followGit records a git command and what it runs through `-c
// alias.NAME=…`: a `!` alias is a shell command line, another alias is
// more git words. Other `-c` keys that could run a command are uncertain.
func followGit(s *Script, cmd Command, _ string, depth int) error {
	s.Commands = append(s.Commands, cmd)
	args := cmd.Args[1:]
	i, aliases, bad := gitGlobal(args)
	if bad != "" {
		s.opaque(bad)
	}
	if i >= len(args) || len(aliases) == 0 {
		return nil
	}
	sub := args[i]
	if !sub.Static {
		s.uncertain("git subcommand that is not a literal")
		return nil
	}
	val, ok := aliases[strings.ToLower(sub.Value)]
	if !ok {
		return nil
	}
	if strings.HasPrefix(val, "!") {
		return s.expandAlias(val[1:], args[i+1:], depth, "git alias -c")
	}
	// git splits the alias text into words with shell-like quoting.
	words := patternWords(val)
	expanded := append([]Arg{cmd.Args[0]}, args[:i]...)
	for _, w := range words {
		expanded = append(expanded, Arg{Value: w, Static: true})
	}
	expanded = append(expanded, args[i+1:]...)
	// Drop the alias so a self-referencing one cannot loop.
	delete(aliases, strings.ToLower(sub.Value))
	return s.addArgs(expanded, depth+1, cmd.Via)
}

// gitCanonical returns a git command without its global options (`git -C
// d --no-pager rm x` is `git rm x`), as deny and ask rules see it; ok is
// false for other commands or when nothing was removed.
func gitCanonical(c Command) (Command, bool) {
	if len(c.Args) < 2 || baseNamed(c).Name() != "git" {
		return Command{}, false
	}
	i, _, _ := gitGlobal(c.Args[1:])
	if i == 0 || i >= len(c.Args)-1 {
		return Command{}, false
	}
	args := append([]Arg{{Value: "git", Static: true}}, c.Args[1+i:]...)
	return Command{Args: args, Via: c.Via}, true
}

// checkRuns marks the script uncertain when it runs a file the same line
// writes (`echo 'rm x' > s.sh; bash s.sh`, `cp /bin/rm d; ./d x`): what
// the file holds is only known when it runs.
func (s *Script) checkRuns() {
	written := map[string]bool{}
	anyWrite := false
	note := func(a Arg) {
		if !a.Static || a.Glob {
			anyWrite = true
			return
		}
		written[lastElem(a.Value)] = true
	}
	for _, w := range s.Writes {
		note(w)
	}
	for _, c := range s.Commands {
		switch baseNamed(c).Name() {
		case "cp", "mv", "ln", "install", "tee", "rsync", "curl", "wget", "dd", "tar", "unzip", "sed", "patch", "gcc", "cc", "go", "chmod":
			for _, a := range c.Args[1:] {
				v := a
				if a.Static && strings.Contains(a.Value, "=") {
					_, v.Value, _ = strings.Cut(a.Value, "=")
				}
				note(v)
			}
		}
	}
	var runs []Arg
	runs = append(runs, s.runs...)
	for _, c := range s.Commands {
		if len(c.Args) > 0 && c.Args[0].Static && strings.Contains(c.Args[0].Value, "/") {
			runs = append(runs, c.Args[0])
		}
	}
	for _, r := range runs {
		if !r.Static {
			s.opaque("runs a file only known when it runs: " + r.Value)
			return
		}
		if anyWrite && len(runs) > 0 || written[lastElem(r.Value)] {
			s.opaque("runs " + r.Value + ", a file the command itself may write")
			return
		}
	}
}

// lastElem returns the last element of a path.
func lastElem(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// scriptVia reports a construct whose commands run as a script of their
// own (top level, a shell's -c or input text, eval, an alias): they are
// judged like top-level commands.
func scriptVia(via string) bool {
	return via == "" || strings.HasSuffix(via, " -c") || via == "eval" || via == "alias"
}
