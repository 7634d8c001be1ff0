package config

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/engine/executor"
)

func loadRemote(t *testing.T, files map[string]string, trust bool) (*Settings, tree, []Diagnostic, error) {
	t.Helper()
	tr := newTree(t, files)
	s, diags, err := LoadSettings(SettingsOptions{Cwd: tr.cwd, Home: tr.home, ManagedDir: tr.managed, TrustProject: trust,
		ClaudeManagedDir: filepath.Join(tr.managed, "claude-code")})
	return s, tr, diags, err
}

// remote.temporal resolves with its defaults, TLS paths relative to the
// file and the API key from the variable apiKeyEnv names; a higher file
// overrides single keys.
func TestRemoteTemporalSettings(t *testing.T) {
	t.Parallel()
	s, tr, _, err := loadRemote(t, map[string]string{
		"HOME/.config/cadre/settings.json": `{"remote": {"temporal": {"address": "temporal.internal:7233", "namespace": "agents",
			"tls": {"certFile": "certs/client.pem", "keyFile": "~/keys/client.key", "serverName": "temporal.internal"}, "apiKeyEnv": "TEMPORAL_API_KEY"}}}`,
		"CWD/.cadre/settings.json": `{"remote": {"temporal": {"taskQueue": "refactor"}}}`,
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := s.Temporal(envOf(map[string]string{"TEMPORAL_API_KEY": "sekrit"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Temporal{Address: "temporal.internal:7233", Namespace: "agents", TaskQueue: "refactor", APIKey: "sekrit",
		TLS: &TemporalTLS{CertFile: filepath.Join(tr.home, ".config/cadre/certs/client.pem"), KeyFile: filepath.Join(tr.home, "keys/client.key"), ServerName: "temporal.internal"}}
	if tc == nil || tc.Address != want.Address || tc.Namespace != want.Namespace || tc.TaskQueue != want.TaskQueue || tc.APIKey != want.APIKey ||
		tc.TLS == nil || *tc.TLS != *want.TLS {
		t.Fatalf("temporal %+v (tls %+v), want %+v (tls %+v)", tc, tc.TLS, want, want.TLS)
	}
	if _, err := s.Temporal(envOf(nil)); err == nil || !strings.Contains(err.Error(), "TEMPORAL_API_KEY") {
		t.Fatalf("an unset apiKeyEnv variable: %v", err)
	}
	none, _, _, err := loadRemote(t, map[string]string{"CWD/.cadre/settings.json": `{"model": "haiku"}`}, true)
	if err != nil {
		t.Fatal(err)
	}
	if tc, err := none.Temporal(envOf(nil)); tc != nil || err != nil {
		t.Fatalf("no remote settings: %+v, %v", tc, err)
	}
	defaults, _, _, err := loadRemote(t, map[string]string{"CWD/.cadre/settings.json": `{"remote": {"temporal": {"address": "127.0.0.1:7233"}}}`}, true)
	if err != nil {
		t.Fatal(err)
	}
	if tc, err := defaults.Temporal(envOf(nil)); err != nil || tc.Namespace != "default" || tc.TaskQueue != "cadre" || tc.TLS != nil {
		t.Fatalf("defaults: %+v, %v", tc, err)
	}
}

// Bad remote settings are errors naming the key.
func TestRemoteTemporalSettingsErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ json, want string }{
		{`{"remote": {"temporal": {"address": "no-port"}}}`, "remote.temporal.address"},
		{`{"remote": {"temporal": {"address": "h:99999"}}}`, "no port between"},
		{`{"remote": {"temporal": {"address": "h:7233", "taskQueue": " "}}}`, "remote.temporal.taskQueue"},
		{`{"remote": {"temporal": {"address": "h:7233", "apiKey": "k", "apiKeyEnv": "K"}}}`, "exclude each other"},
		{`{"remote": {"temporal": {"address": "h:7233", "apiKeyEnv": "1BAD"}}}`, "not an environment variable name"},
		{`{"remote": {"temporal": {"adress": "h:7233"}}}`, "adress"},
		{`{"remote": {"nats": {}}}`, "nats"},
	} {
		_, _, _, err := loadRemote(t, map[string]string{"CWD/.cadre/settings.json": c.json}, true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.json, err, c.want)
		}
	}
	for _, c := range []struct{ json, want string }{
		{`{"remote": {"temporal": {"address": "h:7233", "tls": {"certFile": "c.pem"}}}}`, "both certFile and keyFile"},
		{`{"remote": {"temporal": {"namespace": "n"}}}`, "no address"},
	} {
		s, _, _, err := loadRemote(t, map[string]string{"CWD/.cadre/settings.json": c.json}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Temporal(envOf(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.json, err, c.want)
		}
	}
}

// An untrusted workspace cannot point remote agents at a server of its
// choosing: its remote object is ignored, with a trust warning.
func TestRemoteSettingsNeedATrustedWorkspace(t *testing.T) {
	t.Parallel()
	s, _, diags, err := loadRemote(t, map[string]string{"CWD/.cadre/settings.json": `{"remote": {"temporal": {"address": "attacker.invalid:7233"}}}`}, false)
	if err != nil {
		t.Fatal(err)
	}
	if tc, _ := s.Temporal(envOf(nil)); tc != nil {
		t.Fatalf("an untrusted workspace set the Temporal server: %+v", tc)
	}
	warned := false
	for _, d := range diags {
		warned = warned || (d.Topic == TopicTrust && strings.Contains(d.Message, "remote"))
	}
	if !warned {
		t.Fatalf("no trust warning: %v", diags)
	}
}

// --remote makes every spawn remote, and needs remote.temporal.
func TestRemoteFlag(t *testing.T) {
	t.Parallel()
	_, _, err, _ := loadIn(t, nil, map[string]string{"ANTHROPIC_API_KEY": "k"}, Options{Remote: true})
	if err == nil || !strings.Contains(err.Error(), "remote.temporal.address") {
		t.Fatalf("--remote without settings: %v", err)
	}
	cfg, _, err, _ := loadIn(t, map[string]string{"HOME/.config/cadre/settings.json": `{"remote": {"temporal": {"address": "127.0.0.1:7233"}}}`}, map[string]string{"ANTHROPIC_API_KEY": "k"}, Options{Remote: true})
	if err != nil || !cfg.Remote.All {
		t.Fatalf("--remote with settings: All %v, %v", cfg.Remote.All, err)
	}
}

// With remote.temporal set, Load asks NewRemote for the executor with the
// resolved connection; the bridge flags carry it, the API key in the
// environment only.
func TestLoadMakesTheRemoteExecutor(t *testing.T) {
	t.Parallel()
	var got *Temporal
	opts := Options{NewRemote: func(tc *Temporal) (cadre.RemoteExecutor, error) { got = tc; return nopRemote{}, nil }}
	cfg, _, err, _ := loadIn(t, map[string]string{"HOME/.config/cadre/settings.json": `{"remote": {"temporal": {"address": "127.0.0.1:7233", "apiKeyEnv": "TK", "tls": {"serverName": "s"}}}}`},
		map[string]string{"ANTHROPIC_API_KEY": "k", "TK": "sekrit"}, opts)
	if err != nil || got == nil || cfg.Remote.Executor == nil || cfg.Remote.All {
		t.Fatalf("executor %v, temporal %+v, all %v, %v", cfg.Remote.Executor, got, cfg.Remote.All, err)
	}
	args, env := got.BridgeFlags()
	want := []string{"--address", "127.0.0.1:7233", "--namespace", "default", "--task-queue", "cadre", "--tls", "--tls-server-name", "s"}
	if !slices.Equal(args, want) || !slices.Equal(env, []string{"TEMPORAL_API_KEY=sekrit"}) || slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "sekrit") }) {
		t.Fatalf("flags %q env %q", args, env)
	}
	// No settings: no executor; a broken setting not asked for: a warning.
	cfg, _, err, _ = loadIn(t, nil, map[string]string{"ANTHROPIC_API_KEY": "k"}, opts)
	if err != nil || cfg.Remote.Executor != nil {
		t.Fatalf("without settings: %v, %v", cfg.Remote.Executor, err)
	}
	_, diags, err, _ := loadIn(t, map[string]string{"HOME/.config/cadre/settings.json": `{"remote": {"temporal": {"address": "h:1", "apiKeyEnv": "UNSET_KEY"}}}`},
		map[string]string{"ANTHROPIC_API_KEY": "k"}, opts)
	if err != nil || !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Message, "UNSET_KEY") }) {
		t.Fatalf("broken settings: %v, %v", diags, err)
	}
}

// nopRemote is a remote executor that starts nothing.
type nopRemote struct{}

func (nopRemote) Start(context.Context, executor.SpawnRequest) (executor.Handle, error) {
	return nil, errors.New("nothing starts here")
}
