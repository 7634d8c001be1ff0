package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// mailPath is the session's mailbox journal.
func mailPath(rt *Runtime) string {
	return filepath.Join(filepath.Dir(rt.bg.journalPath()), "mailbox.jsonl")
}

// mailPending opens the session's mailbox journal as a new process would
// and returns what it holds undelivered.
func mailPending(t *testing.T, rt *Runtime) []task.Message {
	t.Helper()
	s, rep, err := task.OpenMailboxes(mailPath(rt))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return rep.Pending
}

// countIn counts sub in the text blocks of every message of req.
func countIn(req *llmtest.Request, sub string) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockText {
				n += strings.Count(b.Text, sub)
			}
		}
	}
	return n
}

func sendCall(to, msg string) llmtest.Call {
	return llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": to, "message": msg, "summary": "more"}}
}

// TestMessageToARunningChildOnce: a message to a running background child
// (by its id, or by its name when it has one) is journaled, reaches it
// with its next tool round's results, once (its later requests hold it
// once, in history), and is journaled delivered.
func TestMessageToARunningChildOnce(t *testing.T) {
	t.Parallel()
	for _, byName := range []bool{false, true} {
		t.Run(fmt.Sprintf("by name %v", byName), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var rt *Runtime
			arrived, release := make(chan struct{}), make(chan struct{})
			var id string
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					return llmtest.ToolUse("Agent", bgCall("RUNS: work"))
				case 3:
					id = taskByDescription(t, rt, "bg RUNS")
					<-arrived
					to := id
					if byName {
						// The address book: an agent with a name is reached by
						// it (teammates will have names).
						if err := rt.bg.mailboxes().Open(id, "worker"); err != nil {
							t.Error(err)
						}
						to = "worker"
					}
					return llmtest.ToolUse("SendMessage", sendCall(to, "EXTRA-INPUT").Input)
				case 5:
					close(release)
				}
				return llmtest.Text("noted")
			})
			h.srv.ScriptFunc("RUNS", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					close(arrived)
					<-release
					return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"})
				case 3:
					return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.other"})
				}
				return llmtest.Text("runs done")
			})
			cfg := h.config()
			cfg.Background = BackgroundDefault
			rt = newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
				t.Fatal(err)
			}
			drainNotifications(t, rt)
			contains(t, h.srv.RequestsFor("MAIN")[2].LastToolResults()[0].ResultText(), "Message queued for "+id)
			runs := h.srv.RequestsFor("RUNS")
			if len(runs) != 3 {
				t.Fatalf("%d RUNS requests", len(runs))
			}
			contains(t, runs[1].LastUserText(), "EXTRA-INPUT")
			for i, r := range runs {
				if want := min(i, 1); countIn(r, "EXTRA-INPUT") != want {
					t.Errorf("request %d of the child holds the message %d times, want %d", i, countIn(r, "EXTRA-INPUT"), want)
				}
			}
			if p := mailPending(t, rt); len(p) != 0 {
				t.Errorf("the journal holds delivered messages as pending: %+v", p)
			}

		})
	}
}

// TestMessageToAFinishedChild: a message to a finished child continues
// it (the message its first new turn, delivered once); where it cannot be
// continued, the sender is told why and the message is not kept.
func TestMessageToAFinishedChild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		noTranscript bool
		want         string
	}{
		{name: "continued", want: "continued in the background"},
		{name: "no transcripts", noTranscript: true, want: "this session keeps no transcripts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var rt *Runtime
			var id string
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					return llmtest.ToolUse("Agent", bgCall("DONE: job"))
				case 3:
					id = taskByDescription(t, rt, "bg DONE")
					waitTask(rt, id)
					return llmtest.ToolUse("SendMessage", sendCall(id, "FOLLOW-UP").Input)
				}
				return llmtest.Text("noted")
			})
			h.srv.ScriptFunc("DONE", func(r *llmtest.Request) llmtest.Turn {
				return llmtest.Text("answer " + string(rune('0'+len(r.Messages))))
			})
			cfg := h.config()
			cfg.Background = BackgroundDefault
			cfg.NoTranscript = tc.noTranscript
			rt = newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
				t.Fatal(err)
			}
			drainNotifications(t, rt)
			res := h.srv.RequestsFor("MAIN")[2].LastToolResults()[0]
			contains(t, res.ResultText(), tc.want)
			if res.IsError != tc.noTranscript {
				t.Fatalf("is_error %v: %s", res.IsError, res.ResultText())
			}
			if rt.bg.mailboxes().Pending(id) || rt.bg.mailboxes().Take(id) != nil {
				t.Error("the mailbox still holds the message")
			}
			dones := h.srv.RequestsFor("DONE")
			if tc.noTranscript {
				if len(dones) != 1 {
					t.Fatalf("%d DONE requests: continued without a transcript", len(dones))
				}
				return
			}
			if len(dones) != 2 || countIn(dones[1], "FOLLOW-UP") != 1 {
				t.Fatalf("%d DONE requests; the continuation holds the message %d times", len(dones), countIn(dones[len(dones)-1], "FOLLOW-UP"))
			}
			if p := mailPending(t, rt); len(p) != 0 {
				t.Errorf("the journal holds the delivered message as pending: %+v", p)
			}
		})
	}
}

