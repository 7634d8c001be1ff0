package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

var stressMsgRe = regexp.MustCompile(`STRESS\|(t\d+)\|(\d+)\|`)

// TestTeamStressMessages: 10 teammates send 1,000 messages among
// themselves in batches, with random model delays, while two teammates
// are stopped at random moments. Asserted from the captured requests:
// every message SendMessage said was sent reaches a conversation (its
// receiver's, or the lead's when the receiver was stopped before it read
// it): 0 lost; none twice in one conversation, and none in two unless its
// receiver was stopped with it in an unanswered request: 0 duplicated;
// each receiver reads each sender's messages in the order they were sent.
func TestTeamStressMessages(t *testing.T) {
	t.Parallel()
	const mates, rounds, perRound = 10, 10, 10 // 1,000 messages
	h := newHarness(t)
	names := make([]string, mates)
	for i := range names {
		names[i] = fmt.Sprintf("t%d", i)
	}
	var calls []llmtest.Call
	for _, n := range names {
		calls = append(calls, teamCall(n, "STRESSMATE-"+n+"- go"))
	}
	h.srv.ScriptFunc("STRESSLEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(calls...)
		}
		return llmtest.Text("lead ok")
	})
	type sent struct {
		to string
		k  int
	}
	var mu sync.Mutex
	batches := map[string][][]sent{} // sender → its batches in order
	results := map[string][][]string{}
	var rt *Runtime
	stopAt := map[string]int{"t3": 4, "t8": 7} // stop teammate when t0 reaches this round
	stopped := map[string]bool{}
	for i, name := range names {
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		delay := rand.New(rand.NewPCG(uint64(i), 7))
		round := 0
		h.srv.ScriptFunc("STRESSMATE-"+name+"-", func(r *llmtest.Request) llmtest.Turn {
			mu.Lock()
			defer mu.Unlock()
			if res := r.LastToolResults(); len(res) > 0 && round > 0 && len(results[name]) < len(batches[name]) {
				var texts []string
				for _, b := range res {
					texts = append(texts, b.ResultText())
				}
				results[name] = append(results[name], texts)
			}
			if name == "t0" {
				for victim, at := range stopAt {
					if round == at && !stopped[victim] {
						stopped[victim] = true
						go func() {
							// Stopped at a random moment of its work.
							if id := memberID(rt, victim); id != "" {
								_ = rt.Stop(context.Background(), id)
							}
						}()
					}
				}
			}
			d := time.Duration(delay.IntN(3)) * time.Millisecond
			if round >= rounds {
				return llmtest.Text(name + " resting").WithDelay(d)
			}
			round++
			var batch []sent
			var cs []llmtest.Call
			for range perRound {
				to := names[rng.IntN(mates)]
				for to == name {
					to = names[rng.IntN(mates)]
				}
				k := 0
				for _, b := range batches[name] {
					k += len(b)
				}
				k += len(batch)
				batch = append(batch, sent{to, k})
				cs = append(cs, teamSend(to, fmt.Sprintf("STRESS|%s|%d|", name, k)))
			}
			batches[name] = append(batches[name], batch)
			return llmtest.ToolUses(cs...).WithDelay(d)
		})
	}
	rt = newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "STRESSLEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)

	// What each conversation holds: its last request's history.
	held := func(key string) []string {
		reqs := h.srv.RequestsFor(key)
		if len(reqs) == 0 {
			return nil
		}
		var out []string
		for _, m := range reqs[len(reqs)-1].Messages {
			if m.Role != llm.RoleUser {
				continue
			}
			for _, b := range m.Content {
				if b.Type == llm.BlockText {
					out = append(out, stressMsgRe.FindAllString(b.Text, -1)...)
				}
			}
		}
		return out
	}
	count := map[string]map[string]int{} // message → conversation → times
	for _, n := range append([]string{"STRESSLEAD"}, names...) {
		key := n
		if n != "STRESSLEAD" {
			key = "STRESSMATE-" + n + "-"
		}
		last := map[string]int{}
		for _, msg := range held(key) {
			if count[msg] == nil {
				count[msg] = map[string]int{}
			}
			count[msg][n]++
			if n == "STRESSLEAD" {
				continue
			}
			sm := stressMsgRe.FindStringSubmatch(msg)
			k, _ := strconv.Atoi(sm[2])
			if prev, ok := last[sm[1]]; ok && k <= prev {
				t.Errorf("%s read %s's message %d after %d", n, sm[1], k, prev)
			}
			last[sm[1]] = k
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var ok, refused, unknown int
	for _, name := range names {
		for bi, batch := range batches[name] {
			for ci, s := range batch {
				msg := fmt.Sprintf("STRESS|%s|%d|", name, s.k)
				state := "unknown" // the sender was stopped before it read the result
				if bi < len(results[name]) && ci < len(results[name][bi]) {
					state = "refused"
					if strings.Contains(results[name][bi][ci], `"success":true`) {
						state = "ok"
					}
				}
				c := count[msg]
				total := c[s.to] + c["STRESSLEAD"]
				switch {
				case state == "ok" && total == 0:
					t.Errorf("lost: %s to %s", msg, s.to)
				case state == "refused" && total != 0:
					t.Errorf("refused but delivered: %s to %s (%v)", msg, s.to, c)
				case c[s.to] > 1 || c["STRESSLEAD"] > 1:
					t.Errorf("duplicated: %s to %s (%v)", msg, s.to, c)
				case total > 1 && !stopped[s.to]:
					t.Errorf("delivered twice to a teammate never stopped: %s to %s (%v)", msg, s.to, c)
				}
				for who := range c {
					if who != s.to && who != "STRESSLEAD" {
						t.Errorf("%s reached %s", msg, who)
					}
				}
				switch state {
				case "ok":
					ok++
				case "refused":
					refused++
				default:
					unknown++
				}
			}
		}
	}
	if ok < 500 {
		t.Errorf("only %d messages sent (%d refused, %d unknown)", ok, refused, unknown)
	}
	t.Logf("sent %d, refused %d (receiver stopped), unknown %d (sender stopped)", ok, refused, unknown)
	if p := mailPending(t, rt); len(p) != 0 {
		t.Errorf("%d messages left undelivered in the journal", len(p))
	}
}

// memberID is the agent id of live teammate name ("" if none).
func memberID(rt *Runtime, name string) string {
	t := rt.bg.team
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.members[name]; m != nil && m.a != nil {
		return m.a.id
	}
	return ""
}
