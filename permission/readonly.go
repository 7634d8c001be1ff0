package permission

import "strings"

// readOnlyCommands are commands that only read, with the options that would
// make them write or run something else.
var readOnlyCommands = map[string]struct {
	// forbidden options (exact, or prefix when ending in "=")
	forbid []string
	// maxPositional limits non-option words (-1: no limit); `uniq in out`
	// writes out.
	maxPositional int
}{
	"ls": {maxPositional: -1}, "cat": {maxPositional: -1}, "head": {maxPositional: -1},
	"tail": {maxPositional: -1}, "wc": {maxPositional: -1}, "pwd": {maxPositional: 0},
	"echo": {maxPositional: -1}, "printf": {forbid: []string{"-v"}, maxPositional: -1},
	"grep": {maxPositional: -1}, "egrep": {maxPositional: -1}, "fgrep": {maxPositional: -1},
	"rg":   {forbid: []string{"--pre", "--pre=", "--pre-glob", "--pre-glob="}, maxPositional: -1},
	"find": {forbid: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}, maxPositional: -1},
	"true": {maxPositional: -1}, "false": {maxPositional: -1},
	"whoami": {maxPositional: 0}, "id": {maxPositional: 1}, "uname": {maxPositional: 0},
	"which": {maxPositional: -1}, "type": {maxPositional: -1}, "basename": {maxPositional: -1},
	"dirname": {maxPositional: -1}, "realpath": {maxPositional: -1}, "readlink": {maxPositional: -1},
	"stat": {maxPositional: -1}, "du": {maxPositional: -1}, "df": {maxPositional: -1},
	"file": {forbid: []string{"-C", "--compile"}, maxPositional: -1},
	"tree": {forbid: []string{"-o", "-R"}, maxPositional: -1},
	"sort": {forbid: []string{"-o", "--output", "--output=", "--compress-program", "--compress-program="}, maxPositional: -1},
	"uniq": {maxPositional: 1},
	"cut":  {maxPositional: -1}, "tr": {maxPositional: 2}, "nl": {maxPositional: -1},
	"od": {maxPositional: -1}, "hexdump": {maxPositional: -1}, "xxd": {forbid: []string{"-r"}, maxPositional: 1},
	"md5sum": {maxPositional: -1}, "sha1sum": {maxPositional: -1}, "sha256sum": {maxPositional: -1},
	"sha512sum": {maxPositional: -1}, "cksum": {maxPositional: -1},
	"jq": {maxPositional: -1}, "diff": {maxPositional: -1}, "cmp": {maxPositional: -1}, "comm": {maxPositional: -1},
	"column": {maxPositional: -1}, "fold": {maxPositional: -1}, "rev": {maxPositional: -1},
	"seq": {maxPositional: -1}, "tac": {maxPositional: -1}, "strings": {maxPositional: -1},
	"nproc": {maxPositional: 0}, "date": {forbid: []string{"-s", "--set", "--set="}, maxPositional: -1},
	"test": {forbid: []string{"-v", "-R"}, maxPositional: -1}, "[": {forbid: []string{"-v", "-R"}, maxPositional: -1},
	"sleep": {maxPositional: -1}, "hostname": {maxPositional: 0},
}

// dynamicArgsOK are read-only commands whose words cannot become an option
// that makes them write or run anything, so words only known at run time
// are fine (their substitutions are checked as commands of their own).
var dynamicArgsOK = map[string]bool{
	"echo": true, "true": true, "false": true, "seq": true, "sleep": true, "basename": true,
	"dirname": true, "pwd": true,
}

// readOnlyGit are git subcommands that only read.
var readOnlyGit = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "rev-parse": true, "ls-files": true,
	"blame": true, "describe": true, "shortlog": true, "grep": true,
}

var gitForbid = []string{"--output", "--output=", "--ext-diff", "-O", "--open-files-in-pager", "--open-files-in-pager=", "--textconv"}

