package openai_test

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/openai"
)

// A model answering with a tool call, streamed from the scripted server.
func ExampleModel_Stream() {
	s := llmtest.NewServer()
	defer s.Close()
	s.Script("", llmtest.Text("Let me check.").WithToolUse("Read", map[string]string{"file_path": "go.mod"}))

	m, err := openai.New(openai.Config{BaseURL: s.URL() + "/v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &llm.Request{Model: "gpt-test", System: "Be brief.", Messages: []llm.Message{llm.UserText("What module is this?")}}
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Kind {
		case llm.EventToolUseStart:
			fmt.Println("tool use:", ev.ToolUse.Name)
		case llm.EventDone:
			for _, b := range ev.Response.Message.Content {
				fmt.Printf("%s %s%s\n", b.Type, b.Text, b.Input)
			}
			fmt.Println("stop:", ev.Response.StopReason)
		}
	}
	// Output:
	// tool use: Read
	// text Let me check.
	// tool_use {"file_path":"go.mod"}
	// stop: tool_use
}
