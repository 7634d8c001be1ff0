package llm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestFallbackModelWhenOverloaded(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	s.Script("", llmtest.Overloaded(), llmtest.Overloaded(), llmtest.Text("from the fallback"))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	m, err := anthropic.New(anthropic.Config{BaseURL: s.URL(), APIKey: "k", HTTPClient: &http.Client{Transport: tr}, MaxRetries: 1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	fm := llm.WithFallback(m, "claude-opus-4-1", "claude-sonnet-4-5")
	var causes []string
	var text string
	for ev, err := range fm.Stream(context.Background(), &llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{llm.UserText("hi")}}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case llm.EventRetry:
			causes = append(causes, string(ev.Retry.Cause))
		case llm.EventDone:
			text = ev.Response.Message.Text()
		}
	}
	if text != "from the fallback" || strings.Join(causes, ",") != "status,fallback" {
		t.Fatalf("text %q causes %v", text, causes)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[1].Model != "claude-opus-4-1" || reqs[2].Model != "claude-sonnet-4-5" {
		t.Fatalf("requests %d", len(reqs))
	}

	// Other ids and other errors pass through.
	s.Script("other", llmtest.HTTPError(400, "bad"))
	for _, err := range fm.Stream(context.Background(), &llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{llm.UserText("other")}}) {
		if err == nil || !strings.Contains(err.Error(), "400") {
			t.Fatalf("400 not passed through: %v", err)
		}
	}
	s.Check(t)
}

// The fallback's retries count against the budget the primary's spent: a
// call whose models are both overloaded waits no longer, in all, than one
// retry budget.
func TestFallbackStaysWithinTheRetryBudget(t *testing.T) {
	s := llmtest.NewServer()
	defer s.Close()
	turns := make([]llmtest.Turn, 40)
	for i := range turns {
		turns[i] = llmtest.Overloaded()
	}
	s.Script("", turns...)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var waited time.Duration
	const budget = 10 * time.Second
	m, err := anthropic.New(anthropic.Config{BaseURL: s.URL(), APIKey: "k", HTTPClient: &http.Client{Transport: tr}, RetryBudget: budget,
		Sleep: func(_ context.Context, d time.Duration) error { waited += d; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	fm := llm.WithFallback(m, "claude-opus-4-1", "claude-sonnet-4-5")
	var last error
	for _, err := range fm.Stream(context.Background(), &llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{llm.UserText("hi")}}) {
		if err != nil {
			last = err
		}
	}
	if last == nil || !strings.Contains(last.Error(), "budget") {
		t.Fatalf("error %v", last)
	}
	var fallback int
	for _, r := range s.Requests() {
		if r.Model == "claude-sonnet-4-5" {
			fallback++
		}
	}
	if waited > budget || fallback == 0 {
		t.Fatalf("waited %v in all (budget %v), %d fallback requests", waited, budget, fallback)
	}
	s.Check(t)
}
