package anthropic

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestDefaultClientReusesConnectionsAtFanOut runs two rounds of 16
// streams at once through the client an adapter uses when none is given
// (16 sub-agents asking the model together, then asking again): the
// server holds every request until all 16 of its round have arrived, so
// each round really needs 16 connections at once. The second round must
// come over the connections the first one opened: a client that keeps only
// a couple of idle connections per host (net/http's default is 2) opens
// ~14 new ones per round, which the server sees as new client addresses.
func TestDefaultClientReusesConnectionsAtFanOut(t *testing.T) {
	const n, rounds = 16, 2
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	var mu sync.Mutex
	arrived := map[int]int{}
	gates := map[int]chan struct{}{}
	gate := func(round int) chan struct{} {
		if gates[round] == nil {
			gates[round] = make(chan struct{})
		}
		return gates[round]
	}
	s.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn {
		var round int
		if _, err := fmt.Sscanf(r.FirstUserText(), "round %d", &round); err != nil {
			t.Errorf("request %d: first user text %q", r.Seq, r.FirstUserText())
		}
		mu.Lock()
		arrived[round]++
		g := gate(round)
		if arrived[round] == n {
			close(g)
		}
		mu.Unlock()
		<-g
		return llmtest.Text("ok")
	})
	client := retry.HTTPClient()
	t.Cleanup(client.CloseIdleConnections)
	m, err := New(Config{APIKey: "test", BaseURL: s.URL(), HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				req := &llm.Request{Model: "claude-test", System: "You are a test agent.", Tools: testTools,
					Messages: []llm.Message{llm.UserText(fmt.Sprintf("round %d, stream %d", round, i))}}
				evs, err := collect(t, m, req)
				if err != nil {
					t.Errorf("round %d stream %d: %v", round, i, err)
					return
				}
				if len(evs) == 0 || evs[len(evs)-1].Kind != llm.EventDone {
					t.Errorf("round %d stream %d: no EventDone", round, i)
				}
			})
		}
		wg.Wait()
	}
	reqs := s.Requests()
	if len(reqs) != n*rounds {
		t.Fatalf("%d requests, want %d", len(reqs), n*rounds)
	}
	conns := map[string]bool{}
	for _, r := range reqs {
		if r.RemoteAddr == "" {
			t.Fatalf("request %d: no client address captured", r.Seq)
		}
		conns[r.RemoteAddr] = true
	}
	if len(conns) > n {
		t.Errorf("%d requests in %d rounds of %d at once came over %d connections, want at most %d (idle connections dropped between rounds)",
			len(reqs), rounds, n, len(conns), n)
	}
}

// TestAnswerCompleteWhenBodyStaysOpen: a server that keeps the stream open
// after message_stop (it should end the body there) still gives a complete
// answer once; the adapter stops waiting for the end of the body and cuts
// the connection (the server sees its request cancelled) instead of
// hanging or retrying.
func TestAnswerCompleteWhenBodyStaysOpen(t *testing.T) {
	gone := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(new(sseBuilder).start(1, 0, 0).text(0, "all", " here").end("end_turn", 2).b.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hold the body open until the client leaves
		close(gone)
	})
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	resp := done(t, evs)
	if got := resp.Message.Text(); got != "all here" || resp.StopReason != llm.StopEndTurn {
		t.Errorf("answer %q, stop %q", got, resp.StopReason)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry)", n)
	}
	<-gone
}
