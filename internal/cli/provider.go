package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/openai"
)

// Providers cadre can talk to.
const (
	providerAnthropic = "anthropic"
	providerOpenAI    = "openai"
)

// defaultAliases maps the model aliases per provider. Settings
// (modelAliases) override entries; OpenAI-compatible servers name their own
// models, so they get no defaults.
func defaultAliases(provider string) map[string]string {
	if provider == providerAnthropic {
		return map[string]string{
			"sonnet": "claude-sonnet-4-5",
			"opus":   "claude-opus-4-1",
			"haiku":  "claude-haiku-4-5",
		}
	}
	return map[string]string{}
}

// defaultModel is the model used when nothing names one.
func defaultModel(provider string) string {
	if provider == providerAnthropic {
		return "sonnet"
	}
	return "gpt-5"
}

// providerConfig is what selecting and building a provider needs.
type providerConfig struct {
	// Provider is "anthropic", "openai" or "" (choose from the environment).
	Provider string
	// Model as given (alias or id), "" for the default.
	Model string
	// Aliases from settings, provider → alias → id.
	Aliases map[string]map[string]string
	Getenv  func(string) string
}

// chooseProvider picks the provider: CADRE_PROVIDER, then settings, then the
// API key present in the environment.
func chooseProvider(pc providerConfig) (string, error) {
	p := pc.Getenv("CADRE_PROVIDER")
	if p == "" {
		p = pc.Provider
	}
	if p == "" {
		switch {
		case pc.Getenv("ANTHROPIC_API_KEY") != "" || pc.Getenv("ANTHROPIC_AUTH_TOKEN") != "":
			p = providerAnthropic
		case pc.Getenv("OPENAI_API_KEY") != "" || pc.Getenv("OPENAI_BASE_URL") != "":
			p = providerOpenAI
		default:
			return "", errors.New("no model provider configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server)")
		}
	}
	p = strings.ToLower(p)
	if p != providerAnthropic && p != providerOpenAI {
		return "", fmt.Errorf("unknown provider %q: valid values are anthropic, openai", p)
	}
	return p, nil
}

// resolveModelID turns an alias into the provider's model id.
func resolveModelID(provider, model string, aliases map[string]map[string]string) string {
	if model == "" {
		model = defaultModel(provider)
	}
	if id, ok := aliases[provider][model]; ok {
		return id
	}
	if id, ok := defaultAliases(provider)[model]; ok {
		return id
	}
	return model
}

// buildModel creates the provider client. It does no network I/O.
func buildModel(pc providerConfig) (llm.Model, string, string, error) {
	provider, err := chooseProvider(pc)
	if err != nil {
		return nil, "", "", err
	}
	model := pc.Model
	if model == "" {
		model = pc.Getenv("CADRE_MODEL")
	}
	id := resolveModelID(provider, model, pc.Aliases)
	b, err := boundsFromEnv(pc.Getenv)
	if err != nil {
		return nil, "", "", err
	}
	switch provider {
	case providerAnthropic:
		key, token := pc.Getenv("ANTHROPIC_API_KEY"), pc.Getenv("ANTHROPIC_AUTH_TOKEN")
		if key == "" && token == "" {
			return nil, "", "", errors.New("the anthropic provider needs an API key: set ANTHROPIC_API_KEY")
		}
		m, err := anthropic.New(anthropic.Config{APIKey: key, AuthToken: token, BaseURL: pc.Getenv("ANTHROPIC_BASE_URL"),
			HeaderTimeout: b.header, IdleTimeout: b.idle, MaxRetryAfter: b.maxRetryAfter, RetryBudget: b.budget})
		if err != nil {
			return nil, "", "", fmt.Errorf("anthropic client: %w", err)
		}
		return m, provider, id, nil
	default:
		key, base := pc.Getenv("OPENAI_API_KEY"), pc.Getenv("OPENAI_BASE_URL")
		if key == "" && base == "" {
			return nil, "", "", errors.New("the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server that needs no key)")
		}
		m, err := openai.New(openai.Config{APIKey: key, BaseURL: base,
			HeaderTimeout: b.header, IdleTimeout: b.idle, MaxRetryAfter: b.maxRetryAfter, RetryBudget: b.budget})
		if err != nil {
			return nil, "", "", fmt.Errorf("openai client: %w", err)
		}
		return m, provider, id, nil
	}
}
