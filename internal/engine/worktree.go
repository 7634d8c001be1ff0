package engine

// Worktree isolation (S-9.1, S-15.5): an agent started with
// `isolation: worktree` (its definition or its Agent call) works in its
// own git worktree at <git root>/.cadre/worktrees/agent-<id> on a branch
// worktree-agent-<id>, made by internal/worktree through the git binary.
//
// The tree is held by leases: the agent's own, and one per descendant that
// works in it without a tree of its own. When the last lease is released
// the tree is inspected: unchanged, it is removed with its branch;
// changed (a dirty tree, untracked files included, or commits), it is kept
// and the report, the structured result and the .meta.json name its path,
// branch, commits and files. Release runs on every path — success, error,
// cancellation, a panic in the loop — and never deletes a changed tree.
//
// The child's working directory and working directories are the worktree,
// and Edit deny rules (source IsolationRuleSource) cover everything else
// of the repository's working tree that exists when it starts, so file
// tools and Bash cannot write the parent's tree in any mode. It is told
// where it is, and that inherited paths refer to the parent's tree.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/workspace"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// IsolationRuleSource is the source of the deny rules that keep an agent
// in a worktree from writing the parent's tree.
const IsolationRuleSource = "worktree isolation"

// WorktreeBase values (Config.WorktreeBase).
const (
	// WorktreeBaseHead starts a worktree at the parent's current HEAD.
	WorktreeBaseHead = string(worktree.BaseHead)
	// WorktreeBaseDefault starts it at a fresh ref of the default branch
	// (origin's, fetched now; without a remote the local one).
	WorktreeBaseDefault = string(worktree.BaseDefault)
)

// WorktreeHooks makes and removes the directories of isolated agents in
// place of git: the seam for the WorktreeCreate and WorktreeRemove hooks
// (S-14), which let isolation work with other version control systems.
// Config.WorktreeHooks nil, or HandlesWorktrees false, uses git.
type WorktreeHooks interface {
	// HandlesWorktrees reports whether hooks make worktrees now (a
	// WorktreeCreate hook is configured); asked at every creation.
	HandlesWorktrees() bool
	// CreateWorktree makes the directory and returns its absolute path.
	CreateWorktree(ctx context.Context, req WorktreeHookRequest) (path string, err error)
	// RemoveWorktree disposes of a directory CreateWorktree made, when the
	// last agent working in it ends. cadre cannot inspect such a
	// directory, so keeping work is the hook's job.
	RemoveWorktree(ctx context.Context, req WorktreeHookRequest) error
}

// WorktreeHookRequest is what a WorktreeHooks is told.
type WorktreeHookRequest struct {
	// Name is the tree's name, agent-<id>.
	Name      string
	AgentID   string
	SessionID string
	// Dir is the parent's working directory.
	Dir string
	// Path is the directory CreateWorktree returned (RemoveWorktree only).
	Path string
}

// hookAdapter turns the Runtime's WorktreeHooks into the worktree
// package's Creator and Remover.
type hookAdapter struct{ r *Runtime }

func (a hookAdapter) CreateWorktree(ctx context.Context, req worktree.HookRequest) (string, error) {
	h := glueOf(a.r).worktreeHooks()
	if h == nil {
		return "", errors.New("no worktree hooks")
	}
	return h.CreateWorktree(ctx, WorktreeHookRequest(req))
}

func (a hookAdapter) RemoveWorktree(ctx context.Context, req worktree.HookRequest) error {
	h := glueOf(a.r).worktreeHooks()
	if h == nil {
		return errors.New("no worktree hooks")
	}
	return h.RemoveWorktree(ctx, WorktreeHookRequest(req))
}

// worktreeHooks is what makes and removes worktrees in place of git: the
// seam for the WorktreeCreate and WorktreeRemove hooks. It is
// Config.WorktreeHooks; the session's hook dispatcher can answer here
// when that is nil (an implementation whose HandlesWorktrees reports
// whether a WorktreeCreate hook is configured). nil uses git.
func (sg sessionGlue) worktreeHooks() WorktreeHooks {
	r := sg.r
	if r.cfg.WorktreeHooks != nil {
		return r.cfg.WorktreeHooks
	}
	if r.hooks == nil {
		return nil
	}
	// The session's WorktreeCreate/WorktreeRemove hooks (hooks.go), while
	// one is configured.
	return sessionWorktreeHooks{hookWorktrees{r}}
}

// sessionWorktreeHooks offers the session's hooks as a WorktreeHooks.
type sessionWorktreeHooks struct{ h hookWorktrees }

func (s sessionWorktreeHooks) HandlesWorktrees() bool { return s.h.HandlesWorktrees() }

