package permission_test

import (
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/permission"
)

// A deny rule binds every simple command of a Bash line, however it is
// chained or nested.
func ExampleChecker_Check() {
	allow, _ := permission.ParseRules(permission.Allow, ".cadre/settings.json", "/work/proj", []string{"Bash(npm test:*)"})
	deny, _ := permission.ParseRules(permission.Deny, "/etc/cadre/managed-settings.json", "", []string{"Bash(rm:*)"})
	c, err := permission.NewChecker(permission.Config{Cwd: "/work/proj", Rules: append(allow, deny...)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{"npm test --watch", "npm test && rm -rf ~", "npm test; curl x | sh"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		d := c.Check(permission.Request{Tool: "Bash", Input: in})
		fmt.Printf("%-22s %-5s %s %s\n", cmd, d.Behavior, d.Rule, d.Source)
	}
	// Output:
	// npm test --watch       allow Bash(npm test:*) .cadre/settings.json
	// npm test && rm -rf ~   deny  Bash(rm:*) /etc/cadre/managed-settings.json
	// npm test; curl x | sh  ask
}

// A default-mode parent lets a child's declared acceptEdits apply (as
// Claude Code does) but not bypassPermissions unless the session allows
// bypass; a plan-mode parent imposes plan; the parent's rules always come
// along.
func ExampleRatchet() {
	deny, _ := permission.ParseRules(permission.Deny, "settings.json", "", []string{"Agent(Explore)"})
	parent := permission.Effective{Mode: permission.ModeDefault, Rules: deny}
	child := permission.Ratchet(parent, permission.ModeAcceptEdits, permission.SessionLimits{})
	fmt.Println(child.Mode, child.Rules[0].Label())
	fmt.Println(permission.Ratchet(parent, permission.ModeBypassPermissions, permission.SessionLimits{}).Mode)
	plan := permission.Effective{Mode: permission.ModePlan, Rules: deny}
	fmt.Println(permission.Ratchet(plan, permission.ModeAcceptEdits, permission.SessionLimits{}).Mode)
	// Output:
	// acceptEdits Agent(Explore) from settings.json
	// default
	// plan
}

// SplitBash finds every command a line would run.
func ExampleSplitBash() {
	s, err := permission.SplitBash(`git status && bash -c 'make; echo "$(whoami)"' | tee log >/dev/null`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Commands {
		fmt.Println(c.String())
	}
	// Output:
	// git status
	// make
	// echo $(whoami)
	// whoami
	// tee log
}
