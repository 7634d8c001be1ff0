package cli

import (
	"fmt"
	"io"
	"strings"
)

// The start path (issue 24): a process that only asks for the version
// builds no command tree, and a headless run builds the root command
// without its subcommands. Both are choices of cost only: the command
// line means the same with or without them (TestSubcommandNamesComplete,
// the cli tests).

// printVersionOnly answers `cadre --version` and `cadre -v` before
// anything else runs. It reports whether it did; any other command line,
// --version among other flags included, goes to cobra as before.
func printVersionOnly(args []string, stdout io.Writer) bool {
	if len(args) != 1 || (args[0] != "--version" && args[0] != "-v") {
		return false
	}
	fmt.Fprintf(stdout, "cadre %s\n", Version)
	return true
}

// subcommandWords are the words that make cobra run something other than
// the root command: the names of addSubcommands' commands and cobra's own
// (help, completion, the hidden __complete and __completeNoDesc).
var subcommandWords = [...]string{
	"agents", "permissions", "skills", "mcp", "worktrees", "hooks", "trust", "config", "worker",
	"help", "completion", "__complete", "__completeNoDesc",
}

// needsSubcommands reports whether the command line may reach a
// subcommand or the help text that lists them: a word that names one
// anywhere on the line (a flag's value or a prompt of that one word
// included, so the answer errs on building them), or a help flag (-h
// alone or in a cluster of short flags, --help). Without them the root
// command runs the same: it takes at most one positional argument, and
// cobra only looks for a subcommand among the positional ones.
func needsSubcommands(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--help") {
			return true
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'h') {
			return true
		}
		for _, w := range subcommandWords {
			if a == w {
				return true
			}
		}
	}
	return false
}