func (s sessionWorktreeHooks) CreateWorktree(ctx context.Context, req WorktreeHookRequest) (string, error) {
	return s.h.CreateWorktree(ctx, worktree.HookRequest(req))
}

func (s sessionWorktreeHooks) RemoveWorktree(ctx context.Context, req WorktreeHookRequest) error {
	return s.h.RemoveWorktree(ctx, worktree.HookRequest(req))
}

// worktrees is the Runtime's worktree machinery: the managers and the
// session-start housekeeping, done once.
type worktrees struct {
	base   worktree.Base
	git    *worktree.Manager // nil when git is missing
	gitErr error
	hooked *worktree.Manager // trees made by Config.WorktreeHooks; nil without

	houseOnce sync.Once
	house     *run.WorktreeHousekeeping
}

// newWorktrees prepares the managers. A missing git binary is not an
// error here: only an isolation request fails, naming it.
func (sg sessionGlue) newWorktrees() (*worktrees, error) {
	r := sg.r
	cfg := &r.cfg
	base, err := worktree.ParseBase(cfg.WorktreeBase)
	if err != nil {
		return nil, fmt.Errorf("Config.WorktreeBase: %w", err)
	}
	w := &worktrees{base: base}
	// The repository's post-checkout hook runs in a new tree only in a
	// workspace the user trusts (no Provenance: the embedding program
	// decided what to load, so it is trusted).
	trusted := cfg.Provenance == nil || cfg.Provenance.Trusted
	// git is looked up in PATH once for both managers ("" when it is not
	// there: New then says why).
	bin, _ := exec.LookPath("git")
	w.git, w.gitErr = worktree.New(worktree.Config{Git: bin, Now: cfg.Now, RunHooks: trusted})
	a := hookAdapter{r}
	if w.hooked, err = worktree.New(worktree.Config{Git: bin, Creator: a, Remover: a, Now: cfg.Now}); err != nil {
		return nil, fmt.Errorf("worktree hooks: %w", err)
	}
	return w, nil
}

// worktreeManager is the manager that makes the next tree: the hooks'
// when they handle worktrees now, else git's.
func (sg sessionGlue) worktreeManager() (*worktree.Manager, error) {
	r := sg.r
	if sg.hooksMakeWorktrees() {
		return r.worktrees.hooked, nil
	}
	if r.worktrees.git == nil {
		return nil, r.worktrees.gitErr
	}
	return r.worktrees.git, nil
}

// hooksMakeWorktrees reports whether hooks make the next worktree.
func (sg sessionGlue) hooksMakeWorktrees() bool {
	h := sg.worktreeHooks()
	return h != nil && h.HandlesWorktrees()
}

// isolationOffered reports whether the Agent tool offers isolation: the
// session's directory is in a git repository, hooks make worktrees, or
// remote agents are configured.
func (sg sessionGlue) isolationOffered() bool {
	r := sg.r
	if sg.hooksMakeWorktrees() || r.cfg.Remote.Executor != nil {
		return true // a remote agent needs no repository (remote.go)
	}
	_, ok := workspace.FindRepo(r.cfg.Cwd)
	return ok
}

// checkIsolation validates the isolation a call or definition asks for; a
// refusal starts nothing (S-3.1: cwd excludes isolation: worktree; outside
// a git repository a clear error, no spawn).
func (tg treeGlue) checkIsolation(q isolationRequest) (agentdef.Isolation, *refusal) {
	a := tg.a
	kind := tg.remoteKind(q.kind()) // remote.go: --remote
	switch kind {
	case "":
		return "", nil
	case agentdef.IsolationWorktree:
	case agentdef.IsolationRemote:
		return kind, tg.checkRemote(q) // remote.go
	default:
		return "", &refusal{msg: prompts.IsolationUnsupported(string(kind))}
	}
	if q.cwd != "" {
		return "", &refusal{msg: prompts.IsolationWithCwd()}
	}
	if _, ok := workspace.FindRepo(a.env.Cwd); !ok && !glueOf(a.run.rt).hooksMakeWorktrees() {
		return "", &refusal{msg: prompts.IsolationNotInRepo(a.env.Cwd)}
	}
	return kind, nil
}

// isolationRequest is what decides a child's isolation: the call's
// argument over the definition's key, and the call's cwd.
type isolationRequest struct {
	call, def agentdef.Isolation
	cwd       string
}

func (q *isolationRequest) kind() agentdef.Isolation {
	return agentdef.Isolation(strings.TrimSpace(string(cmp.Or(q.call, q.def))))
}

