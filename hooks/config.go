package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/textdist"
)

// DefaultTimeout bounds a hook that sets no timeout of its own.
const DefaultTimeout = 60 * time.Second

// Callback is an in-process hook (an SDK's hook_callback, a Go program's
// own check). It gets the event's input and answers with the JSON a
// command hook would print on stdout (nil for no opinion). It must return
// when ctx is done; an error is a non-blocking hook error.
type Callback func(ctx context.Context, in *Input) (json.RawMessage, error)

// Handler is one hook: a shell command or a callback.
type Handler struct {
	// Command is run with /bin/sh -c; empty for a callback.
	Command string
	// Callback is called when Command is empty.
	Callback Callback
	// Name labels a callback in observers and listings.
	Name string
	// Timeout bounds one run; 0 means DefaultTimeout (or the dispatcher's).
	Timeout time.Duration
}

// label is how observers and listings show the handler.
func (h Handler) label() string {
	if h.Command != "" {
		return h.Command
	}
	if h.Name != "" {
		return "callback " + h.Name
	}
	return "callback"
}

// Group is a matcher and the hooks that run when it matches, with the
// file they came from.
type Group struct {
	Event Event
	// Matcher is as written: "" or "*" for every value; letters, digits,
	// "_" and "|" for exact names ("Edit|Write"); anything else is a
	// regular expression searched for in the value ("mcp__.*").
	Matcher  string
	Handlers []Handler
	// Source is the settings or agent file, or a label such as "sdk".
	Source string

	match matcher
}

// Config is a set of hook groups. It is immutable once built; a
// Dispatcher holds one for the settings and one per registration.
type Config struct {
	groups []Group
}

// Entry is one hook of a Config, flattened for listings (`cadre hooks
// list`).
type Entry struct {
	Event   Event
	Matcher string
	// Command is the command, or "callback NAME".
	Command string
	Timeout time.Duration
	Source  string
}

// Entries lists every hook, in event order then configuration order.
func (c *Config) Entries() []Entry {
	if c == nil {
		return nil
	}
	var out []Entry
	for _, e := range events {
		for _, g := range c.groups {
			if g.Event != e {
				continue
			}
			for _, h := range g.Handlers {
				out = append(out, Entry{Event: e, Matcher: g.Matcher, Command: h.label(), Timeout: h.Timeout, Source: g.Source})
			}
		}
	}
	return out
}

// Len returns the number of hooks.
func (c *Config) Len() int {
	if c == nil {
		return 0
	}
	n := 0
	for _, g := range c.groups {
		n += len(g.Handlers)
	}
	return n
}

// NewConfig builds a Config from groups (for callback hooks and Go
// programs). A group with an unknown event, no handlers, a handler with
// neither command nor callback, or a negative timeout is an error; a
// matcher that is not a valid regular expression is an error too.
func NewConfig(groups ...Group) (*Config, error) {
	c := &Config{}
	for i, g := range groups {
		if !g.Event.Valid() {
			return nil, fmt.Errorf("hook group %d: unknown event %q", i, g.Event)
		}
		if len(g.Handlers) == 0 {
			return nil, fmt.Errorf("hook group %d (%s): no handlers", i, g.Event)
		}
		for j, h := range g.Handlers {
			if h.Command == "" && h.Callback == nil {
				return nil, fmt.Errorf("hook group %d (%s) handler %d: neither a command nor a callback", i, g.Event, j)
			}
			if h.Timeout < 0 {
				return nil, fmt.Errorf("hook group %d (%s) handler %d: negative timeout", i, g.Event, j)
			}
		}
		m, err := compileMatcher(g.Matcher)
		if err != nil {
			return nil, fmt.Errorf("hook group %d (%s): %w", i, g.Event, err)
		}
		g.match = m
		g.Handlers = slices.Clone(g.Handlers)
		c.groups = append(c.groups, g)
	}
	return c, nil
}

// Diagnostic is a problem in a hooks value that did not stop it from
// loading (an unknown event, an unsupported hook type).
type Diagnostic struct {
	// File is the settings or agent file.
	File string
	// Path locates the value, such as hooks.PreToolUse[0].hooks[1].
	Path    string
	Message string
}

