package telemetry

// The OpenTelemetry GenAI semantic conventions' names cadre uses (status
// "Development"). The Go semconv packages dropped the gen_ai names after
// v1.41.0, so they are defined here.
const (
	// Operation names (gen_ai.operation.name) and span-name prefixes.
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"

	AttrOperationName      = "gen_ai.operation.name"
	AttrProviderName       = "gen_ai.provider.name"
	AttrAgentID            = "gen_ai.agent.id"
	AttrAgentName          = "gen_ai.agent.name"
	AttrAgentDescription   = "gen_ai.agent.description"
	AttrConversationID     = "gen_ai.conversation.id"
	AttrRequestModel       = "gen_ai.request.model"
	AttrResponseModel      = "gen_ai.response.model"
	AttrResponseID         = "gen_ai.response.id"
	AttrResponseFinish     = "gen_ai.response.finish_reasons"
	AttrToolName           = "gen_ai.tool.name"
	AttrToolCallID         = "gen_ai.tool.call.id"
	AttrToolType           = "gen_ai.tool.type"
	AttrToolCallArguments  = "gen_ai.tool.call.arguments"
	AttrToolCallResult     = "gen_ai.tool.call.result"
	AttrInputMessages      = "gen_ai.input.messages"
	AttrUsageInput         = "gen_ai.usage.input_tokens"
	AttrUsageOutput        = "gen_ai.usage.output_tokens"
	AttrUsageCacheRead     = "gen_ai.usage.cache_read.input_tokens"
	AttrUsageCacheCreation = "gen_ai.usage.cache_creation.input_tokens"
	AttrTokenType          = "gen_ai.token.type"
	AttrErrorType          = "error.type"
	MetricClientTokenUsage = "gen_ai.client.token.usage"
	TokenTypeInput         = "input"
	TokenTypeOutput        = "output"
	TokenTypeCacheRead     = "cache_read"
	TokenTypeCacheCreation = "cache_creation"
	ToolTypeFunction       = "function"
	ProviderAnthropic      = "anthropic"
	ProviderOpenAI         = "openai"
)

// cadre's own attributes and metrics.
const (
	AttrStatus       = "cadre.status"
	AttrDepth        = "cadre.depth"
	AttrBackground   = "cadre.background"
	AttrIsolation    = "cadre.isolation"
	AttrFork         = "cadre.fork"
	AttrParentAgent  = "cadre.parent.agent.id"
	AttrBudgetUSD    = "cadre.budget.usd"
	AttrBudgetTokens = "cadre.budget.tokens"
	AttrBudgetTurns  = "cadre.budget.turns"
	AttrBudgetWall   = "cadre.budget.wall_time_ms"
	AttrCostUSD      = "cadre.cost.usd"
	AttrDecision     = "cadre.tool.decision"
	AttrModel        = "cadre.model"

	// MetricTokens counts tokens by gen_ai.token.type, model and agent
	// type; MetricCost the list-price cost in USD by model; MetricAgents
	// the agents that ended, by type and status; MetricToolDecisions the
	// tool calls, by tool and decision (accept or reject).
	MetricTokens        = "cadre.token.usage"
	MetricCost          = "cadre.cost.usage"
	MetricAgents        = "cadre.agent.count"
	MetricToolDecisions = "cadre.tool.decision"

	// DecisionAccept and DecisionReject are the values of
	// cadre.tool.decision.
	DecisionAccept = "accept"
	DecisionReject = "reject"

	// InstrumentationName names cadre's tracer and meter.
	InstrumentationName = "github.com/cadre-dev/cadre"
)
