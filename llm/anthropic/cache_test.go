package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
)

func TestPlaceBreakpoints(t *testing.T) {
	tool := llm.ToolSpec{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	user := llm.UserText("u")
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("a")}}
	use := llm.Block{Type: llm.BlockToolUse, ID: "x", Name: "t", Input: json.RawMessage(`{}`)}
	thinking := llm.Block{Type: llm.BlockThinking, Thinking: "hm", Signature: "s"}
	redacted := llm.Block{Type: llm.BlockRedactedThinking, Data: "d"}
	tests := []struct {
		name string
		req  *llm.Request
		want Breakpoints
	}{
		{"nil request", nil, Breakpoints{Tool: -1}},
		{"empty request", &llm.Request{}, Breakpoints{Tool: -1}},
		{"system only", &llm.Request{System: "s"}, Breakpoints{Tool: -1, System: true}},
		{"tools only", &llm.Request{Tools: []llm.ToolSpec{tool, tool, tool}}, Breakpoints{Tool: 2}},
		{"one message", &llm.Request{Messages: []llm.Message{user}}, Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 0}}}},
		{"two messages", &llm.Request{Messages: []llm.Message{user, asst}}, Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 0}, {1, 0}}}},
		{"all four", &llm.Request{System: "s", Tools: []llm.ToolSpec{tool}, Messages: []llm.Message{user, asst, user, asst, user}},
			Breakpoints{Tool: 0, System: true, Blocks: []BlockRef{{3, 0}, {4, 0}}}},
		// The main agent: its own tools after the ones its children share;
		// the shared ones end in a marker, the system marker closes the rest.
		{"shared tools", &llm.Request{System: "s", SharedTools: 2, Tools: []llm.ToolSpec{tool, tool, tool, tool}, Messages: []llm.Message{user, asst, user}},
			Breakpoints{Tool: 1, System: true, Blocks: []BlockRef{{1, 0}, {2, 0}}}},
		{"shared tools are all the tools", &llm.Request{System: "s", SharedTools: 2, Tools: []llm.ToolSpec{tool, tool}, Messages: []llm.Message{user}},
			Breakpoints{Tool: 1, System: true, Blocks: []BlockRef{{0, 0}}}},
		{"shared tools of a child with a system prefix", &llm.Request{System: "s", SystemPrefix: "p", SharedTools: 2, Tools: []llm.ToolSpec{tool, tool, tool}, Messages: []llm.Message{user}},
			Breakpoints{Tool: 1, SystemPrefix: true, System: true, Blocks: []BlockRef{{0, 0}}}},
		{"shared tools beyond the list", &llm.Request{SharedTools: 9, Tools: []llm.ToolSpec{tool, tool}},
			Breakpoints{Tool: 1}},
		{"no cache", &llm.Request{NoCache: true, System: "s", Tools: []llm.ToolSpec{tool}, Messages: []llm.Message{user, asst, user}},
			Breakpoints{Tool: -1}},
		{"last block of a long message", &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Block{thinking, llm.TextBlock("x"), use, use}}}},
			Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 3}}}},
		{"skip trailing thinking and empty text", &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("x"), thinking, llm.TextBlock(""), redacted}}}},
			Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 0}}}},
		{"message with nothing cacheable", &llm.Request{System: "s", Messages: []llm.Message{
			user, {Role: llm.RoleAssistant, Content: []llm.Block{thinking}}}},
			Breakpoints{Tool: -1, System: true, Blocks: []BlockRef{{0, 0}}}},
		{"empty message", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant}}},
			Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 0}}}},
		{"tool results", &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("a", "1", false), llm.ToolResultBlock("b", "2", true)}}}},
			Breakpoints{Tool: -1, Blocks: []BlockRef{{0, 1}}}},
		// A fork's first request: the hint ends the prefix its siblings
		// share (the rules block); the tool marker gives way to it.
		{"fork hint", &llm.Request{System: "s", Tools: []llm.ToolSpec{tool}, CacheHints: []llm.CacheHint{{Message: 2, Block: 1}},
			Messages: []llm.Message{user, asst, {Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("x", "p", false), llm.TextBlock("rules"), llm.TextBlock("directive")}}}},
			Breakpoints{Tool: -1, System: true, Blocks: []BlockRef{{1, 0}, {2, 1}, {2, 2}}}},
		// Later turns of the fork keep the hint; the last message comes
		// before the one ahead of it.
		{"fork hint later turn", &llm.Request{System: "s", Tools: []llm.ToolSpec{tool}, CacheHints: []llm.CacheHint{{Message: 0, Block: 0}},
			Messages: []llm.Message{user, asst, user, asst, user}},
			Breakpoints{Tool: -1, System: true, Blocks: []BlockRef{{0, 0}, {3, 0}, {4, 0}}}},
		{"hint on the last block is one marker", &llm.Request{System: "s", Tools: []llm.ToolSpec{tool}, CacheHints: []llm.CacheHint{{Message: 1, Block: 0}},
			Messages: []llm.Message{user, asst}},
			Breakpoints{Tool: -1, System: true, Blocks: []BlockRef{{0, 0}, {1, 0}}}},
		{"hint without system keeps the tool marker", &llm.Request{Tools: []llm.ToolSpec{tool}, CacheHints: []llm.CacheHint{{Message: 0, Block: 0}},
			Messages: []llm.Message{user, asst, user}},
			Breakpoints{Tool: 0, Blocks: []BlockRef{{0, 0}, {1, 0}, {2, 0}}}},
		{"hints out of range or on thinking are ignored", &llm.Request{System: "s", Tools: []llm.ToolSpec{tool},
			CacheHints: []llm.CacheHint{{Message: 9, Block: 0}, {Message: -1, Block: 0}, {Message: 0, Block: 5}, {Message: 1, Block: 0}},
			Messages:   []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{thinking, llm.TextBlock("a")}}}},
			Breakpoints{Tool: 0, System: true, Blocks: []BlockRef{{0, 0}, {1, 1}}}},
		// A sub-agent's system prompt in two parts: the part siblings of
		// any type share takes the tool marker's place, so the last two
		// messages keep theirs.
		{"system prefix", &llm.Request{SystemPrefix: "shared", System: "s", Tools: []llm.ToolSpec{tool}, Messages: []llm.Message{user, asst, user}},
			Breakpoints{Tool: -1, SystemPrefix: true, System: true, Blocks: []BlockRef{{1, 0}, {2, 0}}}},
		{"system prefix alone", &llm.Request{SystemPrefix: "shared", Tools: []llm.ToolSpec{tool}, Messages: []llm.Message{user}},
			Breakpoints{Tool: -1, SystemPrefix: true, Blocks: []BlockRef{{0, 0}}}},
		{"system prefix and a fork hint", &llm.Request{SystemPrefix: "shared", System: "s", Tools: []llm.ToolSpec{tool}, CacheHints: []llm.CacheHint{{Message: 0, Block: 0}},
			Messages: []llm.Message{user, asst, user}},
			Breakpoints{Tool: -1, SystemPrefix: true, System: true, Blocks: []BlockRef{{0, 0}, {2, 0}}}},
		{"no cache wins over hints", &llm.Request{NoCache: true, CacheHints: []llm.CacheHint{{Message: 0, Block: 0}}, Messages: []llm.Message{user}},
			Breakpoints{Tool: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlaceBreakpoints(tt.req)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Count() > MaxBreakpoints {
				t.Errorf("%d breakpoints", got.Count())
			}
		})
	}
}

