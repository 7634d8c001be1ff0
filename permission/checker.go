package permission

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Config configures a Checker.
type Config struct {
	// Mode is the permission mode; "" means default.
	Mode Mode
	// Cwd and Dirs are the working directories used when a request does
	// not carry its own (absolute).
	Cwd  string
	Dirs []string
	// Home expands `~` in rules and paths.
	Home string
	// Rules are the allow, ask and deny rules, each with its source.
	Rules []Rule
	// NoPrompt turns every ask into a deny (dontAsk mode sets it; a child
	// of a dontAsk parent inherits it through the ratchet).
	NoPrompt bool
	// DisableBypass refuses bypassPermissions (managed setting
	// disableBypassPermissionsMode).
	DisableBypass bool
	// ReadOnly makes the agent read-only by construction (S-10.5): in
	// every mode, a call that may write — Bash that is not read-only
	// included — is denied, as in plan mode. Explore, Plan and agents
	// whose tools are all read-only get it.
	ReadOnly bool
	// Sandbox, when set, says every Bash command of the agent runs in the
	// OS sandbox (internal/sandbox) with the paths SandboxMasks returns
	// hidden or read-only: a command that might read what a Read deny
	// rule protects then runs, because it cannot see it.
	Sandbox *Sandbox
	// Tools names the agent's tools beyond the built-in ones (an
	// embedder's own tools), so rules may name them. MCP names are checked
	// separately (CheckMCPRuleNames).
	Tools []string
	// DirCache, when set, remembers how the working directories resolve
	// across checks and checkers (see DirCache); nil resolves them on
	// every check.
	DirCache *DirCache
}

// Sandbox describes the sandbox Bash commands run in.
type Sandbox struct {
	// Writable are the paths besides the working directories a sandboxed
	// command may write (tool caches); Edit deny rules there can only be
	// held when they name whole paths.
	Writable []string
}

// Checker decides requests from a mode and rules. It is immutable and safe
// for concurrent use; Check reads the file system only to resolve symlinks.
type Checker struct {
	cfg      Config
	warnings []string
	// bash holds the compiled Bash rule contents, built once.
	bash map[string]bashPattern
}

// ErrModeUnsupported is returned for the auto mode, which needs a
// classifier cadre does not ship.
var ErrModeUnsupported = errors.New("permission mode auto is not supported: it needs a classifier cadre does not have; use default, acceptEdits, plan, dontAsk or bypassPermissions")

// ErrBypassDisabled is returned when bypassPermissions is asked for but
// managed settings disable it.
var ErrBypassDisabled = errors.New("bypassPermissions mode is disabled by managed settings (permissions.disableBypassPermissionsMode)")

