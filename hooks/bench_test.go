package hooks

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/permission"
)

// BenchmarkFire measures one PreToolUse event: with no hooks, with one
// callback hook, and with one no-op command hook (a /bin/sh process).
func BenchmarkFire(b *testing.B) {
	in := func() *Input {
		return &Input{HookEventName: PreToolUse, ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"/p/bench-input.txt"}`), ToolUseID: "toolu_1"}
	}
	scope := Scope{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: b.TempDir(), PermissionMode: func() permission.Mode { return permission.ModeDefault }}
	ctx := context.Background()
	b.Run("none", func(b *testing.B) {
		a := New(nil, Options{}).ForAgent(scope)
		b.ReportAllocs()
		for b.Loop() {
			a.Fire(ctx, in())
		}
	})
	b.Run("callback", func(b *testing.B) {
		cfg, err := NewConfig(Group{Event: PreToolUse, Handlers: []Handler{{Callback: func(context.Context, *Input) (json.RawMessage, error) { return nil, nil }}}})
		if err != nil {
			b.Fatal(err)
		}
		a := New(cfg, Options{}).ForAgent(scope)
		b.ReportAllocs()
		for b.Loop() {
			a.Fire(ctx, in())
		}
	})
	b.Run("command", func(b *testing.B) {
		cfg, _, err := Parse(json.RawMessage(`{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"cat >/dev/null"}]}]}`), "bench.json")
		if err != nil {
			b.Fatal(err)
		}
		a := New(cfg, Options{}).ForAgent(scope)
		b.ReportAllocs()
		for b.Loop() {
			if o := a.Fire(ctx, in()); o.Runs[0].ExitCode != 0 {
				b.Fatalf("%+v", o.Runs[0])
			}
		}
	})
}
