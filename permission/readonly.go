package permission

import (
	"strings"
	"sync"
)

// readOnlySpec is what makes a read-only command write or run something
// else.
type readOnlySpec struct {
	// forbidden options (exact, or prefix when ending in "=")
	forbid []string
	// maxPositional limits non-option words (-1: no limit); `uniq in out`
	// writes out.
	maxPositional int
}

// readOnlyCommands are commands that only read, with the options that would
// make them write or run something else.
var readOnlyCommands = sync.OnceValue(func() map[string]readOnlySpec {
	return map[string]readOnlySpec{
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
		"groups": {maxPositional: -1}, "arch": {maxPositional: 0},
		"tty": {maxPositional: 0}, "uptime": {maxPositional: 0}, "free": {maxPositional: 0},
		"locale": {maxPositional: -1}, "getconf": {maxPositional: -1}, "expr": {maxPositional: -1},
		"numfmt": {maxPositional: -1}, "paste": {maxPositional: -1}, "join": {maxPositional: 2},
		"expand": {maxPositional: -1}, "unexpand": {maxPositional: -1}, "fmt": {maxPositional: -1},
		"pr":    {maxPositional: -1},
		"b2sum": {maxPositional: -1}, "sha224sum": {maxPositional: -1}, "sha384sum": {maxPositional: -1},
		"sum": {maxPositional: -1}, "shuf": {forbid: []string{"-o", "--output", "--output=", "--random-source", "--random-source="}, maxPositional: -1},
		"look": {maxPositional: 2}, "lscpu": {maxPositional: 0}, "ps": {maxPositional: -1},
	}
})

// dynamicArgsOK are read-only commands whose words cannot become an option
// that makes them write or run anything, so words only known at run time
// are fine (their substitutions are checked as commands of their own).
var dynamicArgsOK = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"echo": true, "true": true, "false": true, "seq": true, "sleep": true, "basename": true,
		"dirname": true, "pwd": true,
	}
})

// readOnlyGit are git subcommands that only read whatever their words
// (the options in gitForbid aside).
var readOnlyGit = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"status": true, "diff": true, "log": true, "show": true, "rev-parse": true, "ls-files": true,
		"blame": true, "annotate": true, "describe": true, "shortlog": true, "grep": true, "rev-list": true,
		"merge-base": true, "ls-tree": true, "cat-file": true, "for-each-ref": true, "name-rev": true,
		"count-objects": true, "diff-tree": true, "diff-files": true, "diff-index": true, "whatchanged": true,
		"cherry": true, "range-diff": true, "check-ignore": true, "check-attr": true, "var": true,
		"version": true, "show-branch": true, "ls-remote": true, "show-ref": true,
	}
})

