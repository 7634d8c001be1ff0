package compact

import "strings"

// DefaultWindow is the context window assumed for a model of no known
// family.
const DefaultWindow = 128_000

// families maps model id prefixes to context windows, longest prefix
// winning. The windows are the providers' standard ones; a settings file
// (autoCompactWindow) or the environment overrides them.
var families = []struct {
	prefix string
	window int64
}{
	{"claude-", 200_000},
	{"anthropic/claude-", 200_000},
	{"gpt-4o", 128_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4-turbo", 128_000},
	{"gpt-4", 8_192},
	{"gpt-5", 400_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"gemini-", 1_048_576},
	{"deepseek", 128_000},
	{"qwen", 128_000},
	{"llama", 128_000},
	{"mistral", 128_000},
}

// Window returns the context window of model: a "[1m]" suffix (Claude
// Code's long-context alias) means 1,000,000 tokens; else the table of
// model families; else DefaultWindow.
func Window(model string) int64 {
	m := strings.ToLower(strings.TrimSpace(model))
	if strings.HasSuffix(m, "[1m]") {
		return 1_000_000
	}
	best, window := 0, int64(DefaultWindow)
	for _, f := range families {
		if strings.HasPrefix(m, f.prefix) && len(f.prefix) > best {
			best, window = len(f.prefix), f.window
		}
	}
	return window
}

// Settings are the switches of one agent's compaction, as configuration
// resolved them (package config reads the settings files and the
// environment; the runtime reads no environment).
type Settings struct {
	// Window overrides the model's context window (autoCompactWindow,
	// CADRE_AUTO_COMPACT_WINDOW, CLAUDE_CODE_AUTO_COMPACT_WINDOW); 0 uses
	// the model family's. Windows, when set, overrides per model id.
	Window  int64
	Windows map[string]int64
	// Percent lowers the automatic threshold to this share of the
	// effective window (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE); 0 for none.
	Percent float64
	// DisableAuto turns automatic compaction off (DISABLE_AUTO_COMPACT,
	// autoCompactEnabled: false); a prompt-too-long answer then ends the
	// agent. Disable turns every compaction off, /compact included
	// (DISABLE_COMPACT).
	DisableAuto, Disable bool
	// ClearToolResults turns on clearing old, large tool results before
	// a full compaction is needed (clear.go).
	ClearToolResults bool
}

// WindowFor returns the window for model under s: a per-model override
// (its exact id, else the longest key that begins it), else s.Window,
// else the family's.
func (s Settings) WindowFor(model string) int64 {
	if w, ok := s.Windows[model]; ok && w > 0 {
		return w
	}
	best, window := 0, int64(0)
	for k, w := range s.Windows {
		if w > 0 && len(k) > best && strings.HasPrefix(model, k) {
			best, window = len(k), w
		}
	}
	if window > 0 {
		return window
	}
	if s.Window > 0 {
		return s.Window
	}
	return Window(model)
}

// Auto reports whether automatic compaction is on.
func (s Settings) Auto() bool { return !s.DisableAuto && !s.Disable }
