package cli

import (
	"fmt"
	"io"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/run"
)

// warnSandbox tells the user, once per session, that the sandbox they
// asked for cannot run here and commands run without it (with
// sandbox.failIfUnavailable, cadre.New failed instead).
func warnSandbox(w io.Writer, rt *cadre.Runtime) {
	if st := rt.SandboxStatus(); st != nil && st.Unavailable != "" {
		fmt.Fprintln(w, "cadre: warning: "+st.Unavailable)
	}
}

// sandboxOf is init's account of the sandbox: off when none was asked
// for.
func sandboxOf(st *run.SandboxStatus) sandboxJSON {
	if st == nil {
		return sandboxJSON{}
	}
	out := sandboxJSON{Enabled: st.Enabled, Unavailable: st.Unavailable}
	if st.Enabled {
		out.Agents = "all"
		if st.BackgroundOnly {
			out.Agents = "background"
		}
		net := st.Network
		out.Network, out.Writable = &net, st.Writable
	}
	return out
}
