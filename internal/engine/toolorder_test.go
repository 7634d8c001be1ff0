package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

func TestMainOnlyLast(t *testing.T) {
	t.Parallel()
	mk := func(names ...string) *tool.Pool {
		var ts []tool.Tool
		for _, n := range names {
			ts = append(ts, tool.Func(tool.FuncConfig{Name: n, Description: n}, func(context.Context, *tool.Env, struct{}) (tool.Output, error) {
				return tool.Output{}, nil
			}))
		}
		return tool.NewPool(ts...)
	}
	tests := []struct {
		in, want []string
	}{
		{[]string{"Agent", "Bash", "TaskStop", "TaskOutput", "SendMessage"}, []string{"Agent", "Bash", "TaskStop", "TaskOutput", "SendMessage"}},
		{[]string{"Agent", "SendMessage", "TaskStop", "ListAgents"}, []string{"Agent", "SendMessage", "TaskStop", "ListAgents"}},
		{[]string{"TaskStop", "Bash", "SendMessage", "Read", "TaskOutput"}, []string{"Bash", "Read", "TaskStop", "SendMessage", "TaskOutput"}},
		{[]string{"Bash", "Read"}, []string{"Bash", "Read"}},
		{nil, []string{}},
	}
	for _, tt := range tests {
		got := mainOnlyLast(mk(tt.in...)).Names()
		if !slices.Equal(got, tt.want) {
			t.Errorf("mainOnlyLast(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
