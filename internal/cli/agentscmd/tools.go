package agentscmd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/tool"
)

// knownTool reports whether a tools entry names a tool cadre has: one in
// the tool registry (tool/names.go), an MCP tool or pattern, or "*".
func knownTool(name string) bool {
	if name == "*" || tool.IsMCP(name) {
		return true
	}
	_, ok := tool.Lookup(tool.Canonical(name))
	return ok
}

// splitKnown separates the entries that name a known tool from those that
// match nothing (dropped at spawn, S-4.3).
func splitKnown(es []agentdef.ToolEntry) (known, unknown []agentdef.ToolEntry) {
	for _, e := range es {
		if knownTool(e.Name) {
			known = append(known, e)
		} else {
			unknown = append(unknown, e)
		}
	}
	return known, unknown
}

// effectiveNote is the definition's tools note with the entries that
// match no tool left out.
func effectiveNote(d *agentdef.Definition) string {
	c := *d
	if c.Tools != nil {
		c.Tools, _ = splitKnown(c.Tools)
		if c.Tools == nil {
			c.Tools = []agentdef.ToolEntry{}
		}
	}
	return agentdef.ToolsNote(&c)
}

// unknownToolDiagnostics warns about every tools or disallowedTools entry
// of d that matches no tool, at the line of its key when the file can be
// read, with the nearest tool name as a suggestion.
func unknownToolDiagnostics(d *agentdef.Definition) []agentdef.Diagnostic {
	var out []agentdef.Diagnostic
	for _, f := range []struct {
		key     string
		entries []agentdef.ToolEntry
		effect  string
	}{
		{"tools", d.Tools, "it is dropped, and the agent does not get it"},
		{"disallowedTools", d.DisallowedTools, "it denies nothing"},
	} {
		_, unknown := splitKnown(f.entries)
		for _, e := range unknown {
			msg := fmt.Sprintf("%s entry %q matches no tool cadre has; %s", f.key, e.Raw, f.effect)
			if s := nearestTool(e.Name); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			out = append(out, agentdef.Diagnostic{File: d.Path, Line: keyLine(d.Path, f.key), Severity: agentdef.SeverityWarning, Message: msg})
		}
	}
	return out
}

// nearestTool returns the registered tool name closest to name, or "".
func nearestTool(name string) string {
	best, bestD := "", 3
	ln := strings.ToLower(name)
	for _, k := range tool.Known() {
		if d := textdist.Distance(ln, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// keyLine finds the line of "key:" in a file's frontmatter; 0 when the
// file cannot be read (inline --agents JSON) or the key is not found.
func keyLine(path, key string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimPrefix(sc.Text(), "\ufeff"), key+":") {
			return n
		}
	}
	return 0
}

// sortDiagnostics orders diagnostics by file and line, keeping the order
// of those on one line.
func sortDiagnostics(ds []agentdef.Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].File != ds[j].File {
			return ds[i].File < ds[j].File
		}
		return ds[i].Line < ds[j].Line
	})
}
