package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/openai"
)

// Provider is a model provider cadre can talk to.
type Provider string

// Providers.
const (
	// Anthropic: the Anthropic Messages API (ANTHROPIC_API_KEY or
	// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL).
	Anthropic Provider = "anthropic"
	// OpenAI: any OpenAI-compatible Chat Completions server
	// (OPENAI_API_KEY, OPENAI_BASE_URL): OpenAI, Ollama, vLLM, llama.cpp,
	// OpenRouter.
	OpenAI Provider = "openai"
)

// ParseProvider checks a provider name (case aside).
func ParseProvider(s string) (Provider, error) {
	switch p := Provider(strings.ToLower(strings.TrimSpace(s))); p {
	case Anthropic, OpenAI:
		return p, nil
	}
	return "", fmt.Errorf("unknown provider %q (valid: anthropic, openai)", s)
}

// DefaultAliases are the model aliases of a provider before settings
// (modelAliases) override entries. OpenAI-compatible servers name their
// own models, so they have none.
func DefaultAliases(p Provider) map[string]string {
	if p == Anthropic {
		return map[string]string{
			"sonnet": "claude-sonnet-4-5",
			"opus":   "claude-opus-4-1",
			"haiku":  "claude-haiku-4-5",
		}
	}
	return map[string]string{}
}

// DefaultModel is the model of a provider when nothing names one.
func DefaultModel(p Provider) string {
	if p == Anthropic {
		return "sonnet"
	}
	return "gpt-5"
}

// Aliases resolves model aliases for one provider: settings first, then
// the provider's defaults.
type Aliases struct {
	Provider Provider
	// Settings maps provider → alias → id (Settings.ModelAliases).
	Settings map[string]map[string]string
}

// Resolve returns the model id of an alias; ok is false for a name that
// is not an alias.
func (a Aliases) Resolve(alias string) (id string, ok bool) {
	if id, ok := a.Settings[string(a.Provider)][alias]; ok {
		return id, true
	}
	id, ok = DefaultAliases(a.Provider)[alias]
	return id, ok
}

// ModelID turns a model name (alias or id; "" for the provider's
// default) into the model id.
func (a Aliases) ModelID(model string) string {
	if model == "" {
		model = DefaultModel(a.Provider)
	}
	if id, ok := a.Resolve(model); ok {
		return id
	}
	return model
}

// ChooseProvider picks the provider: CADRE_PROVIDER, then the settings'
// value, then the API key present in the environment.
func ChooseProvider(setting string, getenv func(string) string) (Provider, error) {
	p := getenv("CADRE_PROVIDER")
	if p == "" {
		p = setting
	}
	if p != "" {
		return ParseProvider(p)
	}
	switch {
	case getenv("ANTHROPIC_API_KEY") != "" || getenv("ANTHROPIC_AUTH_TOKEN") != "":
		return Anthropic, nil
	case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
		return OpenAI, nil
	}
	return "", errors.New("no model provider configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server)")
}

// NewModel creates the provider's client from the environment (keys and
// base URLs). It does no network I/O.
func NewModel(p Provider, getenv func(string) string) (llm.Model, error) {
	b, err := BoundsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	switch p {
	case Anthropic:
		key, token := getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_AUTH_TOKEN")
		if key == "" && token == "" {
			return nil, errors.New("the anthropic provider needs an API key: set ANTHROPIC_API_KEY")
		}
		m, err := anthropic.New(anthropic.Config{APIKey: key, AuthToken: token, BaseURL: getenv("ANTHROPIC_BASE_URL"),
			HeaderTimeout: b.Header, IdleTimeout: b.Idle, MaxRetryAfter: b.MaxRetryAfter, RetryBudget: b.Budget})
		if err != nil {
			return nil, fmt.Errorf("anthropic client: %w", err)
		}
		return m, nil
	case OpenAI:
		key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
		if key == "" && base == "" {
			return nil, errors.New("the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs no key)")
		}
		m, err := openai.New(openai.Config{APIKey: key, BaseURL: base,
			HeaderTimeout: b.Header, IdleTimeout: b.Idle, MaxRetryAfter: b.MaxRetryAfter, RetryBudget: b.Budget})
		if err != nil {
			return nil, fmt.Errorf("openai client: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown provider %q (valid: anthropic, openai)", p)
}
