package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/cadre-dev/cadre/hooks"
)

// A settings file's hooks, a dispatcher, and one PreToolUse event as the
// loop fires it for the main agent.
func Example() {
	settings := json.RawMessage(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
		"command": "grep -q 'rm -rf' && { echo 'no rm -rf here' >&2; exit 2; }; exit 0"}]}]}`)
	cfg, diags, err := hooks.Parse(settings, ".cadre/settings.json")
	if err != nil || len(diags) > 0 {
		fmt.Println(err, diags)
		return
	}
	d := hooks.New(cfg, hooks.Options{ProjectDir: os.TempDir()})
	main := d.ForAgent(hooks.Scope{SessionID: "s1", Cwd: os.TempDir()})

	for _, cmd := range []string{"ls", "rm -rf /"} {
		input, _ := json.Marshal(map[string]string{"command": cmd})
		o := main.Fire(context.Background(), &hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "Bash", ToolInput: input})
		fmt.Printf("%s: blocked=%v %q\n", cmd, o.Blocked, o.Feedback)
	}
	// Output:
	// ls: blocked=false []
	// rm -rf /: blocked=true ["no rm -rf here"]
}
