package permission

import (
	"fmt"
	"strings"
)

// ModeManual is accepted as an alias of ModeDefault.
const ModeManual Mode = "manual"

// UserModes returns the modes a person may choose with --permission-mode
// or defaultMode (bubble is internal; auto is parsed, so that it gets its
// own clear refusal, but not offered: cadre has no classifier for it).
func UserModes() []Mode {
	return []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions}
}

// ParseMode parses a mode name; "" and "manual" mean default. The error
// names the bad value and the valid ones.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "", ModeManual:
		return ModeDefault, nil
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions, ModeAuto, ModeBubble:
		return m, nil
	}
	modes := UserModes()
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown permission mode %q (valid: %s)", s, strings.Join(names, ", "))
}

// Rank orders modes by permissiveness (S-10.1): plan < default = dontAsk =
// bubble < acceptEdits < auto < bypassPermissions. Unknown modes rank with
// plan.
func Rank(m Mode) int {
	switch m {
	case ModePlan:
		return 0
	case ModeDefault, ModeManual, ModeDontAsk, ModeBubble, "":
		return 1
	case ModeAcceptEdits:
		return 2
	case ModeAuto:
		return 3
	case ModeBypassPermissions:
		return 4
	}
	return 0
}

// strictness refines Rank for the ratchet: a mode that never prompts
// (dontAsk) denies what default would ask, so it sits below default.
func strictness(m Mode) int {
	switch m {
	case ModePlan:
		return 0
	case ModeDontAsk:
		return 1
	case ModeDefault, ModeManual, ModeBubble, "":
		return 2
	case ModeAcceptEdits:
		return 3
	case ModeAuto:
		return 4
	case ModeBypassPermissions:
		return 5
	}
	return 0
}
