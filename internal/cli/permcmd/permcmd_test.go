package permcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/permission"
)

type result struct {
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Source   string `json:"source"`
	Reason   string `json:"reason"`
}

func run(t *testing.T, args ...string) (result, string, error) {
	t.Helper()
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append([]string{"check"}, args...))
	err := cmd.Execute()
	var r result
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
			t.Fatalf("output %q is not JSON: %v", out.String(), jerr)
		}
		if !strings.HasSuffix(out.String(), "}\n") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("output is not one JSON line: %q", out.String())
		}
	}
	return r, errb.String(), err
}

func project(t *testing.T, settingsJSON string) (cwd, home, managed string) {
	t.Helper()
	root := t.TempDir()
	cwd, home, managed = filepath.Join(root, "p"), filepath.Join(root, "h"), filepath.Join(root, "m")
	for _, d := range []string{filepath.Join(cwd, ".cadre"), home, managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if settingsJSON != "" {
		if err := os.WriteFile(filepath.Join(cwd, ".cadre", "settings.json"), []byte(settingsJSON), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cwd, home, managed
}

func TestCheckCommand(t *testing.T) {
	cwd, home, managed := project(t, `{"permissions":{"deny":["Bash(curl:*)"],"allow":["Bash(make:*)"]},"modle":"x"}`)
	base := []string{"--cwd", cwd, "--home", home, "--managed-dir", managed}
	sfile := filepath.Join(cwd, ".cadre", "settings.json")
	cases := []struct {
		name   string
		args   []string
		want   result
		stderr string
	}{
		{name: "settings deny", args: []string{"--tool", "Bash", "--input", `{"command":"make && curl x | sh"}`},
			want:   result{"deny", "Bash(curl:*)", sfile, "denied by rule Bash(curl:*) from " + sfile},
			stderr: `unknown key "modle" (did you mean "model"?)`},
		{name: "settings allow", args: []string{"--tool", "Bash", "--input", `{"command":"make test"}`, "--trust-project"},
			want: result{"allow", "Bash(make:*)", sfile, "allowed by rule Bash(make:*) from " + sfile}},
		// Issue 9: an untrusted workspace's allow rule is ignored, and said so.
		{name: "settings allow untrusted", args: []string{"--tool", "Bash", "--input", `{"command":"make test"}`},
			want:   result{Decision: "ask", Reason: "needs approval: no rule allows `make test`"},
			stderr: `permissions.allow "Bash(make:*)" ignored`},
		{name: "flag allow", args: []string{"--tool", "Bash", "--input", `{"command":"npm test"}`, "--allow", "Bash(npm test:*)"},
			want: result{"allow", "Bash(npm test:*)", "--allow", "allowed by rule Bash(npm test:*) from --allow"}},
		{name: "flag deny beats flag allow", args: []string{"--tool", "Bash", "--input", `{"command":"npm test"}`, "--allow", "Bash", "--deny", "Bash(npm:*)"},
			want: result{"deny", "Bash(npm:*)", "--deny", "denied by rule Bash(npm:*) from --deny"}},
		{name: "ask", args: []string{"--tool", "Bash", "--input", `{"command":"git push"}`, "--ask", "Bash(git push:*)", "--mode", "bypassPermissions"},
			want: result{"ask", "Bash(git push:*)", "--ask", "rule Bash(git push:*) from --ask requires approval"}},
		{name: "mode read", args: []string{"--tool", "Read", "--input", `{"file_path":"x.go"}`},
			want: result{Decision: "allow", Reason: "default mode runs read-only calls inside the working directories"}},
		{name: "plan write", args: []string{"--tool", "Write", "--input", `{"file_path":"x.go","content":""}`, "--mode", "plan"},
			want: result{Decision: "deny", Reason: "plan mode is read-only: no file writes and no Bash commands that are not read-only"}},
		{name: "acceptEdits outside", args: []string{"--tool", "Edit", "--input", `{"file_path":"/elsewhere/x"}`, "--mode", "acceptEdits"},
			want: result{Decision: "ask", Reason: "needs approval: /elsewhere/x is outside the working directories"}},
		{name: "add-dir", args: []string{"--tool", "Edit", "--input", `{"file_path":"/elsewhere/x"}`, "--mode", "acceptEdits", "--add-dir", "/elsewhere"},
			want: result{Decision: "allow", Reason: "acceptEdits mode runs file edits inside the working directories"}},
		{name: "dontAsk", args: []string{"--tool", "Bash", "--input", `{"command":"whoami; id -u; rm x"}`, "--mode", "dontAsk"},
			want: result{Decision: "deny", Reason: "needs approval: no rule allows `rm x` (dontAsk mode denies what would need approval)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr, err := run(t, append(base, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
		})
	}
}

func TestCheckCommandErrors(t *testing.T) {
	cwd, home, managed := project(t, "")
	base := []string{"--cwd", cwd, "--home", home, "--managed-dir", managed}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--tool", "Bash", "--mode", "yolo"}, []string{"yolo", "default, acceptEdits, plan, dontAsk, bypassPermissions"}},
		{[]string{"--tool", "Bash", "--mode", "auto"}, []string{"auto", "not supported"}},
		{[]string{"--tool", "Bash", "--allow", "Bash(npm"}, []string{"--allow", "Bash(npm", "missing closing", "rules look like"}},
		{[]string{"--tool", "Bash", "--deny", "mcp__"}, []string{"--deny", "MCP"}},
		{[]string{"--tool", "Bash", "--input", "{"}, []string{"--input", "not valid JSON"}},
		{[]string{"--input", "{}"}, []string{"tool"}},
		{[]string{"--tool", "Bash", "--deny", "Bsh(rm:*)"}, []string{"deny rule Bsh(rm:*) from --deny", "did you mean Bash?", "protects nothing"}},
		{[]string{"--tool", "Bash", "--ask", "Edt(./x)"}, []string{"ask rule Edt(./x)", "did you mean Edit?"}},
	}
	for _, tc := range cases {
		_, _, err := run(t, append(base, tc.args...)...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", tc.args, err, w)
			}
		}
	}
	// A typo in a settings file's deny rule stops the check, naming the file.
	cwd3, _, _ := project(t, `{"permissions": {"deny": ["Reed(./secrets/**)"]}}`)
	_, _, err := run(t, "--cwd", cwd3, "--home", home, "--managed-dir", managed, "--tool", "Bash")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(cwd3, ".cadre", "settings.json")) || !strings.Contains(err.Error(), "did you mean Read?") {
		t.Errorf("typo in settings deny rule: %v", err)
	}
	// A typo in an allow rule allows nothing and says so.
	r, stderr, err := run(t, append(base, "--tool", "Bash", "--input", `{"command":"curl x"}`, "--allow", "Bsh(curl:*)")...)
	if err != nil || r.Decision != "ask" || !strings.Contains(stderr, "did you mean Bash?); it allows nothing") {
		t.Errorf("typo in allow rule: decision %q, err %v, stderr %q", r.Decision, err, stderr)
	}
	// A malformed settings file stops the check with file and line.
	cwd2, _, _ := project(t, "{\n  \"permissions\": {\"deny\": [\"Bash\"\n}")
	_, _, err = run(t, "--cwd", cwd2, "--home", home, "--managed-dir", managed, "--tool", "Bash")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(cwd2, ".cadre", "settings.json")+":3:") {
		t.Errorf("malformed settings: %v", err)
	}
}

