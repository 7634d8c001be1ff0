package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/sdkproto"
)

// sdkHooks registers the hook callbacks the program named in initialize
// with the session's dispatcher: each runs, when its event fires and its
// matcher matches, as a hook_callback request to the program, whose
// answer is read as a command hook's JSON output. Events cadre does not
// fire are reported on stderr and skipped; it returns whether any hook
// was registered.
func (s *sdkSession) sdkHooks(rt *cadre.Runtime, in *sdkproto.Initialize) (bool, error) {
	var groups []hooks.Group
	for _, reg := range in.HookRegistrations() {
		ev := hooks.Event(reg.Event)
		if !ev.Valid() {
			fmt.Fprintf(s.p.stderr, "cadre: initialize: hook event %q is not one cadre fires; its callback %s is not registered\n", reg.Event, reg.CallbackID)
			continue
		}
		id := reg.CallbackID
		conn := s.conn
		groups = append(groups, hooks.Group{Event: ev, Matcher: reg.Matcher, Source: "sdk", Handlers: []hooks.Handler{{
			Name: id, Timeout: reg.Timeout,
			Callback: func(ctx context.Context, in *hooks.Input) (json.RawMessage, error) {
				payload, err := in.MarshalJSON()
				if err != nil {
					return nil, err
				}
				return conn.CallHook(ctx, id, payload, in.ToolUseID)
			},
		}}})
	}
	if len(groups) == 0 {
		return false, nil
	}
	cfg, err := hooks.NewConfig(groups...)
	if err != nil {
		return false, fmt.Errorf("initialize: hooks: %w", err)
	}
	// The program's hooks live as long as the session.
	rt.Hooks().Add(cfg)
	return true, nil
}
