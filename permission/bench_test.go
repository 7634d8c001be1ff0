package permission

import (
	"encoding/json"
	"testing"
)

func BenchmarkSplitBash(b *testing.B) {
	cmd := "npm test && git diff --stat | head -20; echo $(date) > /dev/null"
	for b.Loop() {
		if _, err := SplitBash(cmd); err != nil {
			b.Fatal(err)
		}
	}
}

func benchChecker(b *testing.B) *Checker {
	b.Helper()
	cwd := b.TempDir()
	allow, _ := ParseRules(Allow, "s.json", "", []string{"Bash(npm test:*)", "Bash(git *)", "Edit(./src/**)", "mcp__s"})
	deny, _ := ParseRules(Deny, "m.json", "", []string{"Bash(rm:*)", "Bash(curl:*)", "Read(./.env)", "Read(~/.ssh/**)"})
	c, err := NewChecker(Config{Cwd: cwd, Home: cwd, Rules: append(allow, deny...)})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkCheckBash(b *testing.B) {
	c := benchChecker(b)
	in, _ := json.Marshal(map[string]string{"command": "npm test && git status | grep x"})
	req := Request{Tool: "Bash", Input: in}
	for b.Loop() {
		if d := c.Check(req); d.Behavior != Allow {
			b.Fatal(d)
		}
	}
}

func BenchmarkCheckRead(b *testing.B) {
	c := benchChecker(b)
	req := Request{Tool: "Read", Input: json.RawMessage(`{"file_path":"src/main.go"}`)}
	for b.Loop() {
		if d := c.Check(req); d.Behavior != Allow {
			b.Fatal(d)
		}
	}
}