// gitReadForms decides git subcommands that read in some forms and write
// in others, from the words after the subcommand.
var gitReadForms = sync.OnceValue(func() map[string]func(args []Arg) bool {
	return map[string]func(args []Arg) bool{
		// git branch lists with no name; -d/-D/-m/-M/-c/-C/-u/-f and a name
		// (which creates a branch) write.
		"branch": func(args []Arg) bool {
			if hasWord(args, "-l", "--list") {
				// The words are patterns.
				return !hasWord(args, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force",
					"-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-t", "--track")
			}
			return listingOnly(args, []string{"--show-current", "--list", "-l", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
				"--no-color", "--color", "--column", "--no-column", "-i", "--ignore-case", "--omit-empty"},
				[]string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--abbrev", "--color", "--column"})
		},
		// git tag lists with -l/--list or no name.
		"tag": func(args []Arg) bool {
			if hasWord(args, "-l", "--list") {
				return !hasWord(args, "-d", "--delete", "-a", "-s", "-f", "--force", "-m", "-F", "-u", "--sign", "--annotate")
			}
			return listingOnly(args, []string{"-n", "--no-color", "--color", "--column", "--no-column", "-i", "--ignore-case", "--omit-empty"},
				[]string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--color", "--column"})
		},
		// git remote, -v, show, get-url read; add, remove, set-url… write.
		"remote": func(args []Arg) bool {
			for _, a := range args {
				switch a.Value {
				case "-v", "--verbose":
					continue
				case "show", "get-url":
					return !hasWord(args, "--push") || a.Value == "get-url"
				}
				return false
			}
			return true
		},
		// git config reads with --get*, --list, -l, the get/list verbs or a
		// single name; a value, --unset, --add, --edit… write.
		"config": func(args []Arg) bool {
			read := false
			var names []Arg
			for _, a := range args {
				v := a.Value
				switch {
				case v == "--get" || v == "--get-all" || v == "--get-regexp" || v == "--get-urlmatch" || v == "--list" || v == "-l" || v == "--get-color" || v == "--get-colorbool":
					read = true
				case v == "--show-origin" || v == "--show-scope" || v == "--null" || v == "-z" || v == "--name-only" || v == "--global" || v == "--system" || v == "--local" || v == "--worktree" || v == "--includes" || v == "--no-includes" || strings.HasPrefix(v, "--type=") || v == "--bool" || v == "--int" || v == "--path" || v == "--all" || v == "--regexp" || strings.HasPrefix(v, "--default="):
				case strings.HasPrefix(v, "-"):
					// --unset, --add, --replace-all, --edit, --file (an
					// arbitrary file), --blob, …
					return false
				default:
					names = append(names, a)
				}
			}
			if len(names) > 0 && (names[0].Value == "get" || names[0].Value == "list") {
				return len(names) <= 2
			}
			if read {
				return true
			}
			return len(names) == 1
		},
		// git stash list/show; git worktree list; git reflog (show); git
		// notes list/show; git symbolic-ref NAME; git submodule status.
		"stash": func(args []Arg) bool { return len(args) > 0 && (args[0].Value == "list" || args[0].Value == "show") },
		"worktree": func(args []Arg) bool {
			return len(args) > 0 && args[0].Value == "list"
		},
		"reflog": func(args []Arg) bool {
			return len(args) == 0 || args[0].Value == "show" || strings.HasPrefix(args[0].Value, "-") && !hasWord(args, "expire", "delete")
		},
		"notes":     func(args []Arg) bool { return len(args) > 0 && (args[0].Value == "list" || args[0].Value == "show") },
		"submodule": func(args []Arg) bool { return len(args) > 0 && args[0].Value == "status" },
		"symbolic-ref": func(args []Arg) bool {
			n := 0
			for _, a := range args {
				if a.Value == "-d" || a.Value == "--delete" || a.Value == "-m" {
					return false
				}
				if !strings.HasPrefix(a.Value, "-") {
					n++
				}
			}
			return n == 1
		},
	}
})

// listingOnly reports words that are all listing options (flags, or
// options in withValue with their value): no name that would create or
// change something.
func listingOnly(args []Arg, flags, withValue []string) bool {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		name, _, hasVal := strings.Cut(v, "=")
		switch {
		case slicesContains(flags, v):
		case slicesContains(withValue, name):
			if !hasVal {
				i++
			}
		default:
			return false
		}
	}
	return true
}

func slicesContains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// hasWord reports one of the words among args.
func hasWord(args []Arg, words ...string) bool {
	for _, a := range args {
		if slicesContains(words, a.Value) {
			return true
		}
	}
	return false
}

var gitForbid = []string{"--output", "--output=", "--ext-diff", "-O", "--open-files-in-pager", "--open-files-in-pager=", "--textconv"}

// readOnlyCommand reports whether one simple command only reads, and which
// of its words may be paths to check. A command reached through xargs,
// sudo or find -exec is never read-only on its own account.
func readOnlyCommand(c Command) (paths []Arg, ok bool) {
	name := c.Name()
	if name == "" || !scriptVia(c.Via) {
		return nil, false
	}
	if name == "command" && len(c.Args) >= 2 && (c.Args[1].Value == "-v" || c.Args[1].Value == "-V") {
		return nil, true
	}
	if name == "git" {
		return readOnlyGitCommand(c.Args[1:])
	}
	spec, known := readOnlyCommands()[name]
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
			if dynamicArgsOK()[name] {
				continue
			}
			return nil, false
		}
		if forbidden(a.Value, spec.forbid) {
			return nil, false
		}
		if strings.HasPrefix(a.Value, "-") && a.Value != "-" {
			paths = append(paths, optionPaths(a.Value)...)
			continue
		}
		positional++
		paths = append(paths, a)
		paths = append(paths, optionPaths(a.Value)...)
	}
	if spec.maxPositional >= 0 && positional > spec.maxPositional {
		return nil, false
	}
	switch name {
	case "echo", "printf", "true", "false", "seq", "sleep", "test", "[", "basename", "dirname", "which", "type", "tr", "id", "date",
		"expr", "locale", "getconf", "numfmt", "groups", "ps", "arch", "tty", "uptime", "free", "lscpu":
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
	if i >= len(args) || !args[i].Static {
		return nil, false
	}
	if sub := args[i].Value; !readOnlyGit()[sub] {
		form, ok := gitReadForms()[sub]
		if !ok {
			return nil, false
		}
		for _, a := range args[i+1:] {
			if !a.Static {
				return nil, false
			}
		}
		if !form(args[i+1:]) {
			return nil, false
		}
	}
	for _, a := range args[i+1:] {
		if !a.Static || forbidden(a.Value, gitForbid) {
			return nil, false
		}
		if !strings.HasPrefix(a.Value, "-") && looksLikePath(a.Value) {
			paths = append(paths, a)
		}
		paths = append(paths, optionPaths(a.Value)...)
	}
	return paths, true
}

// optionPaths returns the files an option word may name for the program
// to read: the value of `--name=VALUE` (git blame --contents=FILE, grep
// --file=FILE), a path glued to a short option (`-f/etc/x`), and the file
// of an `@FILE` argument (a response file). Read rules and the working
// directory check see them like any path word; a value that is no path
// resolves inside the working directory and changes nothing.
func optionPaths(v string) []Arg {
	var out []Arg
	add := func(p string) {
		if p != "" {
			out = append(out, Arg{Value: p, Static: true, Tilde: strings.HasPrefix(p, "~")})
		}
	}
	switch {
	case strings.HasPrefix(v, "--"):
		if _, val, ok := strings.Cut(v, "="); ok {
			add(strings.TrimPrefix(val, "@"))
		}
	case strings.HasPrefix(v, "-") && len(v) > 2:
		if _, val, ok := strings.Cut(v, "="); ok {
			add(val)
		} else if rest := v[2:]; looksLikePath(rest) || strings.Contains(rest, "/") {
			add(rest)
		}
	case strings.HasPrefix(v, "@") && len(v) > 1 && !strings.HasPrefix(v, "@{"):
		add(v[1:])
	}
	return out
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
var editCommands = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"mkdir": true, "touch": true, "cp": true, "mv": true, "rmdir": true}
})

// editCommand returns the paths an edit command writes (every word that is
// not an option, plus option values that look like paths). ok is false
// for other commands and for words only known at run time.
func editCommand(c Command) (paths []Arg, ok bool) {
	name := c.Name()
	if !editCommands()[name] || !scriptVia(c.Via) {
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
