package tui

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cadre-dev/cadre/agentdef"
)

// agentsTable renders the agent definitions like `cadre agents`: every
// definition grouped by name, the active one first and then those it
// shadows, with source, model and tools.
func agentsTable(set *agentdef.Set) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTOOLS\tSHADOWED BY")
	all := set.All()
	for _, a := range set.Active() {
		row(tw, a)
		for i := len(all) - 1; i >= 0; i-- {
			if d := all[i]; d.Name == a.Name && d != a {
				row(tw, d)
			}
		}
	}
	tw.Flush()
	errs, warns := 0, 0
	for _, d := range set.Diagnostics() {
		if d.Severity == agentdef.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	if errs+warns > 0 {
		fmt.Fprintf(&b, "%d error(s), %d warning(s) in agent files; run `cadre agents check` for details\n", errs, warns)
	}
	return strings.TrimRight(b.String(), "\n")
}

func row(w *tabwriter.Writer, d *agentdef.Definition) {
	model := d.Model
	if model == "" {
		model = "default"
	}
	shadow := "-"
	if d.ShadowedBy != "" {
		shadow = d.ShadowedBy
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", oneLine(d.Name), d.Source, oneLine(model), clip(oneLine(agentdef.ToolsNote(d)), 40), shadow)
}
