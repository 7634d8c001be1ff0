package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/run"
)

// Entry is one effective setting, as `cadre config` prints it: a key, its
// value and the file that set it. List items are entries of their own with
// the list's key (lists add up across files); an object that is not a
// settings object (env, modelAliases, mcpServers, hooks, …) gives an entry
// per member ("env.FOO", "hooks.PreToolUse"), so a higher file replaces
// single members, as the loaders merge them.
type Entry struct {
	// Key is the dotted key ("permissions.deny", "env.FOO").
	Key string `json:"key"`
	// Value is the value as the file wrote it (compact JSON).
	Value json.RawMessage `json:"value"`
	// Source is the file ("--settings" for inline JSON).
	Source string `json:"source"`
	// Note says why the entry has no effect in cadre ("" when it has one).
	Note string `json:"note,omitempty"`

	level  int
	claude bool
	list   bool
}

// entryDepth is how many levels below its key an object's members become
// entries of their own (modelAliases is provider → alias → id).
var entryDepth = map[string]int{"modelAliases": 2}

// flatten turns one file's content into entries.
func flatten(data []byte, source string, l layer) []Entry {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	var out []Entry
	var walk func(prefix string, obj map[string]json.RawMessage, depth int, root string)
	add := func(key string, v json.RawMessage, list bool) {
		note := ""
		for p := key; p != ""; {
			if k, ok := lookupFull(p); ok {
				note = k.Unsupported
				break
			}
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				break
			}
			p = p[:i]
		}
		out = append(out, Entry{Key: key, Value: compact(v), Source: source, Note: note, level: l.level, claude: l.claude, list: list})
	}
	walk = func(prefix string, obj map[string]json.RawMessage, depth int, root string) {
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			v := obj[name]
			key := strings.TrimPrefix(prefix+"."+name, ".")
			r := root
			if r == "" {
				r = key
			}
			var sub map[string]json.RawMessage
			var items []json.RawMessage
			switch {
			case slices.Contains(keyObjects, key) && json.Unmarshal(v, &sub) == nil:
				walk(key, sub, 0, "")
			case json.Unmarshal(v, &items) == nil && bytes.HasPrefix(bytes.TrimSpace(v), []byte("[")):
				for _, it := range items {
					add(key, it, true)
				}
				if len(items) == 0 {
					add(key, v, false)
				}
			case depth < max(1, entryDepth[r]) && bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) && json.Unmarshal(v, &sub) == nil && len(sub) > 0:
				walk(key, sub, depth+1, r)
			default:
				add(key, v, false)
			}
		}
	}
	walk("", top, 0, "")
	return out
}

// lookupFull finds a key of the table by its dotted name.
func lookupFull(full string) (Key, bool) {
	i := slices.IndexFunc(Keys(), func(k Key) bool { return k.Name == full })
	if i < 0 {
		return Key{}, false
	}
	return Keys()[i], true
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return append(json.RawMessage(nil), v...)
	}
	return b.Bytes()
}

// addEntries merges one file's entries into the effective ones: a list
// item is added, anything else replaces the entries of its key. A clash
// between Claude Code's file and cadre's of the same level is a warning:
// cadre's file wins.
func (s *Settings) addEntries(es []Entry) []Diagnostic {
	var diags []Diagnostic
	seen := map[string]bool{}
	for _, e := range es {
		if !e.list || !seen[e.Key] {
			for _, old := range s.entries {
				if old.Key == e.Key && old.claude && !e.claude && old.level == e.level && !old.list && !e.list && !seen[e.Key] {
					diags = append(diags, Diagnostic{File: e.Source, Severity: SeverityWarning, Topic: TopicSettings,
						Message: fmt.Sprintf("%q is set in both %s and %s: cadre's file wins", e.Key, old.Source, e.Source)})
				}
			}
		}
		if !e.list {
			s.entries = slices.DeleteFunc(s.entries, func(o Entry) bool {
				return o.Key == e.Key || strings.HasPrefix(o.Key, e.Key+".") || strings.HasPrefix(e.Key, o.Key+".")
			})
		} else if !seen[e.Key] {
			// A list replaces a value that was not a list.
			s.entries = slices.DeleteFunc(s.entries, func(o Entry) bool { return o.Key == e.Key && !o.list })
		}
		seen[e.Key] = true
		s.entries = append(s.entries, e)
	}
	return diags
}

// Effective returns every effective settings entry with the file it came
// from, in precedence order of the keys' first appearance, leaving out what
// workspace trust ignored (the loaders of hooks and MCP servers gate them
// later: ask again after Load or Settings.GatedHooksConfig).
func (s *Settings) Effective() []Entry {
	ignored := s.Trust.Ignored()
	var out []Entry
	for _, e := range s.entries {
		if slices.ContainsFunc(ignored, func(ig run.Setting) bool { return ignoredEntry(ig.What, ig.Source, e) }) {
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// ignoredEntry reports whether what, an item Trust.Allow refused from
// source ("hooks", "mcpServers.files", `permissions.allow "Bash"`,
// "sandbox.network.enabled true"), is the entry e or holds it.
func ignoredEntry(what, source string, e Entry) bool {
	if e.Source != source {
		return false
	}
	key, val, _ := strings.Cut(what, " ")
	if e.Key != key && !strings.HasPrefix(e.Key, key+".") {
		return false
	}
	if val == "" {
		return true
	}
	if string(e.Value) == val {
		return true
	}
	var str string
	if json.Unmarshal(e.Value, &str) == nil {
		if q, err := strconv.Unquote(val); err == nil && q == str {
			return true
		}
		return str == val
	}
	return false
}
