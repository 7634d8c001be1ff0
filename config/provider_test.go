package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/permission"
)

func TestChooseProvider(t *testing.T) {
	t.Parallel()
	cases := []struct {
		setting string
		env     map[string]string
		want    Provider
		wantErr string
	}{
		{env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: Anthropic},
		{env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}, want: Anthropic},
		{env: map[string]string{"OPENAI_BASE_URL": "http://x"}, want: OpenAI},
		{env: map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, want: Anthropic},
		{setting: "openai", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: OpenAI},
		{setting: "openai", env: map[string]string{"CADRE_PROVIDER": "Anthropic"}, want: Anthropic},
		{wantErr: "no model provider configured"},
		{setting: "gemini", wantErr: `unknown provider "gemini"`},
	}
	for _, c := range cases {
		got, err := ChooseProvider(c.setting, envOf(c.env))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q %v: err %v, want %q", c.setting, c.env, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q %v: %s %v, want %s", c.setting, c.env, got, err, c.want)
		}
	}
}

func TestAliases(t *testing.T) {
	t.Parallel()
	a := Aliases{Provider: Anthropic, Settings: map[string]map[string]string{"anthropic": {"sonnet": "claude-sonnet-9"}, "openai": {"haiku": "x"}}}
	for model, want := range map[string]string{"": "claude-sonnet-9", "sonnet": "claude-sonnet-9", "opus": "claude-opus-4-1", "my-id": "my-id"} {
		if got := a.ModelID(model); got != want {
			t.Errorf("ModelID(%q) = %s, want %s", model, got, want)
		}
	}
	if _, ok := a.Resolve("my-id"); ok {
		t.Error("an id resolved as an alias")
	}
	o := Aliases{Provider: OpenAI}
	if got := o.ModelID("sonnet"); got != "sonnet" {
		t.Errorf("openai has no default aliases: %s", got)
	}
	if got := o.ModelID(""); got != "gpt-5" {
		t.Errorf("openai default %s", got)
	}
}

func TestNewModel(t *testing.T) {
	t.Parallel()
	if _, err := NewModel(Anthropic, envOf(map[string]string{"ANTHROPIC_API_KEY": "k"})); err != nil {
		t.Fatal(err)
	}
	if _, err := NewModel(OpenAI, envOf(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})); err != nil {
		t.Fatal(err)
	}
	if _, err := NewModel(Anthropic, envOf(nil)); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewModel("x", envOf(nil)); err == nil {
		t.Fatal("unknown provider accepted")
	}
}

func TestResolveMode(t *testing.T) {
	t.Parallel()
	disabled := &Settings{Permissions: Permissions{DisableBypass: true, DisableBypassSource: "/etc/cadre/managed-settings.json"}}
	withDefault := &Settings{Permissions: Permissions{DefaultMode: Value{Value: "acceptEdits"}}}
	cases := []struct {
		flag    string
		skip    bool
		s       *Settings
		want    permission.Mode
		wantErr string
	}{
		{want: permission.ModeDefault},
		{s: withDefault, want: permission.ModeAcceptEdits},
		{flag: "plan", s: withDefault, want: permission.ModePlan},
		{flag: "manual", want: permission.ModeDefault},
		{skip: true, want: permission.ModeBypassPermissions},
		{skip: true, flag: "bypassPermissions", want: permission.ModeBypassPermissions},
		{skip: true, flag: "plan", wantErr: "conflicts"},
		{skip: true, s: disabled, wantErr: "/etc/cadre/managed-settings.json"},
		{flag: "bypassPermissions", s: disabled, wantErr: "disabled by managed settings"},
		{flag: "yolo", wantErr: "valid:"},
		{flag: "bubble", wantErr: "internal"},
		{flag: "auto", wantErr: "not supported"},
	}
	for _, tc := range cases {
		got, err := ResolveMode(tc.flag, tc.skip, tc.s)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ResolveMode(%q, %v) err = %v, want %q", tc.flag, tc.skip, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveMode(%q, %v) = %s, %v; want %s", tc.flag, tc.skip, got, err, tc.want)
		}
	}
	if _, err := ResolveMode("", true, disabled); !errors.Is(err, ErrBypassDisabled) {
		t.Errorf("err = %v, want ErrBypassDisabled", err)
	}
}