// NewChecker validates the configuration. A deny or ask rule that names
// no known tool (CheckRuleNames) is an error: it would protect nothing
// while looking as if it did. An allow rule that names none allows
// nothing and is reported by Warnings.
func NewChecker(cfg Config) (*Checker, error) {
	m, err := ParseMode(string(cfg.Mode))
	if err != nil {
		return nil, err
	}
	cfg.Mode = m
	switch m {
	case ModeAuto:
		return nil, ErrModeUnsupported
	case ModeBypassPermissions:
		if cfg.DisableBypass {
			return nil, ErrBypassDisabled
		}
	case ModeDontAsk:
		cfg.NoPrompt = true
	}
	if cfg.Cwd != "" && !filepath.IsAbs(cfg.Cwd) {
		return nil, fmt.Errorf("permission config: cwd %q is not absolute", cfg.Cwd)
	}
	cfg.Rules = append([]Rule(nil), cfg.Rules...)
	cfg.Dirs = append([]string(nil), cfg.Dirs...)
	c := &Checker{cfg: cfg}
	c.compile()
	for _, r := range cfg.Rules {
		switch r.Behavior {
		case Allow, Ask, Deny:
		default:
			return nil, fmt.Errorf("rule %s: behavior %q is not allow, ask or deny", r.Label(), r.Behavior)
		}
		// An embedder's tool (Config.Tools) may declare a subject its
		// content rules match, so only cadre's own names are warned about.
		if _, registered := tool.Lookup(r.Tool); r.Content != "" && !contentTool(canonicalTool(r.Tool)) && registered {
			if r.Behavior == Allow {
				c.warnings = append(c.warnings, fmt.Sprintf("allow rule %s: %s rules take no content; the rule never matches", r.Label(), r.Tool))
			} else {
				c.warnings = append(c.warnings, fmt.Sprintf("%s rule %s: %s rules take no content; the rule applies to the whole tool", r.Behavior, r.Label(), r.Tool))
			}
		}
	}
	if err := c.checkNames(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkNames fails on deny and ask rules that name no tool and warns about
// allow rules that do not.
func (c *Checker) checkNames() error {
	var fatal []error
	for _, err := range CheckRuleNames(c.cfg.Rules, c.cfg.Tools) {
		var ue *UnknownToolError
		if errors.As(err, &ue) && ue.Rule.Behavior == Allow {
			c.warnings = append(c.warnings, err.Error()+"; it allows nothing")
			continue
		}
		fatal = append(fatal, err)
	}
	if len(fatal) == 0 {
		return nil
	}
	return fmt.Errorf("%w (a deny or ask rule that names no tool protects nothing; fix the name or remove the rule)", errors.Join(fatal...))
}

// hasBindingRules reports deny or ask rules a Bash command could get
// around with words only known at run time: Bash rules and path rules.
func (c *Checker) hasBindingRules() bool {
	for _, r := range c.cfg.Rules {
		t := canonicalTool(r.Tool)
		if r.Behavior != Allow && (t == tool.Bash || isEditTool(t) || isReadTool(t)) {
			return true
		}
	}
	return false
}

func contentTool(t string) bool {
	return t == tool.Bash || t == tool.WebFetch || t == tool.Agent || isEditTool(t) || isReadTool(t)
}

// Warnings returns problems with the rules that did not stop the checker.
func (c *Checker) Warnings() []string { return append([]string(nil), c.warnings...) }

// Mode returns the checker's mode.
func (c *Checker) Mode() Mode { return c.cfg.Mode }

// Config returns a copy of the checker's configuration.
func (c *Checker) Config() Config {
	cfg := c.cfg
	cfg.Rules = append([]Rule(nil), cfg.Rules...)
	cfg.Dirs = append([]string(nil), cfg.Dirs...)
	return cfg
}

// Effective returns the mode and rules, for the ratchet.
func (c *Checker) Effective() Effective {
	return Effective{Mode: c.cfg.Mode, NoPrompt: c.cfg.NoPrompt, ReadOnly: c.cfg.ReadOnly, Rules: append([]Rule(nil), c.cfg.Rules...)}
}

// WithRules returns a checker with extra rules (session rules).
func (c *Checker) WithRules(rules ...Rule) *Checker {
	n := &Checker{cfg: c.Config(), warnings: c.warnings}
	n.cfg.Rules = append(n.cfg.Rules, rules...)
	n.compile()
	return n
}

func (c *Checker) compile() {
	c.bash = map[string]bashPattern{}
	for _, r := range c.cfg.Rules {
		if canonicalTool(r.Tool) == tool.Bash && r.Content != "" {
			c.bash[r.Content] = compileBash(r.Content)
		}
	}
}

// bashPattern returns the compiled pattern of a Bash rule.
func (c *Checker) bashPattern(r Rule) bashPattern {
	if p, ok := c.bash[r.Content]; ok {
		return p
	}
	return compileBash(r.Content)
}

// facts is what Check learned about one request.
type facts struct {
	deny, ask *Rule
	// denyNote explains a deny rule that only may match.
	denyNote string
	// allowRules are the allow rules that together allow the call.
	allowRules []Rule
	allowed    bool
	// auto: the mode lets the call run without a rule (a read inside the
	// working directories, a harmless internal tool).
	auto bool
	// autoEdit: a file edit inside the working directories (acceptEdits).
	autoEdit bool
	// write: the call may change something (plan refuses it).
	write bool
	// unsure: the call cannot be analysed; never allowed without asking.
	unsure string
	// exposed: the call may read or write a path a deny rule protects
	// without naming it; never allowed without asking, in any mode.
	exposed string
	// why explains an ask.
	why string
	// protected: the call changes a protected path (configuration, git
	// internals); asked for in every mode but bypassPermissions, whatever
	// allow rules say.
	protected string
}

// env is the request's view of the world.
type env struct {
	cwd, home string
	// ruleBase anchors relative rules that have no Base of their own: the
	// request's cwd, even while a script's cd moves cwd.
	ruleBase string
	dirs     []string // resolved working directories
	// real memoizes symlink resolution of rule bases within one Check.
	real map[string]string
}

// resolved returns p with symlinks resolved, memoized.
func (e *env) resolved(p string) string {
	if r, ok := e.real[p]; ok {
		return r
	}
	r := evalExisting(p)
	if e.real == nil {
		e.real = map[string]string{} // most checks resolve no rule base
	}
	e.real[p] = r
	return r
}

// memo is e.real, made now, for an env that shares it.
func (e *env) memo() map[string]string {
	if e.real == nil {
		e.real = map[string]string{}
	}
	return e.real
}

func (c *Checker) env(req Request) *env {
	// The request's own directories, plus the session's additional
	// directories (settings and --add-dir hold for every agent). The
	// configured cwd stands in only when the request has none: a child in
	// a worktree does not get its parent's tree for free.
	cwd := req.Cwd
	if cwd == "" {
		cwd = c.cfg.Cwd
	}
	e := &env{cwd: cwd, ruleBase: cwd, home: c.cfg.Home, dirs: make([]string, 0, 2*(1+len(req.Dirs)+len(c.cfg.Dirs)))}
	e.addDir(c, cwd)
	for _, d := range req.Dirs {
		e.addDir(c, d)
	}
	for _, d := range c.cfg.Dirs {
		e.addDir(c, d)
	}
	return e
}

// addDir adds working directory d, lexical and resolved, to e.dirs.
func (e *env) addDir(c *Checker, d string) {
	if d == "" {
		return
	}
	lex, real := c.cfg.DirCache.resolve(d, e.cwd, c.cfg.Home)
	e.dirs = append(e.dirs, lex)
	if real != lex {
		e.dirs = append(e.dirs, real)
	}
}

// insideReal reports whether the resolved path is inside a working dir.
func (e *env) insideReal(real string) bool {
	for _, d := range e.dirs {
		if inside(real, d) {
			return true
		}
	}
	return false
}

// Check decides one request from the mode and the rules: deny > ask >
// allow, with the deciding rule and its source. It never prompts.
func (c *Checker) Check(req Request) Decision {
	if k := caseVariant(req.Tool); k != "" {
		return Decision{Behavior: Deny, Reason: prompts.PermCaseVariant(req.Tool, k)}
	}
	e := c.env(req)
	t := canonicalTool(req.Tool)
	s, _, err := subjectOf(req)
	var f facts
	switch {
	case err != nil:
		// An input the tool cannot read its subject from: never allowed
		// without asking (and a command may write).
		f.unsure = prompts.PermInputNotObject
		f.write = t == tool.Bash
	case t == tool.Bash:
		f = bashOf(c).bashFacts(s, e)
	case isEditTool(t) || isReadTool(t):
		f = c.pathFacts(s, e, t)
	default:
		f = c.toolFacts(req, t, s, e)
	}
	return c.decide(f)
}

func (c *Checker) decide(f facts) Decision {
	mode := c.cfg.Mode
	ask := func(d Decision) Decision {
		if c.cfg.NoPrompt {
			d.Behavior = Deny
			if mode == ModeDontAsk {
				d.Reason += prompts.PermDontAskDenies
			} else {
				d.Reason += prompts.PermNoPrompts
			}
		}
		return d
	}
	if f.deny != nil {
		return Decision{Behavior: Deny, Rule: f.deny.String(), Source: f.deny.Source, Reason: prompts.PermDeniedByRule(f.deny.Label(), f.denyNote)}
	}
	if mode == ModePlan && f.write {
		return Decision{Behavior: Deny, Reason: prompts.PermPlanReadOnly}
	}
	if c.cfg.ReadOnly && f.write {
		return Decision{Behavior: Deny, Reason: prompts.PermAgentReadOnly}
	}
	if f.unsure != "" {
		return ask(Decision{Behavior: Ask, Reason: prompts.PermNeedsApproval(f.unsure)})
	}
	if f.exposed != "" {
		return ask(Decision{Behavior: Ask, Reason: prompts.PermNeedsApproval(f.exposed)})
	}
	if f.ask != nil {
		return ask(Decision{Behavior: Ask, Rule: f.ask.String(), Source: f.ask.Source, Reason: prompts.PermAskRule(f.ask.Label())})
	}
	if mode == ModeBypassPermissions {
		return Decision{Behavior: Allow, Reason: prompts.PermBypassAllows}
	}
	if f.protected != "" {
		return ask(Decision{Behavior: Ask, Reason: prompts.PermNeedsApproval(f.protected)})
	}
	if f.allowed && len(f.allowRules) > 0 {
		return Decision{Behavior: Allow, Rule: joinRules(f.allowRules), Source: joinSources(f.allowRules), Reason: prompts.PermAllowedByRule(joinLabels(f.allowRules))}
	}
	if f.auto {
		return Decision{Behavior: Allow, Reason: prompts.PermModeReadOnly(string(mode))}
	}
	if f.autoEdit && mode == ModeAcceptEdits {
		return Decision{Behavior: Allow, Reason: prompts.PermAcceptEdits}
	}
	why := f.why
	if why == "" {
		why = prompts.PermNoRule
	}
	return ask(Decision{Behavior: Ask, Reason: prompts.PermNeedsApproval(why)})
}

func joinRules(rs []Rule) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if s := r.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

func joinSources(rs []Rule) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Source] && r.Source != "" {
			seen[r.Source] = true
			out = append(out, r.Source)
		}
	}
	return strings.Join(out, ", ")
}

