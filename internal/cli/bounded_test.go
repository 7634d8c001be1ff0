package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// A tool call whose streamed input passes the limit is dropped as it
// arrives: the call does not run (the file is not written), the model is
// told why, and the conversation sent back holds no copy of the input.
func TestOversizedToolInputIsRefused(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	huge := strings.Repeat("y", llm.MaxToolInputBytes+1)
	s.Script("write", llmtest.ToolUse("Write", map[string]any{"file_path": "big.txt", "content": huge}), llmtest.Text("understood"))
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "write a big file", "--permission-mode", "acceptEdits", "--output-format", "json")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	if jsonField(t, out.String(), "result") != "understood" {
		t.Fatalf("result %s", out)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "big.txt")); !os.IsNotExist(err) {
		t.Fatalf("the oversized call ran: %v", err)
	}
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	res := last.LastToolResults()
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].ResultText(), "too large") {
		t.Fatalf("tool result %+v", res)
	}
	if last.Messages[1].ToolUses()[0].InvalidInput != "" || strings.Contains(string(last.Messages[1].ToolUses()[0].Input), "yyyy") {
		t.Fatal("the dropped input went back to the model")
	}
}

// A malformed line of --input-format stream-json input ends the session
// with an error event naming the line and a result, after what came
// before it has run.
func TestMalformedStreamJSONInput(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]string{
		"not json":       `{"type":"user","message":`,
		"unknown type":   `{"type":"frobnicate"}`,
		"bad user":       `{"type":"user","message":{"role":"user","content":42}}`,
		"bad control":    `{"type":"control_request","request":{}}`,
		"not an object":  `[1,2]`,
		"response empty": `{"type":"control_response"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			s.Script("FIRST", llmtest.Text("first answer"))
			stdin := `{"type":"user","message":{"role":"user","content":"FIRST: go"}}` + "\n" + bad + "\n" +
				`{"type":"user","message":{"role":"user","content":"never read"}}` + "\n"
			p := runCadre(t, env, stdin, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
			if p.code != ExitUsage {
				t.Fatalf("code %d stderr %s", p.code, p.stderr)
			}
			var kinds []string
			var errEv, result map[string]any
			sc := bufio.NewScanner(strings.NewReader(p.stdout))
			for sc.Scan() {
				var ev map[string]any
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				k, _ := ev["type"].(string)
				if st, ok := ev["subtype"].(string); ok {
					k += "/" + st
				}
				kinds = append(kinds, k)
				switch k {
				case "system/error":
					errEv = ev
				case "result/error_during_execution":
					result = ev
				}
			}
			n := len(kinds)
			if n < 2 || kinds[n-2] != "system/error" || kinds[n-1] != "result/error_during_execution" || !strings.Contains(p.stdout, "first answer") {
				t.Fatalf("events %v\n%s", kinds, p.stdout)
			}
			if msg, _ := errEv["error"].(string); !strings.Contains(msg, "line 2") {
				t.Fatalf("error event %v", errEv)
			}
			if result["is_error"] != true || result["session_id"] == "" {
				t.Fatalf("result %v", result)
			}
			if len(s.Requests()) != 1 {
				t.Fatalf("%d requests: the line after the bad one was run", len(s.Requests()))
			}
		})
	}
}

// --fallback-model does not double the retry budget: with both models
// overloaded, the waits before every retry, the primary's and the
// fallback's together, stay within CADRE_RETRY_BUDGET_MS.
func TestFallbackModelStaysWithinTheRetryBudget(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	turns := make([]llmtest.Turn, 30)
	for i := range turns {
		turns[i] = llmtest.Overloaded()
	}
	s.Script("", turns...)
	const budgetMS = 1500
	env["CADRE_RETRY_BUDGET_MS"] = fmt.Sprint(budgetMS)
	p := runCadre(t, env, "", "-p", "hi", "--model", "opus", "--fallback-model", "sonnet", "--output-format", "stream-json", "--verbose")
	if p.code == 0 {
		t.Fatalf("succeeded: %s", p.stdout)
	}
	var waited int64
	var fallback bool
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	for sc.Scan() {
		var ev struct {
			Subtype string `json:"subtype"`
			Delay   int64  `json:"retry_delay_ms"`
			Cadre   struct {
				Cause string `json:"cause"`
			} `json:"cadre"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.Subtype == "api_retry" {
			waited += ev.Delay
			fallback = fallback || ev.Cadre.Cause == "fallback"
		}
	}
	if !fallback || waited > budgetMS || !strings.Contains(p.stdout, "budget") {
		t.Fatalf("fallback %v, waited %d ms of %d\n%s", fallback, waited, budgetMS, p.stdout)
	}
}
