package run

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// Subtype says how a run ended.
type Subtype string

// Subtypes, as Claude Code's result message names them.
const (
	// Success: the model gave its last answer.
	Success Subtype = "success"
	// ErrorMaxTurns: the run stopped at its turn limit with the model
	// still wanting tools.
	ErrorMaxTurns Subtype = "error_max_turns"
	// ErrorDuringExecution: the run failed (a model API error, a
	// cancelled context, a transcript that could not be written).
	ErrorDuringExecution Subtype = "error_during_execution"
	// ErrorMaxBudget: the run was stopped at its cost limit (cadre -p's
	// --max-budget-usd).
	ErrorMaxBudget Subtype = "error_max_budget_usd"
	// ErrorMaxStructuredOutputRetries: the main agent spent its attempts
	// at a structured output that matches the schema (S-15.6).
	ErrorMaxStructuredOutputRetries Subtype = "error_max_structured_output_retries"
)

// Valid reports whether s is one of the subtypes (a result read back from
// a transcript or another process names one).
func (s Subtype) Valid() bool {
	switch s {
	case Success, ErrorMaxTurns, ErrorDuringExecution, ErrorMaxBudget, ErrorMaxStructuredOutputRetries:
		return true
	}
	return false
}

// Result sums up a finished run.
type Result struct {
	// Text is the final answer.
	Text string
	// IsError is true when the run did not finish normally; Subtype says
	// how: Success, ErrorMaxTurns or ErrorDuringExecution.
	IsError bool
	Subtype Subtype
	// NumTurns counts model requests of the main agent.
	NumTurns int
	// ToolUses counts tool calls of the main agent.
	ToolUses int
	// Duration is the run's wall time.
	Duration time.Duration
	// Usage totals every model request of the run.
	Usage llm.Usage
	// SessionID names the session; TranscriptPath is its transcript ("" when
	// transcripts are off).
	SessionID      string
	TranscriptPath string
	// PermissionDenials lists the tool calls that were denied, by every
	// agent of the run.
	PermissionDenials []permission.Denial
	// Subagents counts the run's sub-agents.
	Subagents SubagentStats
	// Error says why a run with Subtype ErrorDuringExecution failed; the
	// same error follows the result in Run's stream.
	Error string
	// ModelUsage is Usage by model id, every agent included; CostUSD is
	// what it cost at the session's prices, and UnpricedModels lists the
	// models the table has no price for (counted as 0).
	ModelUsage     map[string]llm.Usage
	CostUSD        float64
	UnpricedModels []string
	// Todos are the agents' todo lists at the end of the run, by agent id
	// ("main" for the main agent); agents with an empty list are left out.
	Todos map[string][]tool.Todo
	// StructuredOutput is the main agent's answer as JSON matching the
	// session's output schema (cadre.Config.OutputSchema); nil without one
	// or when the run did not succeed.
	StructuredOutput json.RawMessage
	// Warnings are the session's record-keeping failures no earlier
	// Result reported: task-journal and transcript writes that failed
	// without ending the run (see EventWarning).
	Warnings []string
}

// SubagentStats counts the sub-agents of a run. Every spawned sub-agent
// ends completed, failed or killed (one that was killed while it waited
// for a slot included).
type SubagentStats struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Killed    int `json:"killed"`
	// Queued counts the spawned sub-agents that waited for a slot.
	Queued int `json:"queued"`
	// Refused counts Agent calls that started nothing, by reason.
	Refused map[RefusalReason]int `json:"refused"`
	// Teammates counts the spawned that are teammates (issue 25).
	Teammates int `json:"teammates,omitempty"`
}
