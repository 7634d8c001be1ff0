package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

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
	// Tools names the agent's tools beyond the built-in ones (an
	// embedder's own tools), so rules may name them. MCP names are checked
	// separately (CheckMCPRuleNames).
	Tools []string
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
		if r.Content != "" && !contentTool(canonicalTool(r.Tool)) && c.knownName(r.Tool) {
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

// knownName reports a tool name in the registry, an MCP name or one of
// the configured extra tools.
func (c *Checker) knownName(name string) bool {
	_, ok := tool.Lookup(name)
	return ok || slices.Contains(c.cfg.Tools, name)
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
	return Effective{Mode: c.cfg.Mode, NoPrompt: c.cfg.NoPrompt, Rules: append([]Rule(nil), c.cfg.Rules...)}
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
	// why explains an ask.
	why string
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
	e.real[p] = r
	return r
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
	dirs := append(append([]string(nil), req.Dirs...), c.cfg.Dirs...)
	e := &env{cwd: cwd, ruleBase: cwd, home: c.cfg.Home, real: map[string]string{}}
	for _, d := range append([]string{cwd}, dirs...) {
		if d == "" {
			continue
		}
		lex, real := resolvePath(d, cwd, c.cfg.Home)
		e.dirs = append(e.dirs, lex)
		if real != lex {
			e.dirs = append(e.dirs, real)
		}
	}
	return e
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
		return Decision{Behavior: Deny, Reason: fmt.Sprintf("tool names are case-sensitive: %q is not the %s tool", req.Tool, k)}
	}
	e := c.env(req)
	var f facts
	switch t := canonicalTool(req.Tool); {
	case t == tool.Bash:
		f = c.bashFacts(req, e)
	case isEditTool(t) || isReadTool(t):
		f = c.pathFacts(req, e, t)
	default:
		f = c.toolFacts(req, t)
	}
	return c.decide(f)
}

func (c *Checker) decide(f facts) Decision {
	mode := c.cfg.Mode
	ask := func(d Decision) Decision {
		if c.cfg.NoPrompt {
			d.Behavior = Deny
			if mode == ModeDontAsk {
				d.Reason += " (dontAsk mode denies what would need approval)"
			} else {
				d.Reason += " (no prompts are possible here, so it is denied)"
			}
		}
		return d
	}
	if f.deny != nil {
		reason := "denied by rule " + f.deny.Label()
		if f.denyNote != "" {
			reason += ": " + f.denyNote
		}
		return Decision{Behavior: Deny, Rule: f.deny.String(), Source: f.deny.Source, Reason: reason}
	}
	if mode == ModePlan && f.write {
		return Decision{Behavior: Deny, Reason: "plan mode is read-only: no file writes and no Bash commands that are not read-only"}
	}
	if f.unsure != "" {
		return ask(Decision{Behavior: Ask, Reason: "needs approval: " + f.unsure})
	}
	if f.ask != nil {
		return ask(Decision{Behavior: Ask, Rule: f.ask.String(), Source: f.ask.Source, Reason: "rule " + f.ask.Label() + " requires approval"})
	}
	if mode == ModeBypassPermissions {
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode allows every call no deny rule forbids"}
	}
	if f.allowed && len(f.allowRules) > 0 {
		return Decision{Behavior: Allow, Rule: joinRules(f.allowRules), Source: joinSources(f.allowRules), Reason: "allowed by rule " + joinLabels(f.allowRules)}
	}
	if f.auto {
		return Decision{Behavior: Allow, Reason: fmt.Sprintf("%s mode runs read-only calls inside the working directories", mode)}
	}
	if f.autoEdit && mode == ModeAcceptEdits {
		return Decision{Behavior: Allow, Reason: "acceptEdits mode runs file edits inside the working directories"}
	}
	why := f.why
	if why == "" {
		why = "no rule allows this call"
	}
	return ask(Decision{Behavior: Ask, Reason: "needs approval: " + why})
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
	var out []Rule
	for _, r := range c.cfg.Rules {
		if r.Behavior != b {
			continue
		}
		rt := canonicalTool(r.Tool)
		if toolMatches(r.Tool, tname) || sameCategory(rt, canonicalTool(tname)) {
			out = append(out, r)
		}
	}
	return out
}

