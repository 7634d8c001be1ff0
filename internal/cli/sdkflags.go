package cli

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/pflag"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/plugin"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
)

// sdkFlags are the flags the Claude Agent SDK passes to the CLI that
// cadre's own flags do not cover (issue 29). Each is honoured where cadre
// has the capability; the others are accepted, and a run that sets one
// says once on stderr that it has no effect in cadre (noEffect), so a
// program written for Claude Code starts.
type sdkFlags struct {
	thinking          string
	thinkingDisplay   string
	effort            string
	taskBudget        string
	agent             string
	betas             []string
	jsonSchema        string
	debugFile         string
	debugToStderr     bool
	permissionPrompts string
	channels          []string
	tools             string
	settingSources    string
	allowBypass       bool
	sessionMirror     bool
	projectConfigRoot string
	pluginDirs        []string
	pluginDirsNoMCP   []string
	forkSession       bool
	resumeSessionAt   string
	resumeDropsTurn   string
	initializeFields  string
	managedSettings   string
	managedInInit     bool
	noOptionalLocks   bool

	// set reports whether a flag was given (pflag's Changed); nil until
	// the flags are parsed.
	set func(name string) bool
}

func (s *sdkFlags) register(f *pflag.FlagSet) {
	s.set = f.Changed
	f.StringVar(&s.thinking, "thinking", "", "extended thinking: disabled turns it off (--max-thinking-tokens and settings turn it on); adaptive has no effect in cadre")
	f.StringVar(&s.thinkingDisplay, "thinking-display", "", "how thinking is shown (summarized, omitted); no effect in cadre")
	f.StringVar(&s.effort, "effort", "", "the main agent's reasoning effort: low, medium, high, xhigh or max")
	f.StringVar(&s.taskBudget, "task-budget", "", "API-side task budget in tokens; no effect in cadre (see --max-budget-usd)")
	f.StringVar(&s.agent, "agent", "", "run the main agent as this agent definition: its prompt, model, effort, tools and disallowed tools")
	f.StringArrayVar(&s.betas, "betas", nil, "Anthropic beta headers; no effect in cadre")
	f.StringVar(&s.jsonSchema, "json-schema", "", "JSON Schema the final answer must match: the main agent gives it with the StructuredOutput tool")
	f.StringVar(&s.debugFile, "debug-file", "", "write the --debug lines to this file instead of stderr (turns --debug on)")
	f.BoolVar(&s.debugToStderr, "debug-to-stderr", false, "write the --debug lines to stderr (turns --debug on)")
	f.StringVar(&s.permissionPrompts, "permission-prompts", "", `who answers permission prompts: "host" (the default: --permission-prompt-tool) or "none" (nobody: what would be asked is denied)`)
	f.StringArrayVar(&s.channels, "channels", nil, "channels; no effect in cadre")
	f.StringVar(&s.tools, "tools", "", `the built-in tools offered, comma- or space-separated ("default": all; "": none); MCP tools are not affected`)
	f.StringVar(&s.settingSources, "setting-sources", "", "the settings levels to load, comma-separated: user, project, local (\"\": none; --settings and managed settings always load)")
	f.BoolVar(&s.allowBypass, "allow-dangerously-skip-permissions", false, "allow bypassPermissions in this session: switching to it later, and agent definitions that declare it (unless managed settings disable it)")
	f.BoolVar(&s.sessionMirror, "session-mirror", false, "mirror the session; no effect in cadre")
	f.StringVar(&s.projectConfigRoot, "project-config-root", "", "read the project's configuration from this checkout; no effect in cadre")
	f.StringArrayVar(&s.pluginDirs, "plugin-dir", nil, "load the Claude Code plugin in this directory: its agents (plugin:agent), skills, hooks and MCP servers (repeatable)")
	f.StringArrayVar(&s.pluginDirsNoMCP, "plugin-dir-no-mcp", nil, "load the Claude Code plugin in this directory without its MCP servers (repeatable)")
	f.BoolVar(&s.forkSession, "fork-session", false, "with --resume or --continue, continue in a new session (--session-id, or a new id) instead of the resumed one")
	f.StringVar(&s.resumeSessionAt, "resume-session-at", "", "resume only up to this message; no effect in cadre yet: the whole session is resumed")
	f.StringVar(&s.resumeDropsTurn, "resume-drops-turn", "", "check what --resume-session-at drops; no effect in cadre")
	f.StringVar(&s.initializeFields, "initialize-fields", "", "options the program sends in its initialize request; no effect in cadre")
	f.StringVar(&s.managedSettings, "managed-settings", "", "policy-tier settings; no effect in cadre (managed settings are read from their file)")
	f.BoolVar(&s.managedInInit, "managed-settings-in-initialize", false, "policy-tier settings in the initialize request; no effect in cadre")
	f.BoolVar(&s.noOptionalLocks, "no-optional-locks", false, "take no optional locks; no effect in cadre")
	// --help lists the flags cadre acts on (--agent, --effort, --tools,
	// --json-schema, --setting-sources, --fork-session, --debug-file…);
	// those it only accepts are left out of it.
	for _, name := range []string{"thinking", "thinking-display", "task-budget", "betas", "channels",
		"session-mirror", "project-config-root", "resume-session-at", "resume-drops-turn",
		"initialize-fields", "managed-settings", "managed-settings-in-initialize", "no-optional-locks"} {
		_ = f.MarkHidden(name)
	}
}

