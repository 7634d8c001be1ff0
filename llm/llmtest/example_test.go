package llmtest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaioption "github.com/openai/openai-go/v3/option"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// A tool call and a final answer, driven with the official Anthropic SDK.
func Example() {
	s := llmtest.NewServer()
	defer s.Close()
	s.Script("weather",
		llmtest.ToolUse("get_weather", map[string]string{"city": "Paris"}),
		llmtest.Text("It is sunny in Paris."),
	)

	ctx := context.Background()
	client := anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("test"))
	params := anthropic.MessageNewParams{
		Model:     "llmtest-model",
		MaxTokens: 1024,
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}},
		}}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))},
	}

	first, err := client.Messages.New(ctx, params)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	use := first.Content[0].AsToolUse()
	fmt.Println(first.StopReason, use.Name, string(use.Input), use.ID)

	params.Messages = append(params.Messages,
		first.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "sunny, 24°C", false)),
	)
	stream := client.Messages.NewStreaming(ctx, params)
	var final anthropic.Message
	for stream.Next() {
		if err := final.Accumulate(stream.Current()); err != nil {
			fmt.Println("error:", err)
			return
		}
	}
	if err := stream.Err(); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(final.StopReason, final.Content[0].Text)
	fmt.Println("requests:", len(s.RequestsFor("weather")), "violations:", len(s.Violations()))
	// Output:
	// tool_use get_weather {"city":"Paris"} toolu_e5e72beb_1
	// end_turn It is sunny in Paris.
	// requests: 2 violations: 0
}

// The same exchange through the official OpenAI SDK, streamed.
func Example_openAI() {
	s := llmtest.NewServer()
	defer s.Close()
	s.Script("", llmtest.ToolUse("get_weather", map[string]string{"city": "Paris"}))

	client := openai.NewClient(oaioption.WithBaseURL(s.URL()+"/v1"), oaioption.WithAPIKey("test"))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "llmtest-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		fmt.Println("error:", err)
		return
	}
	call := acc.Choices[0].Message.ToolCalls[0]
	var input map[string]string
	_ = json.Unmarshal([]byte(call.Function.Arguments), &input)
	fmt.Println(acc.Choices[0].FinishReason, call.ID, call.Function.Name, input["city"])
	// Output:
	// tool_calls call_e3b0c442_1 get_weather Paris
}
