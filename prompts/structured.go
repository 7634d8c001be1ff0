package prompts

import (
	"fmt"
	"strings"
)

// Structured output (--json-schema, S-15.6): the StructuredOutput tool the
// main agent gives its final answer with, and what it is told when the
// answer does not match or does not come.

// StructuredOutputDescription is the StructuredOutput tool's description.
func StructuredOutputDescription() string {
	return "Use this tool to return your final response in the requested structured format. " +
		"You MUST call this tool exactly once, at the end of your response, with the structured output as its input; " +
		"the input must match the tool's input schema. The turn ends when a call matches."
}

// StructuredOutputAccepted is the result of a call whose input matched.
func StructuredOutputAccepted() string { return "Structured output provided successfully" }

// SchemaError is one way the input did not match: where (a JSON pointer
// into the input, "" for the whole input) and what is wrong.
type SchemaError struct{ Path, Message string }

// StructuredOutputMismatch is the result of a call whose input did not
// match the schema: every error with its path, and how many attempts are
// left.
func StructuredOutputMismatch(errs []SchemaError, left int) string {
	var b strings.Builder
	b.WriteString("Output does not match required schema:\n")
	for _, e := range errs {
		path := e.Path
		if path == "" {
			path = "(root)"
		}
		fmt.Fprintf(&b, "- at %s: %s\n", path, e.Message)
	}
	switch {
	case left <= 0:
		b.WriteString("No attempts are left.")
	case left == 1:
		b.WriteString("Fix every error above and call StructuredOutput again; 1 attempt is left.")
	default:
		fmt.Fprintf(&b, "Fix every error above and call StructuredOutput again; %d attempts are left.", left)
	}
	return b.String()
}

// StructuredOutputNotJSON is the result of a call whose input is not a
// JSON object.
func StructuredOutputNotJSON(err string, left int) string {
	return StructuredOutputMismatch([]SchemaError{{Message: "the input is not a JSON object: " + err}}, left)
}

// StructuredOutputAgain is the result of a call after a matching one
// already ended the answer.
func StructuredOutputAgain() string {
	return "The structured output was already provided; this call changes nothing."
}

// StructuredOutputElsewhere is the result of a call by an agent that does
// not give the session's final answer (a sub-agent or fork).
func StructuredOutputElsewhere() string {
	return "StructuredOutput gives the main agent's final answer; this agent cannot call it. Answer in text instead."
}

// StructuredOutputReminder is the message sent when the main agent ended
// its turn without a matching StructuredOutput call.
func StructuredOutputReminder() string {
	return "You MUST call the StructuredOutput tool to complete this request, with input matching its schema. Call this tool now."
}

// OutputSchemaInvalid refuses a spawn whose output schema cannot be used:
// from says where the schema came from (the Agent call's output_schema or
// a definition's outputSchema), err what is wrong with it.
func OutputSchemaInvalid(from string, err error) string {
	return fmt.Sprintf("The sub-agent was not started: its %s is not usable: %v. Fix the schema (JSON Schema whose root has \"type\": \"object\") and call Agent again.", from, err)
}

// OutputSchemaFork refuses an output schema on a fork, which shares its
// parent's tools and cannot be given its own StructuredOutput tool.
func OutputSchemaFork() string {
	return "A fork cannot be given an output_schema: it shares your tools. Name a subagent_type to get a typed result, or drop output_schema."
}

// SubagentOutputExhausted is why a sub-agent with an output schema failed:
// it spent its attempts without a StructuredOutput call that matched.
func SubagentOutputExhausted(attempts int) string {
	return fmt.Sprintf("no StructuredOutput call matched its output schema in %d attempts (error_max_structured_output_retries)", attempts)
}

// SubagentOutputNotGiven is why a sub-agent with an output schema failed
// when it ended its turn without the StructuredOutput call again after
// its reminder.
func SubagentOutputNotGiven() string {
	return "it ended its turn without calling StructuredOutput, again after a reminder (error_max_structured_output_retries)"
}