// firstMatch returns the first rule of behaviour b for tool that match
// selects (whole-tool rules always match).
func (c *Checker) firstMatch(b Behavior, tname string, match func(Rule) bool) *Rule {
	for _, r := range c.rulesFor(b, tname) {
		if r.Content == "" && toolMatches(r.Tool, tname) {
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

func decodeInput(raw json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if len(raw) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func str(m map[string]any, k string) (string, bool) {
	v, ok := m[k]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// noPermission reports tools that need no approval in any mode: they act
// only on the agent's own state. Rules can still deny or ask for them.
func noPermission(name string) bool {
	in, ok := tool.Lookup(name)
	return ok && in.NoPermission
}

func (c *Checker) toolFacts(req Request, tname string) facts {
	var f facts
	in, err := decodeInput(req.Input)
	if err != nil {
		f.unsure = "the tool input is not a JSON object"
		return f
	}
	var match func(Rule) bool
	switch tname {
	case tool.Agent:
		typ, _ := str(in, "subagent_type")
		match = func(r Rule) bool { return agentRuleMatches(r, typ) }
	case tool.WebFetch:
		u, _ := str(in, "url")
		match = func(r Rule) bool { return hostMatches(strings.TrimPrefix(r.Content, "domain:"), u) }
	default:
		// Content this checker cannot interpret: deny and ask rules bind
		// the whole tool, allow rules never match.
		match = func(r Rule) bool { return r.Behavior != Allow }
	}
	f.deny = c.firstMatch(Deny, tname, match)
	f.ask = c.firstMatch(Ask, tname, match)
	if r := c.firstMatch(Allow, tname, match); r != nil {
		f.allowed, f.allowRules = true, []Rule{*r}
	}
	switch {
	case noPermission(tname):
		f.auto = true
	case tool.IsMCP(tname), tname == tool.WebFetch, tname == tool.WebSearch:
		f.write = !req.ReadOnly
		f.why = "no rule allows " + tname
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

func (c *Checker) pathFacts(req Request, e *env, tname string) facts {
	var f facts
	in, err := decodeInput(req.Input)
	if err != nil {
		f.unsure = "the tool input is not a JSON object"
		return f
	}
	f.write = isEditTool(tname)
	var raw string
	var ok bool
	switch tname {
	case tool.Glob, tool.Grep, tool.LS:
		raw, ok = str(in, "path")
		if !ok || raw == "" {
			raw, ok = e.cwd, true
		}
		if tname == tool.Glob {
			if pat, has := str(in, "pattern"); has {
				dir, _ := resolvePath(raw, e.cwd, e.home)
				root, bounded := globRoot(pat, dir)
				if !bounded {
					f.unsure = "the glob pattern climbs out of its directory with `..` after a wildcard"
					return f
				}
				raw = root
			}
		}
	case tool.NotebookEdit, tool.NotebookRead:
		raw, ok = str(in, "notebook_path")
	default:
		raw, ok = str(in, "file_path")
	}
	if !ok || raw == "" {
		f.unsure = "the call names no file path"
		return f
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
			f.why = fmt.Sprintf("%s is protected: writes to .git, .cadre and .claude always need approval", real)
		case in2:
			f.why = "file edits need approval in " + string(c.cfg.Mode) + " mode"
		default:
			f.why = fmt.Sprintf("%s is outside the working directories", real)
		}
	} else {
		f.auto = in2
		if !in2 {
			f.why = fmt.Sprintf("%s is outside the working directories", real)
		}
	}
	return f
}

func (c *Checker) bashFacts(req Request, e *env) facts {
	var f facts
	in, err := decodeInput(req.Input)
	if err != nil {
		f.unsure = "the tool input is not a JSON object"
		f.write = true
		return f
	}
	cmd, ok := str(in, "command")
	if !ok || strings.TrimSpace(cmd) == "" {
		f.unsure = "the call has no command"
		f.write = true
		return f
	}
	script, err := SplitBash(cmd)
	if err != nil {
		f.unsure = "the command could not be analysed (" + err.Error() + ")"
		f.write = true
		return f
	}
	// Deny and ask: any command that may match.
	for _, sc := range script.Commands {
		if r := c.firstMatch(Deny, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mayMatch(sc) }); r != nil {
			f.deny = r
			if r.Content != "" && !c.bashPattern(*r).mustMatch(baseNamed(sc)) {
				f.denyNote = fmt.Sprintf("`%s` has words only known when the shell runs, and it could be what the rule forbids", sc.String())
			}
			return f
		}
	}
	// Relative paths are checked against every directory the script may
	// be in: the cwd and each cd/pushd target.
	envs, dirsKnown := c.scriptEnvs(script, e)
	readOnly := len(script.Writes) == 0
	readPaths := append([]Arg(nil), script.Reads...)
	var perCommandPaths [][]Arg
	var editPaths []Arg
	for _, sc := range script.Commands {
		paths, ro := readOnlyCommand(sc)
		perCommandPaths = append(perCommandPaths, paths)
		if ro {
			readPaths = append(readPaths, paths...)
		} else if !isCd(sc) {
			readOnly = false
		}
		if ps, ok := editCommand(sc); ok {
			editPaths = append(editPaths, ps...)
		}
	}
	for _, be := range envs {
		// Reads of files the rules deny are denied through Bash too.
		for _, a := range readPaths {
			if !a.Static {
				continue
			}
			lex, real := resolvePath(a.Value, be.cwd, be.home)
			p := pathCandidate{lexical: lex, real: real}
			if r := c.firstMatch(Deny, tool.Read, func(r Rule) bool { return r.Content != "" && c.pathRuleMatches(r, be, p) }); r != nil && r.Content != "" {
				f.deny = r
				return f
			}
		}
		// Redirections and edit commands (mkdir, touch, cp, mv, rmdir)
		// are bound by Edit deny rules.
		for _, w := range append(append([]Arg(nil), script.Writes...), editPaths...) {
			if r := c.redirectRule(Deny, w, be); r != nil {
				f.deny = r
				return f
			}
		}
	}
	f.write = !readOnly
	// Uncertainty matters only where something could be refused: in
	// bypassPermissions with no rule that binds Bash, files or agents'
	// reads and writes, a dynamic command is no worse than a literal one.
	if len(script.Uncertain) > 0 && (c.cfg.Mode != ModeBypassPermissions || c.hasBindingRules()) {
		f.unsure = "the command cannot be fully analysed: " + strings.Join(script.Uncertain, "; ")
		return f
	}
	for _, sc := range script.Commands {
		if r := c.firstMatch(Ask, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mayMatch(sc) }); r != nil {
			f.ask = r
			return f
		}
	}
	for _, be := range envs {
		for _, w := range append(append([]Arg(nil), script.Writes...), editPaths...) {
			if r := c.redirectRule(Ask, w, be); r != nil {
				f.ask = r
				return f
			}
		}
	}
	all := func(fn func(*env) bool) bool {
		for _, be := range envs {
			if !fn(be) {
				return false
			}
		}
		return true
	}
	// Allow: every command by a rule, or as a read-only command on paths
	// inside the working directories, or (acceptEdits) as an edit command
	// there; every redirection target writable.
	f.allowed = true
	editsInside := false
	for i, sc := range script.Commands {
		if r := c.firstMatch(Allow, tool.Bash, func(r Rule) bool { return c.bashPattern(r).mustMatch(sc) }); r != nil {
			f.allowRules = append(f.allowRules, *r)
			continue
		}
		if isCd(sc) && dirsKnown {
			continue
		}
		_, ro := readOnlyCommand(sc)
		if ro && dirsKnown && all(func(be *env) bool { return c.readPathsOK(perCommandPaths[i], be) }) {
			continue
		}
		if ps, ok := editCommand(sc); ok && dirsKnown && all(func(be *env) bool { return c.editPathsOK(ps, be) }) {
			editsInside = true
			continue
		}
		f.allowed = false
		if f.why == "" {
			switch {
			case isCd(sc) || !dirsKnown:
				f.why = fmt.Sprintf("`%s` changes to a directory outside the working directories or not known in advance", sc.String())
			case ro:
				f.why = fmt.Sprintf("`%s` reads outside the working directories", sc.String())
			default:
				f.why = fmt.Sprintf("no rule allows `%s`", sc.String())
			}
		}
	}
	// Input redirections read files whatever the command: `$(<file)`
	// prints one.
	relative := func(a Arg) bool { return !dirsKnown && !strings.HasPrefix(a.Value, "/") && !a.Tilde }
	readsRelative := false
	for _, a := range script.Reads {
		readsRelative = readsRelative || relative(a)
	}
	if readsRelative || !all(func(be *env) bool { return c.readPathsOK(script.Reads, be) || c.readsAllowed(script.Reads, be) }) {
		f.allowed = false
		if f.why == "" {
			f.why = "the command reads a file outside the working directories"
		}
	}
	for _, w := range script.Writes {
		if relative(w) || !all(func(be *env) bool { return c.redirectOK(w, be) }) {
			f.allowed = false
			f.why = fmt.Sprintf("the command writes to %s, outside the working directories", w.Value)
		}
	}
	if f.allowed && editsInside {
		// Edit commands inside the working directories: acceptEdits
		// runs them, other modes ask.
		f.allowed = false
		f.autoEdit = true
		f.why = "the command changes files"
	} else if f.allowed && len(f.allowRules) == 0 {
		// Nothing but read-only commands: the mode decides.
		f.allowed = false
		if readOnly {
			f.auto = true
		} else {
			f.autoEdit = true
			f.why = "the command writes files"
		}
	}
	if f.why == "" && !f.allowed && !f.auto {
		f.why = "the command is not read-only"
	}
	return f
}

func isCd(c Command) bool {
	switch c.Name() {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// maxScriptDirs bounds the directories a script's relative paths are
// checked against.
const maxScriptDirs = 16

// scriptEnvs returns one env per directory the script may run commands
// in: the cwd and every cd/pushd target, each resolved against every
// directory before it. known is false when a target is not literal, lies
// outside the working directories, or there are too many.
func (c *Checker) scriptEnvs(s *Script, e *env) (envs []*env, known bool) {
	envs = []*env{e}
	if s.UnknownDir {
		return envs, false
	}
	bases := []string{e.cwd}
	seen := map[string]bool{e.cwd: true}
	for _, t := range s.DirTargets {
		for _, b := range append([]string(nil), bases...) {
			_, real := resolvePath(t.Value, b, e.home)
			if !e.insideReal(real) {
				return envs, false
			}
			if !seen[real] {
				seen[real] = true
				bases = append(bases, real)
				envs = append(envs, &env{cwd: real, ruleBase: e.ruleBase, home: e.home, dirs: e.dirs, real: e.real})
			}
			if len(bases) > maxScriptDirs {
				return envs[:1], false
			}
		}
	}
	return envs, true
}

// readPathsOK: every static path word is inside the working directories
// and not under a Read ask rule; dynamic words are not OK.
func (c *Checker) readPathsOK(paths []Arg, e *env) bool {
	for _, a := range paths {
		if !a.Static {
			return false
		}
		_, real := resolvePath(a.Value, e.cwd, e.home)
		if a.Glob {
			// Check the directory part before the first wildcard.
			if i := strings.IndexAny(a.Value, "*?["); i >= 0 {
				_, real = resolvePath(filepath.Dir(a.Value[:i]+"x"), e.cwd, e.home)
			}
		}
		if !e.insideReal(real) {
			return false
		}
		p := pathCandidate{lexical: real, real: real}
		if r := c.firstMatch(Ask, tool.Read, func(r Rule) bool { return r.Content != "" && c.pathRuleMatches(r, e, p) }); r != nil && r.Content != "" {
			return false
		}
	}
	return true
}

// editPathsOK: every path an edit command writes is static and inside the
// working directories.
func (c *Checker) editPathsOK(paths []Arg, e *env) bool {
	for _, a := range paths {
		if !a.Static {
			return false
		}
		v := a.Value
		if a.Glob {
			if i := strings.IndexAny(v, "*?["); i >= 0 {
				v = filepath.Dir(v[:i] + "x")
			}
		}
		_, real := resolvePath(v, e.cwd, e.home)
		if !e.insideReal(real) || e.protected(real) {
			return false
		}
	}
	return true
}

// readsAllowed: every input redirection is covered by a Read allow rule.
func (c *Checker) readsAllowed(reads []Arg, e *env) bool {
	for _, a := range reads {
		if !a.Static {
			return false
		}
		lex, real := resolvePath(a.Value, e.cwd, e.home)
		p := pathCandidate{lexical: lex, real: real}
		if r := c.firstMatch(Allow, tool.Read, func(r Rule) bool { return c.pathRuleMatches(r, e, p) }); r == nil || r.Content == "" {
			return false
		}
	}
	return true
}

// redirectRule returns an Edit rule of behaviour b that covers a
// redirection target; unknown targets match no rule here (they are not
// allowed either, see redirectOK).
func (c *Checker) redirectRule(b Behavior, w Arg, e *env) *Rule {
	if !w.Static {
		return nil
	}
	lex, real := resolvePath(w.Value, e.cwd, e.home)
	p := pathCandidate{lexical: lex, real: real}
	r := c.firstMatch(b, tool.Edit, func(r Rule) bool { return c.pathRuleMatches(r, e, p) })
	if r != nil && r.Content == "" {
		// A rule on the whole Edit tool says nothing about Bash.
		return nil
	}
	return r
}

// redirectOK: a redirection may write where an Edit allow rule allows or
// inside the working directories.
func (c *Checker) redirectOK(w Arg, e *env) bool {
	if !w.Static || w.Glob {
		return false
	}
	lex, real := resolvePath(w.Value, e.cwd, e.home)
	if e.insideReal(real) && !e.protected(real) {
		return true
	}
	p := pathCandidate{lexical: lex, real: real}
	r := c.firstMatch(Allow, tool.Edit, func(r Rule) bool { return c.pathRuleMatches(r, e, p) })
	return r != nil && r.Content != ""
}

// protected reports a path inside a working directory that holds git
// internals or cadre/Claude configuration (settings, agents, hooks): writing
// there could grant permissions or run code later. Worktrees under
// .cadre/worktrees and agent notes under .cadre/agent-memory and
// .cadre/agent-memory-local are ordinary files.
func (e *env) protected(real string) bool {
	for _, d := range e.dirs {
		if !inside(real, d) {
			continue
		}
		rel, err := filepath.Rel(d, real)
		if err != nil {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		for i := 0; i < len(parts); i++ {
			switch parts[i] {
			case ".git":
				return true
			case ".cadre", ".claude":
				if i+2 < len(parts) && (parts[i+1] == "worktrees" || parts[i+1] == "agent-memory" || parts[i+1] == "agent-memory-local") {
					i += 2
					continue
				}
				return true
			}
		}
	}
	return false
}

// baseNamed returns the command with its name reduced to the base name
// (`/bin/rm` → `rm`), as deny rules see it.
func baseNamed(c Command) Command {
	if len(c.Args) == 0 || !c.Args[0].Static || !strings.Contains(c.Args[0].Value, "/") {
		return c
	}
	args := append([]Arg(nil), c.Args...)
	args[0].Value = filepath.Base(args[0].Value)
	return Command{Args: args, Via: c.Via}
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
