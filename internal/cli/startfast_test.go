package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// `cadre --version` builds no command tree: answering it costs a couple
// of allocations, where building cobra's root command and its flags costs
// thousands (issue 24). The count is deterministic, the time is not.
func TestVersionBuildsNoCommandTree(t *testing.T) {
	var out bytes.Buffer
	getenv := func(string) string { return "" }
	for _, arg := range []string{"--version", "-v"} {
		allocs := testing.AllocsPerRun(20, func() {
			out.Reset()
			if code := Main([]string{arg}, nil, &out, &out, getenv); code != ExitOK {
				t.Fatalf("cadre %s: exit %d", arg, code)
			}
		})
		if out.String() != "cadre "+Version+"\n" {
			t.Fatalf("cadre %s printed %q", arg, out.String())
		}
		// The root command alone, for scale: what --version no longer pays.
		tree := testing.AllocsPerRun(5, func() { newRootOnlyCmd(t.Context(), procIO{getenv: getenv}, nil) })
		if allocs > 4 || tree < 100 {
			t.Errorf("cadre %s: %.0f allocations (bound 4); building the root command takes %.0f", arg, allocs, tree)
		}
	}
}

// Every word that reaches a subcommand is in subcommandWords, or a
// headless run would take a subcommand's name for a prompt.
func TestSubcommandWordsComplete(t *testing.T) {
	ctx, sigs := withSignals(t.Context())
	defer sigs.stop()
	var out bytes.Buffer
	root := newRootCmd(ctx, procIO{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}, sigs)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	words := []string{cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd}
	for _, c := range root.Commands() {
		words = append(words, c.Name())
		words = append(words, c.Aliases...)
	}
	for _, w := range words {
		if !slices.Contains(subcommandWords[:], w) {
			t.Errorf("subcommand word %q is missing from subcommandWords", w)
		}
	}
	if len(words) < 8 {
		t.Fatalf("found only %v; the command tree is not what this test expects", words)
	}
}

func TestNeedsSubcommands(t *testing.T) {
	for _, tc := range []struct {
		args string
		want bool
	}{
		{"-p hi", false},
		{"-p|fix the agents file|--model|sonnet", false},
		{"--output-format stream-json --input-format stream-json", false},
		{"--debug api -p hello", false},
		{"", false},
		{"agents", true},
		{"-p agents", true},
		{"mcp list", true},
		{"--model sonnet worktrees prune", true},
		{"help", true},
		{"completion bash", true},
		{"__complete -", true},
		{"-h", true},
		{"--help", true},
		{"-ph", true},
		{"-p hi --help", true},
	} {
		sep := " "
		if strings.Contains(tc.args, "|") {
			sep = "|"
		}
		args := strings.Split(tc.args, sep)
		if tc.args == "" {
			args = nil
		}
		if got := needsSubcommands(args); got != tc.want {
			t.Errorf("needsSubcommands(%q) = %v, want %v", args, got, tc.want)
		}
	}
}

// --help still lists the subcommands; a subcommand still runs.
func TestHelpListsSubcommands(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--help", "-h"} {
		p := runCadre(t, nil, "", arg)
		if p.code != 0 || !strings.Contains(p.stdout, "Available Commands:") || !strings.Contains(p.stdout, "worktrees") || !strings.Contains(p.stdout, "--print") {
			t.Fatalf("cadre %s: %d %q %q", arg, p.code, p.stdout, p.stderr)
		}
	}
	p := runCadre(t, nil, "", "-p", "hi", "--version")
	if p.code != 0 || p.stdout != "cadre "+Version+"\n" {
		t.Fatalf("cadre -p hi --version: %d %q %q", p.code, p.stdout, p.stderr)
	}
}
