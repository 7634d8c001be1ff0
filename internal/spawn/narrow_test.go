package spawn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/tool"
)

type bashIn struct {
	Command string `json:"command"`
}

func TestNarrow(t *testing.T) {
	t.Parallel()
	ran := 0
	bash := tool.Func(tool.FuncConfig{Name: tool.Bash, Description: "runs"}, func(ctx context.Context, env *tool.Env, in bashIn) (tool.Output, error) {
		ran++
		return tool.Output{Text: "ran " + in.Command}, nil
	})
	n, err := Narrow(bash, []agentdef.ToolEntry{agentdef.ParseToolEntry("Bash(git diff:*)"), agentdef.ParseToolEntry("Bash(git log:*)")}, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	if string(n.Spec().InputSchema) != string(bash.Spec().InputSchema) || n.Spec().Description != bash.Spec().Description {
		t.Fatal("the narrowed tool shows another spec")
	}
	env := &tool.Env{Cwd: t.TempDir()}
	call := func(cmd string) tool.Output {
		in, _ := json.Marshal(bashIn{Command: cmd})
		out, err := n.Run(context.Background(), env, in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := call("git diff HEAD"); out.IsError || out.Text != "ran git diff HEAD" {
		t.Fatalf("allowed call: %+v", out)
	}
	for _, cmd := range []string{"git push", "ls", "git diff && rm -rf /"} {
		out := call(cmd)
		if !out.IsError || !strings.Contains(out.Text, "Bash(git diff:*), Bash(git log:*)") {
			t.Fatalf("%q ran or was refused without naming the entries: %+v", cmd, out)
		}
	}
	if ran != 1 {
		t.Fatalf("the tool ran %d times", ran)
	}
	if _, err := Narrow(bash, []agentdef.ToolEntry{agentdef.ParseToolEntry("Bash(git diff:*")}, ""); err == nil {
		t.Fatal("a broken entry was accepted")
	}
}
