// Package worktreecmd is the `cadre worktrees` command: list the git
// worktrees of isolated agents with their state, prune the abandoned
// unchanged ones, and merge a kept one back.
package worktreecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// options are the flags every worktrees subcommand shares.
type options struct {
	cwd string
}

// New returns the `worktrees` command with `list`, `prune` and `merge`.
func New() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "worktrees",
		Short: "List, prune and merge the git worktrees of isolated agents",
		Long: `Agents started with isolation: worktree work in git worktrees under
.cadre/worktrees/ of the repository, each on a branch worktree-agent-<id>.
A tree with no changes is removed when its agent ends; a tree with changes is
kept. These commands show them, remove the ones a crash left behind, and
merge a kept one back.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&o.cwd, "cwd", "", "a directory in the repository (default: the current directory)")
	cmd.AddCommand(newList(o), newPrune(o), newMerge(o))
	return cmd
}

// fail wraps an error so that cadre exits 1 with its message.
func fail(err error) error { return &agentscmd.ExitError{Code: 1, Err: err} }

// manager returns a worktree manager and the absolute directory to work
// in.
func (o *options) manager() (*worktree.Manager, string, error) {
	dir := o.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, "", fail(fmt.Errorf("working directory: %w", err))
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", fail(fmt.Errorf("--cwd: %w", err))
	}
	m, err := worktree.New(worktree.Config{})
	if err != nil {
		return nil, "", fail(err)
	}
	return m, dir, nil
}

func newList(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show each agent worktree: path, branch, agent, session and state",
		Long: `Show each worktree under .cadre/worktrees with its state:
  running   its agent's process still runs
  changed   its agent has ended and it holds work (kept until merged or removed)
  orphaned  its agent's process is gone and it holds no work ('prune' removes it)
  unknown   no cadre record, or it cannot be inspected (left alone)`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, dir, err := o.manager()
			if err != nil {
				return err
			}
			entries, err := m.List(cmd.Context(), dir)
			if err != nil {
				return fail(err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), entries)
			}
			writeTable(cmd.OutOrStdout(), entries)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the worktrees as a JSON array")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(fmt.Errorf("write JSON: %w", err))
	}
	return nil
}

// writeTable prints one line per worktree, paths relative to the
// repository's main tree.
func writeTable(w io.Writer, entries []worktree.Entry) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "No agent worktrees.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tBRANCH\tAGENT\tSESSION\tSTATE\tDETAIL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", relPath(e), dash(e.Branch), dash(e.AgentID), dash(e.SessionID), e.State, detail(e))
	}
	tw.Flush()
}

func relPath(e worktree.Entry) string {
	if rel, err := filepath.Rel(e.Root, e.Path); err == nil && e.Root != "" {
		return rel
	}
	return e.Path
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// detail sums up an entry in a few words: the work of a changed tree, the
// process of a running one, the note otherwise.
func detail(e worktree.Entry) string {
	var parts []string
	if c := e.Changes; c != nil {
		if c.CommitCount > 0 {
			parts = append(parts, plural(c.CommitCount, "commit"))
		}
		if n := len(c.Committed); n > 0 {
			parts = append(parts, plural(n, "file")+" committed")
		}
		if n := len(c.Uncommitted); n > 0 {
			parts = append(parts, plural(n, "file")+" uncommitted")
		}
		if c.Omitted > 0 {
			parts = append(parts, fmt.Sprintf("%d more files", c.Omitted))
		}
	}
	if e.State == worktree.StateRunning && e.PID > 0 {
		parts = append(parts, fmt.Sprintf("pid %d", e.PID))
	}
	if e.Missing {
		parts = append(parts, "directory missing")
	}
	if len(parts) == 0 && e.State == worktree.StateUnknown {
		parts = append(parts, e.Note)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func newPrune(o *options) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove the worktrees whose agents are gone and that hold no work",
		Long: `Remove orphaned worktrees: those whose agent's process is gone and that hold
