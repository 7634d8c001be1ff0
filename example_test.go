package cadre_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// An embedder runs one prompt and watches the run: the tool calls as they
// happen and the final result. The model here is the scripted server
// llm/llmtest; against the real API, leave BaseURL empty and pass a real
// key.
func Example() {
	// A project directory with one file for the agent to read.
	dir, err := os.MkdirTemp("", "cadre-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk\ncall Bob\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	// The scripted model: first it reads the file, then it answers.
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("", llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(dir, "notes.txt")}),
		llmtest.Text("The notes say: buy milk, call Bob."))

	// Our own transport, so no idle connection outlives the example.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Permissions is nil: the default mode with nobody to ask. Reading
	// inside Cwd runs; writes and most commands are denied with the
	// reason. cadre.AllowAll() lets every call run.
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range rt.Run(context.Background(), "What is in notes.txt?") {
		if err != nil {
			fmt.Println("run failed:", err)
			return
		}
		switch ev.Type {
		case run.EventToolStart:
			fmt.Printf("tool call: %s %s\n", ev.Call.Name, exampleFilePath(ev.Call.Input, dir))
		case run.EventToolEnd:
			fmt.Printf("tool result (error %v):\n", ev.ToolResult.IsError)
			for _, line := range strings.Split(strings.TrimSpace(ev.ToolResult.Text), "\n") {
				fmt.Println("  |", strings.Join(strings.Fields(line), " "))
			}
		case run.EventResult:
			fmt.Println("answer:", ev.Result.Text)
			fmt.Printf("%s after %d turns and %d tool uses\n", ev.Result.Subtype, ev.Result.NumTurns, ev.Result.ToolUses)
		}
	}
	// Output:
	// tool call: Read notes.txt
	// tool result (error false):
	//   | 1 buy milk
	//   | 2 call Bob
	// answer: The notes say: buy milk, call Bob.
	// success after 2 turns and 1 tool uses
}

// exampleFilePath shows the file_path of a tool input relative to dir, so the
// printed text is the same on every machine.
func exampleFilePath(input json.RawMessage, dir string) string {
	var in struct {
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return string(input)
	}
	if rel, err := filepath.Rel(dir, in.FilePath); err == nil {
		return filepath.ToSlash(rel)
	}
	return in.FilePath
}

// A main agent hands a question to the built-in Explore sub-agent through
// the Agent tool. The sub-agent's events come on the same stream, marked
// with its AgentID; TaskStarted and TaskCompleted bracket its run.
func Example_subagents() {
	dir, err := os.MkdirTemp("", "cadre-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "config.go"), []byte("package app\n\nfunc Load() {}\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	// Requests are matched to scripts by the text of their first user
	// message: the main agent's prompt, or a sub-agent's task prompt.
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{
		"description":   "find the config loader",
		"prompt":        "EXPLORE: find where the configuration is loaded and report the file.",
		"subagent_type": "Explore",
	}), llmtest.Text("The configuration is loaded in config.go."))
	srv.Script("EXPLORE", llmtest.ToolUse("Grep", map[string]any{"pattern": "func Load"}),
		llmtest.Text("It is loaded by Load in config.go."))

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range rt.Run(context.Background(), "MAIN: where is the configuration loaded?") {
		if err != nil {
			fmt.Println("run failed:", err)
			return
		}
		switch ev.Type {
		case run.EventToolStart:
			fmt.Printf("tool call by %s: %s\n", exampleAgentName(ev.AgentID), ev.Call.Name)
		case run.EventTaskStarted:
			fmt.Printf("task started: %s %q at depth %d, tools %s\n", ev.Task.AgentType, ev.Task.Description, ev.Task.Depth,
				strings.Join(ev.Task.Receipt.Tools, ","))
		case run.EventTaskCompleted:
			fmt.Printf("task %s: %s reported %q\n", ev.Subagent.Status, ev.Subagent.AgentType, ev.Subagent.Text)
		case run.EventResult:
			fmt.Println("answer:", ev.Result.Text)
			fmt.Printf("sub-agents: %d spawned, %d completed\n", ev.Result.Subagents.Spawned, ev.Result.Subagents.Completed)
		}
	}
	// Output:
	// tool call by main: Agent
	// task started: Explore "find the config loader" at depth 1, tools Bash,BashOutput,Glob,Grep,KillShell,LS,Read,TodoWrite,WebFetch,WebSearch,Skill,ToolSearch
	// tool call by a sub-agent: Grep
	// task completed: Explore reported "It is loaded by Load in config.go."
	// answer: The configuration is loaded in config.go.
	// sub-agents: 1 spawned, 1 completed
}

// exampleAgentName names an event's agent: "main" or a sub-agent.
func exampleAgentName(id string) string {
	if id == "" {
		return "main"
	}
	return "a sub-agent"
}

// An embedder compacts the main agent's conversation between runs: its
// model writes a summary, and the next run continues from it.
// Config.Compaction sets when agents compact on their own (the zero value:
// Claude Code's thresholds of each model's window).
func ExampleRuntime_Compact() {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("",
		llmtest.Text("Paris."),
		llmtest.Text("<summary>The user asked for the capital of France: Paris.</summary>"),
		llmtest.Text("About 2.1 million people live in Paris."))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		fmt.Println(err)
		return
	}
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: os.TempDir(), NoTranscript: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	ask := func(prompt string) {
		for ev, err := range rt.Run(context.Background(), prompt) {
			if err != nil {
				fmt.Println("run failed:", err)
				return
			}
			if ev.Type == run.EventResult {
				fmt.Println(ev.Result.Text)
			}
		}
	}
	ask("What is the capital of France?")
	if err := rt.Compact(context.Background(), "", "keep the city"); err != nil {
		fmt.Println("compact:", err)
		return
	}
	ask("How many people live there?")
	last := srv.Requests()[2]
	fmt.Println(len(last.Messages), "message sent:", strings.Contains(last.Messages[0].Text(), "capital of France: Paris"))
	// Output:
	// Paris.
	// About 2.1 million people live in Paris.
	// 1 message sent: true
}