var cacheControlRE = regexp.MustCompile(`"cache_control":\{[^}]*\}`)

// countMarkers counts cache_control markers in a request body.
func countMarkers(body []byte) int { return len(cacheControlRE.FindAll(body, -1)) }

// strip removes cache markers from JSON so prefixes can be compared the way
// the API compares them.
func strip(b []byte) []byte {
	b = cacheControlRE.ReplaceAll(b, nil)
	b = bytes.ReplaceAll(b, []byte(",,"), []byte(","))
	b = bytes.ReplaceAll(b, []byte(",}"), []byte("}"))
	return bytes.ReplaceAll(b, []byte("{,"), []byte("{"))
}

// TestPrefixStableAcrossTurns renders a growing conversation turn by turn and
// checks that, with cache markers removed, tools, system and every earlier
// message render to the same bytes as on the previous turn, so the prefix
// the API cached is still there.
func TestPrefixStableAcrossTurns(t *testing.T) {
	req := bigRequest(2, 3)
	var prevTools, prevSystem []byte
	var prevMsgs [][]byte
	for turn := 0; turn < 6; turn++ {
		p, err := buildParams(req, 0)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := countMarkers(body); n > MaxBreakpoints || n != PlaceBreakpoints(req).Count() {
			t.Fatalf("turn %d: %d markers", turn, n)
		}
		tools, _ := json.Marshal(p.Tools)
		system, _ := json.Marshal(p.System)
		tools, system = strip(tools), strip(system)
		var msgs [][]byte
		for _, m := range p.Messages {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, strip(b))
		}
		if prevMsgs != nil {
			if !bytes.Equal(tools, prevTools) || !bytes.Equal(system, prevSystem) {
				t.Fatalf("turn %d: tools or system changed", turn)
			}
			for i, b := range prevMsgs {
				if !bytes.Equal(b, msgs[i]) {
					t.Fatalf("turn %d: message %d changed:\nwas %s\nnow %s", turn, i, b, msgs[i])
				}
			}
		}
		if bytes.Contains(tools, []byte("cache_control")) || !json.Valid(tools) || !json.Valid(msgs[0]) {
			t.Fatalf("strip broke the JSON: %s", tools)
		}
		prevTools, prevSystem, prevMsgs = tools, system, msgs
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(fmt.Sprint("answer ", turn)),
				{Type: llm.BlockToolUse, ID: fmt.Sprint("toolu_", turn), Name: "tool0", Input: json.RawMessage(`{"a":1}`)}}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(fmt.Sprint("toolu_", turn), "result", false)}},
		)
	}
}