// enter puts the child in its worktree before it runs: a new tree
// when it is isolated, else a lease on its parent's tree when the parent
// works in one (the tree then lives until both have ended). It returns a
// refusal text when the tree could not be made; nothing has started then.
func (tg treeGlue) enter(ctx context.Context, parent *agent) (string, bool) {
	c := tg.a
	rt := c.run.rt
	if c.isolation == "" {
		if parent.tree == nil {
			return "", true
		}
		l, err := parent.tree.Acquire()
		if err != nil {
			// The parent's lease is gone: the parent has ended, which a
			// running parent's call cannot see. Run without the tree.
			c.warn("the parent's worktree was already released: " + err.Error())
			return "", true
		}
		c.tree = l
		return "", true
	}
	m, err := glueOf(rt).worktreeManager()
	if err != nil {
		return prompts.WorktreeNotCreated(err), false
	}
	l, err := m.Create(ctx, worktree.Request{Dir: parent.env.Cwd, AgentID: c.id, SessionID: rt.session, Base: rt.worktrees.base})
	if err != nil {
		if errors.Is(err, worktree.ErrNotGitRepo) {
			return prompts.IsolationNotInRepo(parent.env.Cwd), false
		}
		return prompts.WorktreeNotCreated(err), false
	}
	c.tree, c.ownsTree = l, true
	info := l.Info()
	for _, w := range info.Warnings {
		c.warn("worktree: " + w)
	}
	cwd := treeCwd(parent.env.Cwd, info.Path)
	c.env.Cwd = cwd
	c.env.Dirs = append([]string{info.Path}, c.env.Dirs...)
	if gitDir := filepath.Join(info.Root, ".git"); info.Root != "" && isDir(gitDir) {
		// Committing writes objects and the tree's index into the
		// repository's git directory: the sandbox must let Bash write
		// there. Writes into .git by file tools still need approval.
		c.env.Dirs = append(c.env.Dirs, gitDir)
	}
	// The parent's file-state cache names the parent's files, not these.
	c.env.Files = tool.NewFileState()
	if c.fork {
		// A fork keeps its parent's system prompt bytes; it is told
		// about its tree after its directive (fork.go).
		tg.tell(info.Path, info.Branch, parentTop(parent.env.Cwd), cwd)
	} else {
		// Rendered first: the agent's memory directory joins its working
		// directories there, and stays writable. The worktree block is
		// the agent's own: after its type's part.
		shared, own := setupOf(c).renderSystem(cwd)
		if own != "" {
			own += "\n\n"
		}
		c.systemPrefix, c.system = shared, own+prompts.Worktree(info.Path, info.Branch, parentTop(parent.env.Cwd))
	}
	if info.Root != "" {
		rules, err := confinement(info.Root, info.Path, c.env.Dirs)
		if err != nil {
			c.warn("the parent's tree could not be listed for the deny rules that keep the agent out of it: " + err.Error())
		}
		c.perms.Rules = append(append([]permission.Rule(nil), c.perms.Rules...), rules...)
	}
	c.spawnReceipt.Worktree = info.Path
	c.spawnReceipt.WorktreeBranch = info.Branch
	return "", true
}

// leave releases the agent's lease on its worktree, once; the last
// release removes an unchanged tree or keeps a changed one. It runs even
// when ctx is cancelled (a cancelled agent's tree must still be finished)
// and returns what became of a tree the agent owns, nil otherwise. Every
// path that ends an agent calls it: a background child calls it at its
// own end, not its parent's turn's.
func (tg treeGlue) leave(ctx context.Context) *run.WorktreeOutcome {
	c := tg.a
	c.treeMu.Lock()
	defer c.treeMu.Unlock()
	if c.tree == nil {
		return c.treeOutcome
	}
	l := c.tree
	c.tree = nil
	o, err := l.Release(context.WithoutCancel(ctx))
	if !c.ownsTree {
		return nil
	}
	out := outcomeOf(o)
	if err != nil && out.Reason == "" {
		out.Reason = err.Error()
	}
	c.treeOutcome = out
	return out
}

// outcomeOf converts the worktree package's outcome.
func outcomeOf(o worktree.Outcome) *run.WorktreeOutcome {
	out := &run.WorktreeOutcome{Path: o.Path, Branch: o.Branch, State: run.WorktreeState(o.State), BaseCommit: o.BaseCommit, Reason: o.Reason}
	if c := o.Changes; c != nil {
		out.CommitCount, out.Omitted = c.CommitCount, c.Omitted
		for _, cm := range c.Commits {
			out.Commits = append(out.Commits, run.WorktreeCommit(cm))
		}
		out.Committed = c.Committed
		for _, f := range c.Uncommitted {
			out.Uncommitted = append(out.Uncommitted, run.WorktreeFile(f))
		}
	}
	return out
}

