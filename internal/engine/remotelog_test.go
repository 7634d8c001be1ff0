package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/transcript"
)

// A launcher that re-attaches to a remote agent's run skips the messages
// of that run an earlier launcher wrote (the executor's events start from
// the run's first), and only those: earlier runs, closed by a run_end
// entry, and the run's first turn are not events.
func TestWrittenOfRunCountsTheLastRunsEventMessages(t *testing.T) {
	u, a := transcript.Entry{Type: string(llm.RoleUser)}, transcript.Entry{Type: string(llm.RoleAssistant)}
	end := transcript.Entry{Type: transcript.EntryRunEnd}
	for _, c := range []struct {
		name    string
		entries []transcript.Entry
		want    int
	}{
		{"first turn only", []transcript.Entry{u}, 0},
		{"a tool round", []transcript.Entry{u, a, u, a}, 3},
		{"after an ended run", []transcript.Entry{u, a, u, a, end, u, a}, 1},
		{"an ended run only", []transcript.Entry{u, a, end}, 0},
		{"other entries", []transcript.Entry{u, {Type: transcript.EntryCompactBoundary}, a}, 1},
	} {
		if got := writtenOfRun(c.entries); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// A remote agent that finished in an earlier process of the session is
// continued remotely too, from the transcript that process wrote: its
// .meta.json says where it ran.
func TestRemoteAgentOfAnEarlierProcessIsContinuedRemotely(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	x.w.Model.Script("FAR-E", llmtest.Text("EARLIER-DONE"))
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-E look", "subagent_type": "far"}),
		llmtest.Text("launched"), llmtest.Text("heard"))
	cfg := h.config()
	cfg.SessionID = "5d0c1b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	cfg.Agents = []*agentdef.Definition{remoteAgentDef()}
	cfg.Remote = Remote{Executor: x}
	first, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runAll(t, context.Background(), first, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, first)
	id := x.requests()[0].AgentID
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	x.w.Model.Script("FAR-AGAIN", llmtest.Text("AGAIN"))
	h.srv.Script("MAIN", llmtest.ToolUse("SendMessage", map[string]any{"to": id, "message": "FAR-AGAIN and more"}), llmtest.Text("sent"), llmtest.Text("heard again"))
	second := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), second, "MAIN again"); err != nil {
		t.Fatal(err)
	}
	if out := h.toolResults("MAIN"); len(out) != 1 || !strings.Contains(out[0], "was continued") {
		t.Fatalf("SendMessage in the resumed session: %q", out)
	}
	drainNotifications(t, second)
	reqs := x.requests()
	if len(reqs) != 2 || reqs[1].AgentID != id || reqs[1].Isolation.Kind != agentdef.IsolationRemote {
		t.Fatalf("requests %d; the second %+v", len(reqs), reqs[len(reqs)-1].Isolation)
	}
	var texts []string
	for _, m := range reqs[1].Messages {
		texts = append(texts, m.Text())
	}
	if len(texts) != 3 || !strings.HasPrefix(texts[0], "FAR-E look") || texts[1] != "EARLIER-DONE" || !strings.Contains(texts[2], "FAR-AGAIN and more") {
		t.Fatalf("the continued run starts from %q", texts)
	}
}