// bigRequest returns a conversation of n message pairs and tools tools.
func bigRequest(n, tools int) *llm.Request {
	req := &llm.Request{Model: "claude-sonnet-4-5", System: "You are a careful engineer. Answer briefly."}
	for i := range tools {
		req.Tools = append(req.Tools, llm.ToolSpec{
			Name:        fmt.Sprint("tool", i),
			Description: "Does a thing with a path and a pattern, carefully.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"where"},"pattern":{"type":"string"}},"required":["path"]}`),
		})
	}
	req.Messages = append(req.Messages, llm.UserText("Please look at the repository and fix the failing test."))
	for i := range n {
		id := fmt.Sprint("toolu_old_", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "I should read the file first.", Signature: "sig"},
				llm.TextBlock("Reading the file."),
				{Type: llm.BlockToolUse, ID: id, Name: "tool1", Input: json.RawMessage(`{"path":"/repo/main.go","pattern":"func"}`)},
			}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, "package main\n\nfunc main() {}\n", false)}},
		)
	}
	return req
}

// BenchmarkBuildParams converts a 50-message conversation with 20 tools
// into SDK params and marshals it, as one request costs.
func BenchmarkBuildParams(b *testing.B) {
	req := bigRequest(25, 20)
	req.Messages = req.Messages[:50]
	b.ReportAllocs()
	for b.Loop() {
		p, err := buildParams(req, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildParamsOnly measures the translation without marshalling.
func BenchmarkBuildParamsOnly(b *testing.B) {
	req := bigRequest(25, 20)
	req.Messages = req.Messages[:50]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildParams(req, 0); err != nil {
			b.Fatal(err)
		}
	}
}
