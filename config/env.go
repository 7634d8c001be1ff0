package config

import (
	"cmp"
	"fmt"
)

// Env returns the variables the settings files' env blocks set (higher
// files over lower), as Load applies them to the run, for what must read
// them before the session is configured: OpenTelemetry's OTEL_* and
// CLAUDE_CODE_ENABLE_TELEMETRY set in a settings file switch telemetry on,
// as in Claude Code. Nil when the files set none.
func Env(cwd string, opts Options) (map[string]string, error) {
	cwd, err := absDir(cwd)
	if err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s, _, err := LoadSettings(opts.settingsOptions(cwd, cmp.Or(opts.Home, getenv("HOME")), getenv))
	if err != nil {
		return nil, fmt.Errorf("settings env: %w", err)
	}
	return s.Env, nil
}

// Overlay is getenv with env's values over its own.
func Overlay(getenv func(string) string, env map[string]string) func(string) string {
	if len(env) == 0 {
		return getenv
	}
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return getenv(k)
	}
}