no uncommitted change and no commit beyond their start, with their branches.
Trees that hold work, trees of running agents and trees without a cadre record
are never touched.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, dir, err := o.manager()
			if err != nil {
				return err
			}
			pruned, err := m.Prune(cmd.Context(), dir, dryRun)
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			out := cmd.OutOrStdout()
			for _, e := range pruned {
				fmt.Fprintf(out, "%s %s (branch %s, agent %s)\n", verb, relPath(e), e.Branch, e.AgentID)
			}
			if len(pruned) == 0 && err == nil {
				fmt.Fprintln(out, "Nothing to prune.")
			}
			if err != nil {
				return fail(err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only print what would be removed")
	return cmd
}

func newMerge(o *options) *cobra.Command {
	var (
		branch           string
		cherryPick       bool
		remove           bool
		leaveUncommitted bool
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   "merge [AGENT-ID] [--branch NAME]",
		Short: "Merge a kept worktree's work into the current tree",
		Long: `Merge the branch of a kept worktree (named by its agent id, or by --branch)
into the tree of --cwd. Uncommitted changes in the worktree are first committed
on its branch unless --leave-uncommitted is given. On conflicts the merge is
aborted, the tree left as it was, the conflicting files printed, and the
command exits 1.`,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			req := worktree.MergeRequest{Branch: branch, Remove: remove, LeaveUncommitted: leaveUncommitted, Strategy: worktree.StrategyMerge}
			if cherryPick {
				req.Strategy = worktree.StrategyCherryPick
			}
			if len(args) == 1 {
				req.AgentID = strings.TrimPrefix(args[0], "agent-")
			}
			m, dir, err := o.manager()
			if err != nil {
				return err
			}
			req.Dir = dir
			res, err := m.Merge(cmd.Context(), req)
			if err != nil {
				return fail(err)
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else {
				writeMerge(cmd.OutOrStdout(), res)
			}
			if res.Status == worktree.MergeConflict {
				return &agentscmd.ExitError{Code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&branch, "branch", "", "merge this branch instead of an agent's")
	f.BoolVar(&cherryPick, "cherry-pick", false, "apply the branch's commits one by one instead of merging")
	f.BoolVar(&remove, "remove", false, "after a successful merge, remove the worktree and its branch")
	f.BoolVar(&leaveUncommitted, "leave-uncommitted", false, "merge only what is committed on the branch")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// writeMerge prints a merge result for a person.
func writeMerge(w io.Writer, r worktree.MergeResult) {
	if r.Committed != nil {
		fmt.Fprintf(w, "committed the worktree's uncommitted changes as %s\n", short(r.Committed.Hash))
	}
	switch r.Status {
	case worktree.MergeUpToDate:
		fmt.Fprintf(w, "%s: already up to date\n", r.Branch)
	case worktree.MergeDone:
		fmt.Fprintf(w, "merged %s (%s) — HEAD is now %s\n", r.Branch, plural(len(r.Commits), "commit"), short(r.Head))
	case worktree.MergeConflict:
		fmt.Fprintf(w, "conflict merging %s; aborted, the tree is as it was\n", r.Branch)
		if r.ConflictCommit != nil {
			fmt.Fprintf(w, "the commit that did not apply: %s %s\n", short(r.ConflictCommit.Hash), r.ConflictCommit.Subject)
		}
		for _, f := range r.Conflicts {
			fmt.Fprintf(w, "  conflict: %s\n", f)
		}
	}
	for _, f := range r.Uncommitted {
		fmt.Fprintf(w, "  left uncommitted in the worktree: %s (%s)\n", f.Path, f.Status)
	}
	if r.Identity != "" {
		fmt.Fprintf(w, "note: %s\n", r.Identity)
	}
	if r.Removed {
		fmt.Fprintf(w, "removed the worktree and branch %s\n", r.Branch)
	} else if r.NotRemoved != "" {
		fmt.Fprintf(w, "kept the worktree: %s\n", r.NotRemoved)
	}
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
