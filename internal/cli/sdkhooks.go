package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/sdkproto"
)

// sdkHooks turns the hook callbacks a program registered in initialize
// into callback hooks of the session: each call goes back to the program
// as a hook_callback control request, and its answer is read as a command
// hook's JSON output. skipped names the events cadre has no hook point
// for (their callbacks are never called).
func sdkHooks(conn *sdkproto.Conn, in *sdkproto.Initialize) (cfg *hooks.Config, skipped []string, err error) {
	var groups []hooks.Group
	for _, reg := range in.HookRegistrations() {
		ev := hooks.Event(reg.Event)
		if !ev.Valid() {
			skipped = append(skipped, reg.Event)
			continue
		}
		id := reg.CallbackID
		groups = append(groups, hooks.Group{Event: ev, Matcher: reg.Matcher, Source: "sdk", Handlers: []hooks.Handler{{
			Name: id, Timeout: reg.Timeout,
			Callback: func(ctx context.Context, input *hooks.Input) (json.RawMessage, error) {
				b, err := json.Marshal(input)
				if err != nil {
					return nil, fmt.Errorf("hook input: %w", err)
				}
				return conn.CallHook(ctx, id, b, input.ToolUseID)
			},
		}}})
	}
	if len(groups) == 0 {
		return nil, skipped, nil
	}
	cfg, err = hooks.NewConfig(groups...)
	if err != nil {
		return nil, skipped, fmt.Errorf("the program's hooks: %w", err)
	}
	return cfg, skipped, nil
}