// String formats the diagnostic as "file: path: message".
func (d Diagnostic) String() string {
	if d.Path == "" {
		return fmt.Sprintf("%s: %s", d.File, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.Path, d.Message)
}

// ErrInvalid is wrapped by Parse for a hooks value that cannot be used.
// Claude Code drops the whole file then, since a guard that does not load
// may be what the file's rules rely on; cadre's settings loader makes it
// an error.
var ErrInvalid = errors.New("invalid hooks configuration")

// Parse reads the `hooks` value of one settings file: an object from event
// to a list of {matcher, hooks: [{type: "command", command, timeout}]}
// (timeout in seconds). Unknown events, hook types other than command and
// keys cadre does not use are diagnostics; a value of the wrong shape, a
// hook without a command or a timeout that is not a positive number is an
// error wrapping ErrInvalid that names file and place.
func Parse(raw json.RawMessage, file string) (*Config, []Diagnostic, error) {
	return parse(raw, file, false)
}

// ParseAgent reads the `hooks` value of an agent definition's frontmatter
// (agentdef.Definition.Hooks) like Parse, except that Stop hooks become
// SubagentStop hooks: in an agent file, Stop means the agent's own end
// (S-14.2). Register the result with Dispatcher.AddForAgent while the
// agent runs. Plugin agents carry no hooks: agentdef drops them with a
// warning.
func ParseAgent(raw json.RawMessage, file string) (*Config, []Diagnostic, error) {
	return parse(raw, file, true)
}

type rawGroup struct {
	Matcher *json.RawMessage             `json:"matcher"`
	Hooks   []map[string]json.RawMessage `json:"hooks"`
}

func parse(raw json.RawMessage, file string, agent bool) (*Config, []Diagnostic, error) {
	c := &Config{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, fmt.Errorf("%s: hooks: %w: must be an object from event name to a list of matcher groups (%v)", file, ErrInvalid, err)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var diags []Diagnostic
	warn := func(path, format string, args ...any) {
		diags = append(diags, Diagnostic{File: file, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	// Events in a stable order, so listings and merges are deterministic.
	slices.SortStableFunc(keys, func(a, b string) int { return eventRank(a) - eventRank(b) })
	for _, name := range keys {
		path := "hooks." + name
		ev := Event(name)
		if !ev.Valid() {
			warn(path, "%s; ignored", unknownEvent(name))
			continue
		}
		var groups []rawGroup
		if err := json.Unmarshal(top[name], &groups); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w: must be a list of {\"matcher\", \"hooks\"} objects (%v)", file, path, ErrInvalid, err)
		}
		target := ev
		if agent && ev == Stop {
			target = SubagentStop
		}
		for i, rg := range groups {
			g, gd, err := parseGroup(rg, target, fmt.Sprintf("%s[%d]", path, i), file)
			diags = append(diags, gd...)
			if err != nil {
				return nil, nil, err
			}
			if len(g.Handlers) > 0 {
				c.groups = append(c.groups, g)
			}
		}
	}
	return c, diags, nil
}

func eventRank(name string) int {
	if i := slices.Index(events, Event(name)); i >= 0 {
		return i
	}
	return len(events)
}

func unknownEvent(name string) string {
	if slices.Contains(claudeOnly, name) {
		return fmt.Sprintf("%q is a Claude Code hook event cadre does not fire", name)
	}
	best, bestD := "", 4
	for _, e := range events {
		if d := textdist.Distance(strings.ToLower(name), strings.ToLower(string(e))); d < bestD {
			best, bestD = string(e), d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown hook event %q (did you mean %q?)", name, best)
	}
	return fmt.Sprintf("unknown hook event %q", name)
}

func parseGroup(rg rawGroup, ev Event, path, file string) (Group, []Diagnostic, error) {
	var diags []Diagnostic
	warn := func(p, format string, args ...any) {
		diags = append(diags, Diagnostic{File: file, Path: p, Message: fmt.Sprintf(format, args...)})
	}
	g := Group{Event: ev, Source: file}
	if rg.Matcher != nil && string(*rg.Matcher) != "null" {
		if err := json.Unmarshal(*rg.Matcher, &g.Matcher); err != nil {
			return g, nil, fmt.Errorf("%s: %s.matcher: %w: must be a string", file, path, ErrInvalid)
		}
	}
	m, err := compileMatcher(g.Matcher)
	if err != nil {
		warn(path+".matcher", "%v; the group never matches", err)
		m = matcher{never: true}
	}
	g.match = m
	if g.Matcher != "" && g.Matcher != "*" && ev.matchField() == "" {
		warn(path+".matcher", "%s hooks have no matcher; %q is ignored and the group always runs", ev, g.Matcher)
		g.match = matcher{all: true}
	}
	for j, h := range rg.Hooks {
		hp := fmt.Sprintf("%s.hooks[%d]", path, j)
		hd, handler, err := parseHandler(h, hp, file)
		diags = append(diags, hd...)
		if err != nil {
			return g, diags, err
		}
		if handler.Command != "" {
			g.Handlers = append(g.Handlers, handler)
		}
	}
	return g, diags, nil
}

// handlerKeys are the keys of a hook object cadre reads; ignoredKeys are
// Claude Code keys it accepts without acting on them.
var (
	handlerKeys = []string{"type", "command", "timeout"}
	ignoredKeys = []string{"statusMessage"}
)

func parseHandler(h map[string]json.RawMessage, path, file string) ([]Diagnostic, Handler, error) {
	var diags []Diagnostic
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %w: %s", file, path, ErrInvalid, fmt.Sprintf(format, args...))
	}
	var typ string
	if v, ok := h["type"]; ok {
		if err := json.Unmarshal(v, &typ); err != nil {
			return nil, Handler{}, bad("type must be a string")
		}
	}
	switch typ {
	case "command":
	case "":
		return nil, Handler{}, bad(`missing "type" (cadre runs "command" hooks)`)
	default:
		diags = append(diags, Diagnostic{File: file, Path: path, Message: fmt.Sprintf("hook type %q is not supported by cadre (only \"command\"); skipped", typ)})
		return diags, Handler{}, nil
	}
	var out Handler
	if err := json.Unmarshal(h["command"], &out.Command); err != nil || strings.TrimSpace(out.Command) == "" {
		return nil, Handler{}, bad(`a command hook needs a non-empty "command" string`)
	}
	if v, ok := h["timeout"]; ok && string(v) != "null" {
		var secs float64
		if err := json.Unmarshal(v, &secs); err != nil || secs <= 0 || math.IsInf(secs, 0) || secs > 24*3600 {
			return nil, Handler{}, bad(`"timeout" must be a number of seconds greater than 0 (at most a day), not %s`, v)
		}
		out.Timeout = time.Duration(secs * float64(time.Second))
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(handlerKeys, k) || slices.Contains(ignoredKeys, k) {
			continue
		}
		diags = append(diags, Diagnostic{File: file, Path: path + "." + k, Message: fmt.Sprintf("key %q is not supported by cadre; ignored (the hook runs synchronously, every time)", k)})
	}
	return diags, out, nil
}

// Source is one raw `hooks` value with the file it came from.
type Source struct {
	Raw  json.RawMessage
	File string
	// Managed marks managed (policy) settings.
	Managed bool
}

// MergeOptions are the settings that govern hooks as a whole.
type MergeOptions struct {
	// ManagedOnly keeps only hooks from managed settings (Claude Code's
	// allowManagedHooksOnly); each dropped file is reported.
	ManagedOnly bool
	// DisableAll turns every hook off (disableAllHooks). The config layer
	// decides which files may set it.
	DisableAll bool
}

// Merge parses the hooks values of several settings files, lowest
// precedence first, into one Config. Hooks add up across files (a higher
// file cannot remove a lower file's hook); the order of the result is the
// order of the sources. The first invalid value is an error naming its
// file.
func Merge(sources []Source, opts MergeOptions) (*Config, []Diagnostic, error) {
	c := &Config{}
	var diags []Diagnostic
	if opts.DisableAll {
		return c, nil, nil
	}
	for _, s := range sources {
		sc, d, err := Parse(s.Raw, s.File)
		if err != nil {
			return nil, nil, err
		}
		diags = append(diags, d...)
		if opts.ManagedOnly && !s.Managed && sc.Len() > 0 {
			diags = append(diags, Diagnostic{File: s.File, Path: "hooks", Message: "ignored: managed settings allow only managed hooks (allowManagedHooksOnly)"})
			continue
		}
		c.groups = append(c.groups, sc.groups...)
	}
	return c, diags, nil
}

// matcher decides which values a group applies to.
type matcher struct {
	all   bool
	never bool
	names []string
	re    *regexp.Regexp
}

// simpleMatcher is a matcher Claude Code compares exactly, name by name.
var simpleMatcher = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_|]+$`) })

func compileMatcher(s string) (matcher, error) {
	if s == "" || s == "*" {
		return matcher{all: true}, nil
	}
	if simpleMatcher().MatchString(s) {
		return matcher{names: strings.Split(s, "|")}, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return matcher{}, fmt.Errorf("matcher %q is not a valid regular expression (RE2 syntax): %v", s, err)
	}
	return matcher{re: re}, nil
}

func (m matcher) matches(v string) bool {
	switch {
	case m.never:
		return false
	case m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(v)
	}
	return slices.Contains(m.names, v)
}