func joinLabels(rs []Rule) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if s := r.Label(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// rulesFor returns the rules of one behaviour whose tool name selects the
// tool, or — for path rules — whose tool is in the same category.
func (c *Checker) rulesFor(b Behavior, tname string) []Rule {
	return c.rulesForServer(b, tname, "")
}

// rulesForServer is rulesFor for a call whose subject names its MCP
// server ("" for none).
func (c *Checker) rulesForServer(b Behavior, tname, server string) []Rule {
	var out []Rule
	for _, r := range c.cfg.Rules {
		if r.Behavior != b {
			continue
		}
		rt := canonicalTool(r.Tool)
		if toolSelects(r.Tool, tname, server) || sameCategory(rt, canonicalTool(tname)) {
			out = append(out, r)
		}
	}
	return out
}

// firstMatch returns the first rule of behaviour b for tool that match
// selects (whole-tool rules always match).
func (c *Checker) firstMatch(b Behavior, tname string, match func(Rule) bool) *Rule {
	return c.firstMatchServer(b, tname, "", match)
}

// firstMatchServer is firstMatch for a call whose subject names its MCP
// server ("" for none).
func (c *Checker) firstMatchServer(b Behavior, tname, server string, match func(Rule) bool) *Rule {
	for _, r := range c.rulesForServer(b, tname, server) {
		if r.Content == "" && toolSelects(r.Tool, tname, server) {
			r := r
			return &r
		}
		if r.Content != "" && match(r) {
			r := r
			return &r
		}
	}
	return nil
}

// noPermission reports tools that need no approval in any mode: they act
// only on the agent's own state. Rules can still deny or ask for them.
func noPermission(name string) bool {
	in, ok := tool.Lookup(name)
	return ok && in.NoPermission
}

func (c *Checker) toolFacts(req Request, tname string, s tool.Subject, e *env) facts {
	var f facts
	if !isObject(req.Input) {
		f.unsure = prompts.PermInputNotObject
		return f
	}
	var match func(Rule) bool
	switch {
	case tname == tool.Agent:
		match = func(r Rule) bool { return agentRuleMatches(r, s.AgentType) }
	case tname == tool.WebFetch:
		match = func(r Rule) bool { return hostMatches(strings.TrimPrefix(r.Content, "domain:"), s.URL) }
	case s.Content != "" || len(s.Paths) > 0:
		// An embedder's tool that declares its subject: its content rules
		// match the declared content or paths.
		match = c.declaredMatcher(s, e)
	default:
		// No subject to match: deny and ask rules bind the whole tool,
		// allow rules never match.
		match = func(r Rule) bool { return r.Behavior != Allow }
	}
	f.deny = c.firstMatchServer(Deny, tname, s.Server, match)
	f.ask = c.firstMatchServer(Ask, tname, s.Server, match)
	if r := c.firstMatchServer(Allow, tname, s.Server, match); r != nil {
		f.allowed, f.allowRules = true, []Rule{*r}
	}
	switch {
	case noPermission(tname):
		f.auto = true
	case tool.IsMCP(tname), tname == tool.WebFetch, tname == tool.WebSearch:
		f.write = !req.ReadOnly
		f.why = prompts.PermNoRuleFor(tname)
	default:
		f.auto = req.ReadOnly
		f.write = !req.ReadOnly
	}
	return f
}

// agentRuleMatches matches `Agent(Type)` or `Agent(a, b)` against a
// requested type; an omitted type is general-purpose.
func agentRuleMatches(r Rule, typ string) bool {
	if typ == "" {
		typ = "general-purpose"
	}
	for _, t := range strings.Split(r.Content, ",") {
		if strings.TrimSpace(t) == typ {
			return true
		}
	}
	return false
}

// pathCandidate is one path a call touches, lexically and resolved.
type pathCandidate struct {
	lexical, real string
}

func (c *Checker) patternsFor(r Rule, e *env) []string {
	base := r.Base
	if base == "" {
		base = e.ruleBase
	}
	pats := pathPatterns(r.Content, base, e.home)
	if rb := e.resolved(base); rb != base {
		pats = append(pats, pathPatterns(r.Content, rb, e.home)...)
	}
	if rh := e.resolved(e.home); rh != e.home && e.home != "" && (strings.HasPrefix(r.Content, "~")) {
		pats = append(pats, pathPatterns(r.Content, base, rh)...)
	}
	return pats
}

// pathRuleMatches: deny and ask rules match if either the lexical or the
// resolved path matches; allow rules need the resolved path to match.
func (c *Checker) pathRuleMatches(r Rule, e *env, p pathCandidate) bool {
	pats := c.patternsFor(r, e)
	if r.Behavior == Allow {
		return pathMatches(pats, p.real)
	}
	return pathMatches(pats, p.real) || pathMatches(pats, p.lexical)
}

// pathFacts decides a call of a tool path rules cover from the path its
// subject names (the first: cadre's file tools name one).
func (c *Checker) pathFacts(s tool.Subject, e *env, tname string) facts {
	var f facts
	f.write = isEditTool(tname)
	var raw string
	if len(s.Paths) > 0 {
		raw = s.Paths[0]
	}
	if raw == "" {
		f.unsure = prompts.PermNoFilePath
		return f
	}
	if s.Glob != "" {
		dir, _ := resolvePath(raw, e.cwd, e.home)
		root, bounded := globRoot(s.Glob, dir)
		if !bounded {
			f.unsure = prompts.PermGlobClimbs
			return f
		}
		raw = root
	}
	lex, real := resolvePath(raw, e.cwd, e.home)
	p := pathCandidate{lexical: lex, real: real}
	match := func(r Rule) bool { return c.pathRuleMatches(r, e, p) }
	f.deny = c.firstMatch(Deny, tname, match)
	f.ask = c.firstMatch(Ask, tname, match)
	if r := c.firstMatch(Allow, tname, match); r != nil {
		f.allowed, f.allowRules = true, []Rule{*r}
	}
	in2 := e.insideReal(real)
	if f.write {
		f.autoEdit = in2
		switch {
		case e.protected(real):
			// Only a rule naming the path allows writing cadre's own
			// configuration or git internals (bypass aside).
			f.autoEdit = false
			if f.allowed && f.allowRules[0].Content == "" {
				f.allowed, f.allowRules = false, nil
			}
			f.why = prompts.PermProtectedPath(real)
		case in2:
			f.why = prompts.PermEditsNeedApproval(string(c.cfg.Mode))
		default:
			f.why = prompts.PermOutsideDirs(real)
		}
	} else {
		f.auto = in2
		if !in2 {
			f.why = prompts.PermOutsideDirs(real)
		}
	}
	return f
}

// PathDenied reports the Read (or, with edit, Edit) deny rule that covers
// path, resolved against cwd. Search tools (Glob, Grep) use it to leave
// denied files out of results inside an allowed search directory.
func (c *Checker) PathDenied(cwd, path string, edit bool) (Rule, bool) {
	e := c.env(Request{Cwd: cwd})
	lex, real := resolvePath(path, e.cwd, e.home)
	p := pathCandidate{lexical: lex, real: real}
	tname := tool.Read
	if edit {
		tname = tool.Edit
	}
	r := c.firstMatch(Deny, tname, func(r Rule) bool { return c.pathRuleMatches(r, e, p) })
	if r == nil || r.Content == "" && !toolMatches(r.Tool, tname) {
		return Rule{}, false
	}
	return *r, true
}
