package tui

import (
	"testing"
	"time"
)

// The components on their own, without a Model around them.

func TestStatusBarQuitWindowAndStatusExpire(t *testing.T) {
	st := newStyles(true)
	b := &statusBar{st: &st, cfg: &config{}}
	b.advance(t0)
	if b.secondCtrlC() {
		t.Fatal("a first Ctrl+C quits")
	}
	b.advance(t0.Add(quitWindow))
	if !b.secondCtrlC() {
		t.Fatal("a second Ctrl+C at the window's end does not quit")
	}
	b.advance(t0.Add(2*quitWindow + time.Millisecond))
	if !b.quitAt.IsZero() || b.secondCtrlC() {
		t.Fatal("the window did not close after quitWindow")
	}
	b.set("Cleared %d finished agents.", 3)
	if b.text != "Cleared 3 finished agents." || !b.moving() {
		t.Fatalf("status %q, moving %v", b.text, b.moving())
	}
	b.quitAt = time.Time{}
	b.advance(b.at.Add(statusTTL))
	if b.text == "" {
		t.Fatal("the status left before statusTTL")
	}
	b.advance(b.at.Add(statusTTL + time.Millisecond))
	if b.text != "" || b.moving() {
		t.Fatalf("the status stayed after statusTTL: %q", b.text)
	}
}

func TestSessionPickerChoosesAnotherSession(t *testing.T) {
	list := []sessionInfo{{ID: "s-new"}, {ID: "s-old"}, {ID: "s-older"}}
	if p := newSessionPicker(list[:1], "s-new"); p != nil {
		t.Fatalf("only the current session: picker %+v", p)
	}
	p := newSessionPicker(list, "s-new")
	if p == nil || len(p.list) != 2 || p.list[0].ID != "s-old" {
		t.Fatalf("picker %+v", p)
	}
	for _, k := range []string{"up", "down", "down", "down"} {
		if c, done := p.key(k); c != nil || done {
			t.Fatalf("%s chose %v, done %v", k, c, done)
		}
	}
	c, done := p.key("enter")
	if !done || c == nil || c.ID != "s-older" {
		t.Fatalf("enter chose %+v, done %v", c, done)
	}
	if c, done := p.key("esc"); c != nil || !done {
		t.Fatalf("esc chose %+v, done %v", c, done)
	}
}
