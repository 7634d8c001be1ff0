package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTeamEventsDecide: TeammateIdle, TaskCreated and TaskCompleted are
// events settings may name without a warning; their hooks get the
// teammate's and the task's fields on stdin, and exit 2 (or decision
// "block") is a block whose reason goes back — to keep the teammate
// working, to undo the create, to refuse the completion.
func TestTeamEventsDecide(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "in.log")
	refuse := script(t, dir, "refuse.sh", `cat >> `+log+`; echo >> `+log+`; echo "keep going: task 4 is open" >&2; exit 2`)
	blockJSON := script(t, dir, "block.sh", `cat >/dev/null; echo '{"decision":"block","reason":"tests fail"}'`)
	allow := script(t, dir, "allow.sh", `cat >/dev/null; exit 0`)
	for _, tc := range []struct {
		ev      Event
		cmd     string
		in      Input
		blocked bool
		reason  string
	}{
		{TeammateIdle, refuse, Input{TeammateName: "tester", TeamName: "crew"}, true, "keep going: task 4 is open"},
		{TeammateIdle, allow, Input{TeammateName: "tester"}, false, ""},
		{TaskCreated, blockJSON, Input{TaskID: "3", TaskSubject: "x"}, true, "tests fail"},
		{TaskCompleted, refuse, Input{TaskID: "3", TaskSubject: "Write tests", TeammateName: "tester"}, true, "keep going: task 4 is open"},
		{TaskCompleted, allow, Input{TaskID: "3", TaskSubject: "Write tests"}, false, ""},
	} {
		if !tc.ev.Valid() {
			t.Fatalf("%s is not a valid event", tc.ev)
		}
		c, diags, err := Parse([]byte(cmdHooks(tc.ev, "", tc.cmd)), "settings.json")
		if err != nil || len(diags) > 0 {
			t.Fatalf("%s: settings naming it: %v %v", tc.ev, err, diags)
		}
		d := New(c, Options{ProjectDir: dir})
		in := tc.in
		in.HookEventName, in.SessionID, in.Cwd = tc.ev, "s1", dir
		o := d.Fire(context.Background(), &in)
		if o.Blocked != tc.blocked || strings.Join(o.Feedback, "|") != tc.reason {
			t.Errorf("%s with %s: blocked %v feedback %q", tc.ev, filepath.Base(tc.cmd), o.Blocked, o.Feedback)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"hook_event_name":"TeammateIdle","teammate_name":"tester","team_name":"crew"`,
		`"hook_event_name":"TaskCompleted","task_id":"3","task_subject":"Write tests","teammate_name":"tester"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stdin log lacks %s:\n%s", want, got)
		}
	}
}