// noEffectWhy says, for each accepted flag cadre does not act on, why.
var noEffectWhy = []struct{ name, why string }{
	{"thinking-display", "thinking blocks are passed on as the model sends them"},
	{"task-budget", "cadre sends no API task budget; --max-budget-usd bounds a run's cost"},
	{"betas", "cadre sends no beta headers of a caller's choosing"},
	{"channels", "cadre has no channels"},
	{"session-mirror", "cadre has no session mirror"},
	{"project-config-root", "the project's configuration is read from the working directory"},
	{"resume-session-at", "cadre's transcripts carry no message ids to cut at, so the whole session is resumed"},
	{"resume-drops-turn", "the whole session is resumed (see --resume-session-at)"},
	{"initialize-fields", "settings and disallowed tools are read from the flags, not the initialize request"},
	{"managed-settings", "managed settings are read from their file only"},
	{"managed-settings-in-initialize", "managed settings are read from their file only"},
	{"no-optional-locks", "cadre takes no optional git locks"},
}

// noEffect writes one line for each flag given that has no effect in
// cadre, naming it.
func (s *sdkFlags) noEffect(w io.Writer) {
	if s.set == nil {
		return
	}
	for _, n := range noEffectWhy {
		if s.set(n.name) {
			fmt.Fprintf(w, "cadre: --%s has no effect in cadre: %s\n", n.name, n.why)
		}
	}
	if s.set("thinking") && s.thinking != "disabled" {
		fmt.Fprintf(w, "cadre: --thinking=%s has no effect in cadre: thinking is on only with a budget (--max-thinking-tokens or settings)\n", s.thinking)
	}
	if s.set("fork-session") && !s.set("resume") && !s.set("continue") {
		fmt.Fprintln(w, "cadre: --fork-session has no effect in cadre without --resume or --continue")
	}
}

// check validates the flags whose values cadre uses.
func (s *sdkFlags) check() error {
	if s.effort != "" && !llm.Effort(s.effort).Valid() {
		return fmt.Errorf("invalid --effort %q: valid values are low, medium, high, xhigh, max", s.effort)
	}
	switch s.permissionPrompts {
	case "", "host", "none":
	default:
		return fmt.Errorf("invalid --permission-prompts %q: valid values are host, none", s.permissionPrompts)
	}
	if s.set != nil && s.set("thinking") {
		switch s.thinking {
		case "enabled", "adaptive", "disabled":
		default:
			return fmt.Errorf("invalid --thinking %q: valid values are enabled, adaptive, disabled", s.thinking)
		}
	}
	return nil
}

