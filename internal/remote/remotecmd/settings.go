package remotecmd

// A worker's own settings (`cadre-remote worker --settings FILE`): the
// hooks it runs around every tool call of the agents it works on, read
// from the files' `hooks` keys. Like the worker's permission ceiling they
// are the worker's, never the launcher's: no command travels in a spawn
// request (a definition's frontmatter hooks stay on the launcher).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
)

// settingsFile is what a worker reads of a settings file.
type settingsFile struct {
	Hooks json.RawMessage `json:"hooks"`
}

// settings gives acts the hooks of the worker's --settings files; a
// file that cannot be read or whose hooks cannot be used is an error
// naming it, diagnostics are printed.
func (o *workerFlags) settings(acts *agentwf.Activities, stderr io.Writer) error {
	var d *hooks.Dispatcher
	for _, file := range o.settingsFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("--settings: %w", err)
		}
		var s settingsFile
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("--settings %s: %w", file, err)
		}
		if len(s.Hooks) == 0 {
			continue
		}
		cfg, diags, err := hooks.Parse(s.Hooks, file)
		if err != nil {
			return fmt.Errorf("--settings %s: %w", file, err)
		}
		for _, dg := range diags {
			fmt.Fprintf(stderr, "cadre-remote worker: %s\n", dg)
		}
		if d == nil {
			d = hooks.New(nil, hooks.Options{})
		}
		d.Add(cfg)
	}
	acts.Hooks = d
	return nil
}
