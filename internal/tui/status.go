package tui

import (
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/permission"
)

// statusBar is the footer: the permission mode (Shift+Tab cycles it), a
// hint for where the keyboard is, the model and the session's tokens;
// above it for a few seconds the last status message; and the window in
// which a second Ctrl+C quits.
type statusBar struct {
	st   *styles
	cfg  *config
	mode permission.Mode
	// now is the UI's clock as advance last moved it.
	now time.Time
	// text is the transient status, set at at.
	text string
	at   time.Time
	// quitAt is when the first Ctrl+C was pressed (zero: none pending).
	quitAt time.Time
}

// set shows a transient message in the status line.
func (b *statusBar) set(format string, args ...any) {
	b.text = fmt.Sprintf(format, args...)
	b.at = b.now
}

// advance moves the bar's clock: the Ctrl+C window and the status expire.
func (b *statusBar) advance(now time.Time) {
	b.now = now
	if !b.quitAt.IsZero() && b.now.Sub(b.quitAt) > quitWindow {
		b.quitAt = time.Time{}
	}
	if b.text != "" && b.now.Sub(b.at) > statusTTL {
		b.text = ""
	}
}

// moving reports whether the bar changes with time (what it shows
// expires).
func (b *statusBar) moving() bool { return !b.quitAt.IsZero() || b.text != "" }

// secondCtrlC reports whether a Ctrl+C now is the second within the
// window; a first one opens the window.
func (b *statusBar) secondCtrlC() bool {
	if !b.quitAt.IsZero() && b.now.Sub(b.quitAt) <= quitWindow {
		return true
	}
	b.quitAt = b.now
	return false
}

// modeChanged shows the outcome of a change of the permission mode;
// running says a turn runs (it keeps the mode it started with).
func (b *statusBar) modeChanged(msg modeMsg, running bool) {
	if msg.err != nil {
		b.set("Cannot switch to %s: %v", msg.mode, msg.err)
		return
	}
	b.mode = msg.mode
	if running {
		b.set("Permission mode %s from the next turn.", msg.mode)
	}
}