// noPrompts reports whether --permission-prompts none leaves nobody to
// answer permission prompts: what would be asked is denied.
func (s *sdkFlags) noPrompts() bool { return s.permissionPrompts == "none" }

// sources is the --setting-sources value: nil (all levels) when not
// given; the names cadre knows, with a line on w for any other.
func (s *sdkFlags) sources(w io.Writer) []string {
	if s.set == nil || !s.set("setting-sources") {
		return nil
	}
	out := []string{}
	for _, n := range strings.FieldsFunc(s.settingSources, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !slices.Contains(config.SettingSources(), n) {
			fmt.Fprintf(w, "cadre: --setting-sources: no settings level is named %q (valid: user, project, local); it is ignored\n", n)
			continue
		}
		out = append(out, n)
	}
	return out
}

// toolNames is the --tools value as a tool set: nil for all (flag not
// given, or "default"), empty for none.
func (s *sdkFlags) toolNames() []string {
	if s.set == nil || !s.set("tools") || strings.TrimSpace(s.tools) == "default" {
		return nil
	}
	return append([]string{}, strings.FieldsFunc(s.tools, func(r rune) bool { return r == ',' || r == ' ' })...)
}

// applyAgent makes the main agent the --agent definition: its prompt is
// the system prompt, and its model, effort and tools apply where the flags
// set none (--system-prompt, --model, --effort, --tools win); its
// disallowed tools are deny rules of the session. The tool list limits
// every agent of the session, as --tools does. Its permission mode is not
// applied: an agent file cannot widen the session. An unknown name is
// said on w, and the main agent runs as usual.
func (s *sdkFlags) applyAgent(w io.Writer, o *options, cfg *cadre.Config) error {
	if s.agent == "" {
		return nil
	}
	defs := cfg.Agents
	if defs == nil {
		defs = agentdef.Builtins()
	}
	i := slices.IndexFunc(defs, func(d *agentdef.Definition) bool { return d.Name == s.agent })
	if i < 0 {
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		fmt.Fprintf(w, "cadre: --agent: no agent is named %q (agents: %s); the main agent runs as usual\n", s.agent, strings.Join(names, ", "))
		return nil
	}
	def := defs[i]
	if o.systemPrompt == "" && strings.TrimSpace(def.Body) != "" {
		cfg.SystemPrompt = def.Body
	}
	if m := def.Model; m != "" && m != "inherit" && o.model == "" {
		id := m
		if cfg.ResolveModel != nil {
			if r, ok := cfg.ResolveModel(m); ok {
				id = r
			}
		}
		cfg.ModelID = id
	}
	if def.Effort != "" && s.effort == "" {
		cfg.Effort = def.Effort
	}
	if def.Tools != nil && s.toolNames() == nil && !slices.ContainsFunc(def.Tools, func(e agentdef.ToolEntry) bool { return e.Name == "*" }) {
		names := []string{}
		for _, e := range def.Tools {
			if !tool.IsMCP(e.Name) {
				names = append(names, e.Name)
			}
		}
		cfg.ToolNames = names
	}
	if len(def.DisallowedTools) > 0 && cfg.Permissions != nil {
		var raw []string
		for _, e := range def.DisallowedTools {
			raw = append(raw, e.Raw)
		}
		rules, err := permission.ParseRules(permission.Deny, "--agent "+def.Name, "", raw)
		if err != nil {
			return fmt.Errorf("--agent %s: disallowedTools: %w", def.Name, err)
		}
		perms := *cfg.Permissions
		perms.Rules = append(slices.Clone(perms.Rules), rules...)
		cfg.Permissions = &perms
	}
	return nil
}

// plugins are the --plugin-dir and --plugin-dir-no-mcp directories.
func (s *sdkFlags) plugins() []plugin.Dir {
	var out []plugin.Dir
	for _, d := range s.pluginDirs {
		out = append(out, plugin.Dir{Path: d})
	}
	for _, d := range s.pluginDirsNoMCP {
		out = append(out, plugin.Dir{Path: d, NoMCP: true})
	}
	return out
}