// readOnlyCommand reports whether one simple command only reads, and which
// of its words may be paths to check. A command reached through xargs,
// sudo or find -exec is never read-only on its own account.
func readOnlyCommand(c Command) (paths []Arg, ok bool) {
	name := c.Name()
	if name == "" || c.Via != "" && !strings.HasSuffix(c.Via, " -c") && c.Via != "eval" {
		return nil, false
	}
	if name == "command" && len(c.Args) >= 2 && (c.Args[1].Value == "-v" || c.Args[1].Value == "-V") {
		return nil, true
	}
	if name == "git" {
		return readOnlyGitCommand(c.Args[1:])
	}
	spec, known := readOnlyCommands[name]
	if !known {
		return nil, false
	}
	if name == "date" {
		for _, a := range c.Args[1:] {
			if !strings.HasPrefix(a.Value, "+") && !strings.HasPrefix(a.Value, "-") {
				return nil, false
			}
		}
	}
	positional := 0
	for _, a := range c.Args[1:] {
		if !a.Static {
			if dynamicArgsOK[name] {
				continue
			}
			return nil, false
		}
		if forbidden(a.Value, spec.forbid) {
			return nil, false
		}
		if strings.HasPrefix(a.Value, "-") && a.Value != "-" {
			if _, v, ok := strings.Cut(a.Value, "="); ok && looksLikePath(v) {
				paths = append(paths, Arg{Value: v, Static: true, Tilde: strings.HasPrefix(v, "~")})
			}
			continue
		}
		positional++
		paths = append(paths, a)
	}
	if spec.maxPositional >= 0 && positional > spec.maxPositional {
		return nil, false
	}
	switch name {
	case "echo", "printf", "true", "false", "seq", "sleep", "test", "[", "basename", "dirname", "which", "type", "tr", "id", "date":
		// Their words are not files.
		return nil, true
	}
	return paths, true
}

func readOnlyGitCommand(args []Arg) ([]Arg, bool) {
	// Global options before the subcommand: -C DIR and --no-pager only.
	i := 0
	var paths []Arg
	for i < len(args) && strings.HasPrefix(args[i].Value, "-") {
		a := args[i]
		if !a.Static {
			return nil, false
		}
		switch a.Value {
		case "--no-pager", "-P":
			i++
		case "-C":
			if i+1 >= len(args) || !args[i+1].Static {
				return nil, false
			}
			paths = append(paths, args[i+1])
			i += 2
		default:
			return nil, false
		}
	}
	if i >= len(args) || !args[i].Static || !readOnlyGit[args[i].Value] {
		return nil, false
	}
	for _, a := range args[i+1:] {
		if !a.Static || forbidden(a.Value, gitForbid) {
			return nil, false
		}
		if !strings.HasPrefix(a.Value, "-") && looksLikePath(a.Value) {
			paths = append(paths, a)
		}
	}
	return paths, true
}

func forbidden(v string, list []string) bool {
	for _, f := range list {
		if strings.HasSuffix(f, "=") {
			if strings.HasPrefix(v, f) {
				return true
			}
		} else if v == f {
			return true
		}
	}
	// Clustered short options: -rf contains -r.
	if len(v) > 2 && v[0] == '-' && v[1] != '-' {
		for _, f := range list {
			if len(f) == 2 && f[0] == '-' && strings.IndexByte(v[1:], f[1]) >= 0 {
				return true
			}
		}
	}
	return false
}

// looksLikePath is true for words that name files outside the obvious
// relative case: absolute, home-relative or containing `..`.
func looksLikePath(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.Contains(v, "..")
}

// BashReadOnly reports whether a Bash command only reads: it parses, every
// simple command in it is on the read-only list with no option that writes
// or runs something else, nothing is redirected to a file, and nothing in
// it is uncertain. Paths are not checked here; Check does that.
func BashReadOnly(command string) bool {
	s, err := SplitBash(command)
	if err != nil || len(s.Uncertain) > 0 || len(s.Writes) > 0 {
		return false
	}
	for _, c := range s.Commands {
		if _, ok := readOnlyCommand(c); !ok {
			return false
		}
	}
	return true
}

// editCommands change files only at the paths they are given; acceptEdits
// runs them when every path is inside the working directories.
var editCommands = map[string]bool{"mkdir": true, "touch": true, "cp": true, "mv": true, "rmdir": true}

// editCommand returns the paths an edit command writes (every word that is
// not an option, plus option values that look like paths). ok is false
// for other commands and for words only known at run time.
func editCommand(c Command) (paths []Arg, ok bool) {
	name := c.Name()
	if !editCommands[name] || c.Via != "" && !strings.HasSuffix(c.Via, " -c") && c.Via != "eval" {
		return nil, false
	}
	for _, a := range c.Args[1:] {
		if !a.Static {
			return nil, false
		}
		if strings.HasPrefix(a.Value, "-") && a.Value != "-" {
			if _, v, ok := strings.Cut(a.Value, "="); ok {
				paths = append(paths, Arg{Value: v, Static: true, Tilde: strings.HasPrefix(v, "~")})
			}
			continue
		}
		paths = append(paths, a)
	}
	return paths, len(paths) > 0
}
