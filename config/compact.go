package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre"
)

// minCompactWindow is the smallest context window a setting may name:
// below it no conversation fits a summary and its next step.
const minCompactWindow = 1000

// mergeCompaction takes the compaction keys of one settings file.
func (s *Settings) mergeCompaction(path string, fd *fileData) error {
	if v := fd.AutoCompactWindow; v != nil {
		if v.all != nil {
			if *v.all < minCompactWindow {
				return fmt.Errorf("%w: %s: autoCompactWindow must be %d tokens or more, not %d", ErrMalformed, path, minCompactWindow, *v.all)
			}
			s.AutoCompactWindow = IntValue{Value: *v.all, Source: path}
		}
		for _, model := range slices.Sorted(maps.Keys(v.perModel)) {
			n := v.perModel[model]
			if strings.TrimSpace(model) == "" {
				return fmt.Errorf("%w: %s: autoCompactWindow: an empty model name", ErrMalformed, path)
			}
			if n < minCompactWindow {
				return fmt.Errorf("%w: %s: autoCompactWindow[%q] must be %d tokens or more, not %d", ErrMalformed, path, model, minCompactWindow, n)
			}
			if model == "default" {
				s.AutoCompactWindow = IntValue{Value: n, Source: path}
				continue
			}
			if s.AutoCompactWindows == nil {
				s.AutoCompactWindows = map[string]IntValue{}
			}
			s.AutoCompactWindows[model] = IntValue{Value: n, Source: path}
		}
	}
	if fd.AutoCompactEnabled != nil {
		s.AutoCompactEnabled = BoolValue{Value: *fd.AutoCompactEnabled, Source: path}
	}
	return nil
}

// compaction resolves context compaction (S-1.5) from the settings and
// the environment: CADRE_AUTO_COMPACT_WINDOW over
// CLAUDE_CODE_AUTO_COMPACT_WINDOW over autoCompactWindow;
// CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; DISABLE_AUTO_COMPACT over
// autoCompactEnabled: false; DISABLE_COMPACT; CADRE_CLEAR_TOOL_RESULTS
// (clearing old tool results, off unless set).
func compaction(getenv func(string) string, s Settings) (cadre.Compaction, error) {
	c := cadre.Compaction{Window: int64(s.AutoCompactWindow.Value)}
	for model, v := range s.AutoCompactWindows {
		if c.Windows == nil {
			c.Windows = map[string]int64{}
		}
		c.Windows[model] = int64(v.Value)
	}
	for _, name := range []string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW", "CADRE_AUTO_COMPACT_WINDOW"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < minCompactWindow {
			return c, fmt.Errorf("%s=%q: want a context window in tokens, %d or more", name, v, minCompactWindow)
		}
		// The variable is one window for every model: the settings'
		// per-model windows give way to it.
		c.Window, c.Windows = n, nil
	}
	if v := getenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p <= 0 || p > 100 {
			return c, fmt.Errorf("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=%q: want a percentage above 0 and at most 100", v)
		}
		c.Percent = p
	}
	off := s.AutoCompactEnabled.Source != "" && !s.AutoCompactEnabled.Value
	var err error
	if c.DisableAuto, err = envBool(getenv, "DISABLE_AUTO_COMPACT", off); err != nil {
		return c, err
	}
	if c.Disable, err = envBool(getenv, "DISABLE_COMPACT", false); err != nil {
		return c, err
	}
	if c.ClearToolResults, err = envBool(getenv, "CADRE_CLEAR_TOOL_RESULTS", false); err != nil {
		return c, err
	}
	return c, nil
}

// compactWindow is autoCompactWindow as written: a number of tokens for
// every model (Claude Code's form), or an object of model ids (or id
// prefixes, the longest matching winning; "default" for the rest) to
// windows.
type compactWindow struct {
	all      *int
	perModel map[string]int
}

// UnmarshalJSON implements json.Unmarshaler.
func (w *compactWindow) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		w.all = &n
		return nil
	}
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("autoCompactWindow: want a number of tokens or an object of model names to numbers of tokens, not %s", b)
	}
	w.perModel = m
	return nil
}
