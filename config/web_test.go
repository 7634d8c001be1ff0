package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool/builtin"
)

// TestWebSearchBackend: which backend answers WebSearch for each
// combination of provider, settings and environment, and the warnings and
// errors of a backend that lacks what it needs.
func TestWebSearchBackend(t *testing.T) {
	t.Parallel()
	openai := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name     string
		settings string
		env      map[string]string
		want     string // backend type: anthropic, searxng, brave, "" for none
		url      string
		warn     string
		err      string
	}{
		{name: "anthropic provider by default", env: anthropicKey, want: "anthropic"},
		{name: "openai without a backend", env: openai, want: ""},
		{name: "searxng from the environment", env: with(openai, "CADRE_SEARXNG_URL", "http://127.0.0.1:8888"), want: "searxng", url: "http://127.0.0.1:8888"},
		{name: "brave from the environment", env: with(openai, "BRAVE_SEARCH_API_KEY", "bk"), want: "brave"},
		{name: "settings choose searxng over the provider", settings: `{"webSearch": {"backend": "searxng", "url": "https://search.example.org"}}`, env: anthropicKey, want: "searxng", url: "https://search.example.org"},
		{name: "the environment's url wins", settings: `{"webSearch": {"backend": "searxng", "url": "https://a.example"}}`, env: with(anthropicKey, "CADRE_SEARXNG_URL", "https://b.example"), want: "searxng", url: "https://b.example"},
		{name: "settings url alone picks searxng", settings: `{"webSearch": {"url": "https://a.example"}}`, env: openai, want: "searxng", url: "https://a.example"},
		{name: "none turns it off", settings: `{"webSearch": {"backend": "none"}}`, env: anthropicKey, want: ""},
		{name: "searxng without url", settings: `{"webSearch": {"backend": "searxng"}}`, env: anthropicKey, want: "", warn: "needs the instance's URL"},
		{name: "brave without key", settings: `{"webSearch": {"backend": "brave"}}`, env: anthropicKey, want: "", warn: "BRAVE_SEARCH_API_KEY"},
		{name: "anthropic with openai", settings: `{"webSearch": {"backend": "anthropic"}}`, env: openai, want: "", warn: "needs the anthropic provider"},
		{name: "bad environment url", env: with(openai, "CADRE_SEARXNG_URL", "localhost:8888"), want: "", warn: "not an http(s) URL"},
		{name: "unknown backend", settings: `{"webSearch": {"backend": "google"}}`, env: anthropicKey, err: `webSearch.backend "google"`},
		{name: "unknown key", settings: `{"webSearch": {"apiKey": "x"}}`, env: anthropicKey, err: "unknown field"},
		{name: "bad url", settings: `{"webSearch": {"url": "ftp://x"}}`, env: anthropicKey, err: "not an http(s) URL"},
		{name: "bad maxResults", settings: `{"webSearch": {"maxResults": 0}}`, env: anthropicKey, err: "maxResults must be 1 or more"},
		{name: "small model from the environment", settings: `{"smallModel": "sonnet"}`, env: with(anthropicKey, "CADRE_SMALL_MODEL", "opus"), want: "anthropic"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"CWD/.keep": ""}
			if c.settings != "" {
				files["CWD/.cadre/settings.json"] = c.settings
			}
			cfg, diags, err, _ := loadIn(t, files, c.env, Options{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v, want one about %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, url := "", ""
			switch s := cfg.WebSearch.(type) {
			case *builtin.AnthropicSearch:
				got = "anthropic"
				if s.Model != cfg.Model || s.ModelID != cfg.ModelID {
					t.Errorf("anthropic search on %v %s, want the session's model", s.Model, s.ModelID)
				}
			case *builtin.SearXNG:
				got, url = "searxng", s.BaseURL
			case *builtin.Brave:
				got = "brave"
				if s.APIKey != "bk" {
					t.Errorf("brave key %q", s.APIKey)
				}
			case nil:
			default:
				t.Fatalf("backend %T", s)
			}
			if got != c.want || url != c.url {
				t.Errorf("backend %q %q, want %q %q", got, url, c.want, c.url)
			}
			var warns []string
			for _, d := range diags {
				if d.Topic == TopicSettings {
					warns = append(warns, d.Message)
				}
			}
			if c.warn == "" && len(warns) > 0 || c.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], c.warn)) {
				t.Errorf("warnings %q, want %q", warns, c.warn)
			}
			if c.env["CADRE_SMALL_MODEL"] != "" && cfg.SmallModel != c.env["CADRE_SMALL_MODEL"] {
				t.Errorf("SmallModel %q", cfg.SmallModel)
			}
		})
	}
}

// TestLoadSkills: user and project skills reach Config.Skills with the
// project's winning, and a broken SKILL.md is a skills diagnostic.
func TestLoadSkills(t *testing.T) {
	t.Parallel()
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nDo it.\n"
	}
	cfg, diags, err, tr := loadIn(t, map[string]string{
		"HOME/.claude/skills/pdf/SKILL.md":  skill("pdf", "User pdf skill."),
		"HOME/.claude/skills/only/SKILL.md": skill("only", "Only in the user's directory."),
		"CWD/.claude/skills/pdf/SKILL.md":   skill("pdf", "Project pdf skill."),
		"CWD/.cadre/skills/broken/SKILL.md": "no frontmatter\n",
	}, anthropicKey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Skills.Active() {
		names = append(names, s.Name+"="+s.Description)
	}
	if got := strings.Join(names, ","); got != "only=Only in the user's directory.,pdf=Project pdf skill." {
		t.Errorf("skills %s", got)
	}
	found := false
	for _, d := range diags {
		if d.Topic == TopicSkills && strings.Contains(d.File, "broken") && d.Severity == SeverityError {
			found = true
		}
	}
	if !found {
		t.Errorf("no diagnostic for the broken skill in %v (home %s)", diags, tr.home)
	}
}