// TestMessagesAcrossACrash: a process dies (its runtime is dropped, not
// closed) with a message to a child that never took it, after a message
// another child received — with its acknowledgement journaled, or lost
// to the crash while the child's transcript holds the message; the
// session reopened from its state dir gives the first to the main agent
// at its first turn, once, and never the second; a third process has
// nothing to deliver.
func TestMessagesAcrossACrash(t *testing.T) {
	t.Parallel()
	for _, lostAck := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost ack %v", lostAck), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			sleepArrived, sleepRelease := make(chan struct{}), make(chan struct{})
			takeArrived, takeRelease := make(chan struct{}), make(chan struct{})
			t.Cleanup(func() { close(sleepRelease) }) // before the server closes
			var rt *Runtime
			var take, sleep string
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: bgCall("TAKE: job")}, llmtest.Call{Name: "Agent", Input: bgCall("SLEEP: job")})
				case 3:
					take, sleep = taskByDescription(t, rt, "bg TAKE"), taskByDescription(t, rt, "bg SLEE")
					<-takeArrived
					<-sleepArrived
					return llmtest.ToolUses(sendCall(take, "FOR-TAKER"), sendCall(sleep, "FOR-SLEEPER"))
				}
				return llmtest.Text("main " + string(rune('0'+len(r.Messages)%10)))
			})
			h.srv.ScriptFunc("TAKE", func(r *llmtest.Request) llmtest.Turn {
				if len(r.Messages) == 1 {
					close(takeArrived)
					<-takeRelease
					return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"})
				}
				return llmtest.Text("taker done")
			})
			h.srv.ScriptFunc("SLEEP", func(r *llmtest.Request) llmtest.Turn {
				close(sleepArrived)
				<-sleepRelease // until the test ends: the process dies under it
				return llmtest.Text("too late")
			})
			cfg := h.config()
			cfg.Background = BackgroundDefault
			rt = newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
				t.Fatal(err)
			}
			close(takeRelease)
			waitTask(rt, take)
			takes := h.srv.RequestsFor("TAKE")
			if countIn(takes[len(takes)-1], "FOR-TAKER") != 1 {
				t.Fatal("the taker did not get its message")
			}
			// "kill -9": rt is left as it is (its cleanup closes it after the
			// test); a new process opens the session.
			if lostAck {
				// The taker's request was answered and recorded, but the
				// process died before the mailbox journal said so.
				if err := rt.bg.handle(take).child.run.journal.Sync(); err != nil {
					t.Fatal(err)
				}
				dropAcks(t, mailPath(rt))
			}
			entries, err := transcript.ReadFile(rt.TranscriptPath())
			if err != nil {
				t.Fatal(err)
			}
			cfg2 := cfg
			cfg2.SessionID, cfg2.History = rt.SessionID(), transcript.Messages(entries)
			rt2 := newRuntime(t, cfg2)
			before := len(h.srv.RequestsFor("MAIN"))
			if _, _, err := runAll(t, context.Background(), rt2, "MAIN again"); err != nil {
				t.Fatal(err)
			}
			first := h.srv.RequestsFor("MAIN")[before]
			last := first.Messages[len(first.Messages)-1]
			var got strings.Builder
			for _, b := range last.Content {
				got.WriteString(b.Text)
			}
			if n := strings.Count(got.String(), "FOR-SLEEPER"); n != 1 {
				t.Fatalf("the undelivered message reached main %d times in %q", n, got.String())
			}
			if strings.Contains(got.String(), "FOR-TAKER") {
				t.Fatal("a delivered message was delivered again")
			}
			contains(t, got.String(), "<task-id>"+sleep+"</task-id>") // interrupted
			// A second turn and a third process deliver nothing again.
			before = len(h.srv.RequestsFor("MAIN"))
			if _, _, err := runAll(t, context.Background(), rt2, "MAIN third"); err != nil {
				t.Fatal(err)
			}
			second := h.srv.RequestsFor("MAIN")[before]
			if n := countIn(second, "FOR-SLEEPER"); n != 1 {
				t.Fatalf("the message is %d times in the next turn's request, want once (in history)", n)
			}
			if p := mailPending(t, rt2); len(p) != 0 {
				t.Errorf("pending for a third process: %+v", p)
			}

		})
	}
}

// dropAcks removes the acknowledgements from the mailbox journal at path.
func dropAcks(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(l, `"op":"ack"`) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(strings.SplitAfter(string(b), "\n")) {
		t.Fatal("no acknowledgement in the journal")
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMessageToAStoppedChildIsNotLost: a message a child never read
// before it was stopped is not dropped with it: it goes up to the main
// agent, once, with the child's end.
func TestMessageToAStoppedChildIsNotLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the server closes
	var rt *Runtime
	var id string
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("Agent", bgCall("HANG: work"))
		case 3:
			id = taskByDescription(t, rt, "bg HANG")
			<-arrived
			return llmtest.ToolUses(sendCall(id, "FOR-HUNG"), llmtest.Call{Name: "TaskStop", Input: map[string]any{"task_id": id}})
		}
		return llmtest.Text("noted")
	})
	h.srv.ScriptFunc("HANG", func(*llmtest.Request) llmtest.Turn {
		close(arrived)
		<-release
		return llmtest.Text("too late")
	})
	cfg := h.config()
	cfg.Background = BackgroundDefault
	rt = newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	mains := h.srv.RequestsFor("MAIN")
	contains(t, mains[2].LastToolResults()[0].ResultText(), "Message queued for "+id)
	last := mains[len(mains)-1]
	if n := countIn(last, "FOR-HUNG"); n != 1 {
		t.Fatalf("the unread message reached main %d times", n)
	}
	if n := notesIn(last, id); n != 1 {
		t.Fatalf("the stopped child notified %d times", n)
	}
	if p := mailPending(t, rt); len(p) != 0 {
		t.Errorf("pending after delivery: %+v", p)
	}
}