// apply sets what the honoured flags say on cfg; warnings go to w.
func (s *sdkFlags) apply(p procIO, cfg *cadre.Config) error {
	w := p.stderr
	if s.jsonSchema != "" {
		// Checked here for an error that names the flag; the runtime
		// compiles it again.
		if _, err := builtin.NewStructuredOutput(json.RawMessage(s.jsonSchema)); err != nil {
			return fmt.Errorf("invalid --json-schema: %s", strings.TrimPrefix(err.Error(), "output schema: "))
		}
		cfg.OutputSchema = json.RawMessage(s.jsonSchema)
	}
	// The bound holds for sub-agents with an output schema too (S-15.6).
	if v := strings.TrimSpace(p.getenv("MAX_STRUCTURED_OUTPUT_RETRIES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid MAX_STRUCTURED_OUTPUT_RETRIES %q: want a whole number of attempts, 1 or more", v)
		}
		cfg.OutputRetries = n
	}
	if s.thinking == "disabled" {
		cfg.Thinking = nil
	}
	if s.effort != "" {
		cfg.Effort = llm.Effort(s.effort)
	}
	if names := s.toolNames(); names != nil {
		for _, n := range names {
			if _, ok := tool.Lookup(n); !ok {
				fmt.Fprintf(w, "cadre: --tools: no tool is named %q; it is ignored\n", n)
			}
		}
		cfg.ToolNames = names
	}
	if s.noPrompts() && cfg.Permissions != nil {
		perms := *cfg.Permissions
		perms.Prompter, perms.PromptTool = nil, ""
		cfg.Permissions = &perms
	}
	return nil
}

// fork moves a resumed session (cfg.History, cfg.SessionID) to a new
// session, as --fork-session asks: the id of --session-id or a new one,
// whose transcript starts as a copy of the resumed one, so the fork can be
// resumed in turn while the original stays as it was.
func (s *sdkFlags) fork(o *options, cfg *cadre.Config) error {
	if !s.forkSession || (!o.continueLast && o.resume == "") || cfg.SessionID == "" {
		return nil
	}
	from := cfg.SessionID
	to := cmp.Or(o.sessionID, uuid.NewString())
	if to == from {
		return fmt.Errorf("--fork-session: --session-id %s is the resumed session", to)
	}
	cfg.SessionID = to
	if cfg.NoTranscript {
		return nil
	}
	src, err := transcript.SessionFile(cfg.StateDir, cfg.Cwd, from)
	if err != nil {
		return fmt.Errorf("--fork-session: %w", err)
	}
	dst, err := transcript.SessionFile(cfg.StateDir, cfg.Cwd, to)
	if err != nil {
		return fmt.Errorf("--fork-session: %w", err)
	}
	if err := copyTranscript(src, dst, to); err != nil {
		return fmt.Errorf("--fork-session: copy session %s to %s: %w", from, to, err)
	}
	return nil
}

// copyTranscript writes the entries of the transcript at src to a new
// transcript at dst, with the session id changed to id.
func copyTranscript(src, dst, id string) error {
	entries, err := transcript.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	for _, e := range entries {
		e.SessionID = id
		b, err := json.Marshal(e)
		if err != nil {
			_ = f.Close()
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return errors.Join(bw.Flush(), f.Sync(), f.Close())
}

// debugOutput opens where the --debug lines go: --debug-file's file, or
// stderr; --debug-file and --debug-to-stderr turn --debug on. The
// returned close is never nil.
func (s *sdkFlags) debugOutput(o *options, stderr io.Writer) (io.Writer, func(), error) {
	if (s.debugFile != "" || s.debugToStderr) && o.debug == "" {
		o.debug = "all"
	}
	if s.debugFile == "" {
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(s.debugFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--debug-file: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}