// worktreeReport is the report's worktree paragraph about o.
func worktreeReport(o *run.WorktreeOutcome) *prompts.ReportWorktree {
	if o == nil {
		return nil
	}
	r := &prompts.ReportWorktree{Path: o.Path, Branch: o.Branch, State: string(o.State), CommitCount: o.CommitCount,
		Committed: o.Committed, Omitted: o.Omitted, Reason: o.Reason}
	for _, c := range o.Commits {
		r.Commits = append(r.Commits, shortHash(c.Hash)+" "+c.Subject)
	}
	for _, f := range o.Uncommitted {
		r.Uncommitted = append(r.Uncommitted, f.Status+" "+f.Path)
	}
	return r
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// treeCwd is the directory in the new tree that corresponds to the
// parent's working directory (a subdirectory of a monorepo stays one),
// or the tree's top when there is none.
func treeCwd(parentCwd, tree string) string {
	top := parentTop(parentCwd)
	rel, err := filepath.Rel(top, parentCwd)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return tree
	}
	d := filepath.Join(tree, rel)
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return tree
}

// parentTop is the top of the working tree dir is in.
func parentTop(dir string) string {
	if repo, ok := workspace.FindRepo(dir); ok {
		return repo.Root
	}
	return dir
}

// confinement returns Edit deny rules that keep an agent in tree out of
// the rest of the repository's working tree at root: every entry that
// exists now along the path from root down to tree, except the path
// itself and the repository's .git directory (git writes its objects and
// the tree's index there when the agent commits; writes there need
// approval anyway) and entries holding one of keep (the agent's other
// working directories, such as its memory directory). Each rule names one path, so the sandbox can hold
// them all by mounting them read-only. A name created at the top of the
// parent's tree after the agent starts is not covered by a rule; it lies
// outside the agent's working directories, so every mode but
// bypassPermissions asks before writing it.
func confinement(root, tree string, keep []string) ([]permission.Rule, error) {
	root, tree = filepath.Clean(root), filepath.Clean(tree)
	rel, err := filepath.Rel(root, tree)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("worktree %s is not under %s", tree, root)
	}
	var rules []permission.Rule
	var errs []error
	dir := root
	for _, step := range strings.Split(rel, string(filepath.Separator)) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			break
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Name() == step || dir == root && e.Name() == ".git" || slices.ContainsFunc(keep, func(k string) bool { return within(k, p) }) {
				continue
			}
			rules = append(rules, permission.Rule{Behavior: permission.Deny, Tool: tool.Edit,
				Content: "//" + escapeGlob(p), Source: IsolationRuleSource})
		}
		dir = filepath.Join(dir, step)
	}
	return rules, errors.Join(errs...)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// escapeGlob escapes what a path rule reads as pattern syntax.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// housekeepWorktrees runs once per Runtime, before the first run's init
// event: it removes the unchanged trees of agents whose process is gone
// and lists the trees earlier sessions left with work in them. It costs
// nothing outside a repository with a .cadre/worktrees directory.
func (sg sessionGlue) housekeepWorktrees(ctx context.Context) *run.WorktreeHousekeeping {
	r := sg.r
	w := r.worktrees
	w.houseOnce.Do(func() {
		repo, ok := workspace.FindRepo(r.cfg.Cwd)
		if !ok || w.git == nil {
			return
		}
		if _, err := os.Stat(filepath.Join(repo.Root, filepath.FromSlash(worktree.TreesDir))); err != nil {
			if st, err := os.Stat(filepath.Join(repo.Root, ".git")); err != nil || st.IsDir() {
				return // a main tree without agents' worktrees
			}
		}
		w.house = housekeep(ctx, w.git, r.cfg.Cwd)
	})
	return w.house
}

// housekeep prunes and lists the worktrees of the repository dir is in.
func housekeep(ctx context.Context, m *worktree.Manager, dir string) *run.WorktreeHousekeeping {
	h := &run.WorktreeHousekeeping{}
	pruned, err := m.Prune(ctx, dir, false)
	for _, e := range pruned {
		h.Removed = append(h.Removed, e.Path)
	}
	if err != nil {
		h.Error = err.Error()
	}
	entries, err := m.List(ctx, dir)
	if err != nil {
		h.Error = strings.TrimSpace(h.Error + "; " + err.Error())
	}
	for _, e := range entries {
		if e.State != worktree.StateChanged {
			continue
		}
		l := run.LeftWorktree{Path: e.Path, Branch: e.Branch, AgentID: e.AgentID, SessionID: e.SessionID, EndedAt: e.EndedAt}
		if c := e.Changes; c != nil {
			l.Commits, l.Files = c.CommitCount, len(c.Committed)+len(c.Uncommitted)+c.Omitted
		}
		h.Left = append(h.Left, l)
	}
	if len(h.Removed) == 0 && len(h.Left) == 0 && h.Error == "" {
		return nil
	}
	return h
}