func TestFlagRules(t *testing.T) {
	rules, err := FlagRules([]string{"Bash(git log:*) Read", "Edit,Bash(npm run test, build)"}, []string{"WebFetch Agent(Explore)"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, string(r.Behavior)+" "+r.String()+" "+r.Source)
	}
	want := []string{
		"allow Bash(git log:*) --allowedTools", "allow Read --allowedTools", "allow Edit --allowedTools",
		"allow Bash(npm run test, build) --allowedTools", "deny WebFetch --disallowedTools", "deny Agent(Explore) --disallowedTools",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := FlagRules([]string{"Bash(x"}, nil); err == nil || !strings.Contains(err.Error(), "--allowedTools") {
		t.Errorf("bad rule: %v", err)
	}
	for _, tc := range []struct{ allowed, disallowed []string }{{disallowed: []string{"Bsh(rm:*)"}}, {allowed: []string{"Read Grp"}}} {
		if _, err := FlagRules(tc.allowed, tc.disallowed); err == nil || !strings.Contains(err.Error(), "did you mean") {
			t.Errorf("FlagRules(%q, %q): error %v, want a did-you-mean", tc.allowed, tc.disallowed, err)
		}
	}
	if _, err := FlagRules(nil, []string{"mcp__later__tool"}); err != nil {
		t.Errorf("an MCP rule is checked once servers are known, not here: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b(c d)", "e"}, SplitFlagList([]string{"a b(c d)", "e"})); diff != "" {
		t.Error(diff)
	}
}

// Deny rules bind Bash through the check command too, and --sandbox
// shows what the sandbox changes.
func TestCheckCommandBashExposure(t *testing.T) {
	cwd, home, managed := project(t, `{"permissions": {"deny": ["Read(./secrets/**)"]}}`)
	if err := os.MkdirAll(filepath.Join(cwd, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "secrets", "key.txt"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--cwd", cwd, "--home", home, "--managed-dir", managed, "--mode", "bypassPermissions", "--tool", "Bash"}
	for _, c := range []struct {
		cmd     string
		sandbox bool
		want    string
		reason  string
	}{
		{"cat secr*/key.txt", false, "deny", "Read(./secrets/**)"},
		{"grep -r TOP .", false, "ask", "sandbox.enabled"},
		{"grep -r TOP .", true, "allow", ""},
		{"git show HEAD:secrets/key.txt", true, "ask", "git history"},
	} {
		args := append(append([]string(nil), base...), "--input", `{"command":"`+c.cmd+`"}`)
		if c.sandbox {
			args = append(args, "--sandbox")
		}
		r, _, err := run(t, args...)
		if err != nil || r.Decision != c.want || !strings.Contains(r.Reason+r.Rule, c.reason) {
			t.Errorf("%s (sandbox %v): %+v %v, want %s with %q", c.cmd, c.sandbox, r, err, c.want, c.reason)
		}
	}
}

func TestDescribe(t *testing.T) {
	if got := Describe(permission.Decision{Behavior: permission.Allow, Rule: "Bash", Source: "s", Reason: "r"}); got != "allow (Bash from s): r" {
		t.Errorf("got %q", got)
	}
	if got := Describe(permission.Decision{Behavior: permission.Ask, Reason: "r"}); got != "ask: r" {
		t.Errorf("got %q", got)
	}
}

func TestCheckCommandReadsEveryLayer(t *testing.T) {
	cwd, home, managed := project(t, `{"permissions":{"allow":["Read"]}}`)
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	userFile := filepath.Join(home, ".config", "cadre", "settings.json")
	write(userFile, `{"permissions":{"allow":["Edit(/x.go)"]}}`)
	managedFile := filepath.Join(managed, "managed-settings.d", "10-secrets.json")
	write(managedFile, `{"permissions":{"deny":["Read(./secret.txt)"]}}`)
	base := []string{"--cwd", cwd, "--home", home, "--managed-dir", managed}

	got, _, err := run(t, append(base, "--tool", "Read", "--input", `{"file_path":"secret.txt"}`)...)
	if err != nil || got.Decision != "deny" || got.Source != managedFile {
		t.Errorf("managed deny: %+v %v", got, err)
	}
	// A user-file path rule is anchored at home, so it does not cover the
	// project's x.go.
	got, _, err = run(t, append(base, "--tool", "Write", "--input", `{"file_path":"x.go"}`)...)
	if err != nil || got.Decision != "ask" {
		t.Errorf("user rule outside its base: %+v %v", got, err)
	}
	got, _, err = run(t, append(base, "--tool", "Write", "--input", `{"file_path":"`+filepath.Join(home, "x.go")+`"}`)...)
	if err != nil || got.Decision != "allow" || got.Source != userFile {
		t.Errorf("user rule: %+v %v", got, err)
	}
	// --settings adds a file above the project ones.
	extra := filepath.Join(cwd, "extra.json")
	write(extra, `{"permissions":{"deny":["Read(./a.txt)"]}}`)
	got, _, err = run(t, append(base, "--settings", "extra.json", "--tool", "Read", "--input", `{"file_path":"a.txt"}`)...)
	if err != nil || got.Decision != "deny" || got.Source != extra {
		t.Errorf("--settings: %+v %v", got, err)
	}
}

// The check decides as the session would: settings that turn the sandbox
// on for every agent count like --sandbox, background-only ones do not.
func TestCheckCommandSandboxSettings(t *testing.T) {
	for _, c := range []struct {
		sandbox string
		want    string
	}{
		{`{"enabled": true}`, "allow"},
		{`{"enabled": true, "backgroundOnly": true}`, "ask"},
		{`{"enabled": false}`, "ask"},
	} {
		cwd, home, managed := project(t, `{"permissions": {"deny": ["Read(./secrets/**)"]}, "sandbox": `+c.sandbox+`}`)
		if err := os.MkdirAll(filepath.Join(cwd, "secrets"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cwd, "secrets", "key.txt"), []byte("k"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--cwd", cwd, "--home", home, "--managed-dir", managed, "--mode", "bypassPermissions", "--tool", "Bash", "--input", `{"command":"grep -r TOP ."}`}
		r, _, err := run(t, args...)
		if err != nil || r.Decision != c.want {
			t.Errorf("sandbox %s: %+v %v, want %s", c.sandbox, r, err, c.want)
		}
	}
}
