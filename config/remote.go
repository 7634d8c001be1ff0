package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre"
)

// Remote agents' settings (issue 26, S-9.2): the Temporal server that
// carries agents to `cadre worker` processes, read by the launcher
// (`isolation: remote`, --remote) and by `cadre worker` alike.
//
//	{"remote": {"temporal": {"address": "temporal.internal:7233", "namespace": "agents",
//	  "taskQueue": "cadre", "tls": {"certFile": "client.pem", "keyFile": "client.key",
//	  "caFile": "ca.pem", "serverName": "temporal.internal"}, "apiKeyEnv": "TEMPORAL_API_KEY"}}}
//
// address is host:port; namespace defaults to "default" and taskQueue to
// "cadre". tls file paths are relative to the settings file's directory
// (or start with ~/); with any tls key set the connection uses TLS.
// apiKey (a Temporal Cloud API key) is better given as apiKeyEnv, the
// name of the environment variable holding it, so that no key sits in a
// file; the two exclude each other. The whole object widens a run (it
// sends agents' prompts to a server of its choosing), so a workspace's
// own file sets it only in a trusted workspace.

// Defaults of remote.temporal.
const (
	DefaultTemporalNamespace = "default"
	DefaultTemporalTaskQueue = "cadre"
)

// RemoteSettings is the merged remote object; a higher file overrides
// single keys.
type RemoteSettings struct {
	Temporal TemporalSettings
}

// TemporalSettings is remote.temporal as the files set it.
type TemporalSettings struct {
	Address, Namespace, TaskQueue Value
	// TLS file paths are absolute.
	CertFile, KeyFile, CAFile, ServerName Value
	APIKey, APIKeyEnv                     Value
}

// remoteData is the JSON shape of one file's remote object.
type remoteData struct {
	Temporal *struct {
		Address   *string `json:"address"`
		Namespace *string `json:"namespace"`
		TaskQueue *string `json:"taskQueue"`
		TLS       *struct {
			CertFile   *string `json:"certFile"`
			KeyFile    *string `json:"keyFile"`
			CAFile     *string `json:"caFile"`
			ServerName *string `json:"serverName"`
		} `json:"tls"`
		APIKey    *string `json:"apiKey"`
		APIKeyEnv *string `json:"apiKeyEnv"`
	} `json:"temporal"`
}

const remoteKeysHelp = "keys: temporal.address, temporal.namespace, temporal.taskQueue, temporal.tls.certFile, temporal.tls.keyFile, temporal.tls.caFile, temporal.tls.serverName, temporal.apiKey, temporal.apiKeyEnv"

// applyRemote merges a file's remote object (already gated by workspace
// trust). Relative TLS paths are taken from dir, the file's directory.
func (s *Settings) applyRemote(raw json.RawMessage, path, dir, home string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var rd remoteData
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd); err != nil {
		return fmt.Errorf("%w: %s: remote: %v (%s)", ErrMalformed, path, err, remoteKeysHelp)
	}
	t := rd.Temporal
	if t == nil {
		return nil
	}
	cur := &s.Remote.Temporal
	bad := func(key, v, why string) error {
		return fmt.Errorf("%w: %s: remote.temporal.%s %s %s", ErrMalformed, path, key, strconv.Quote(v), why)
	}
	set := func(dst *Value, v *string) {
		if v != nil {
			*dst = Value{Value: strings.TrimSpace(*v), Source: path}
		}
	}
	if t.Address != nil {
		host, port, err := net.SplitHostPort(strings.TrimSpace(*t.Address))
		if err != nil || host == "" {
			return bad("address", *t.Address, "is not host:port (for example 127.0.0.1:7233)")
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("address", *t.Address, "has no port between 1 and 65535")
		}
	}
	for key, v := range map[string]*string{"namespace": t.Namespace, "taskQueue": t.TaskQueue} {
		if v != nil && strings.TrimSpace(*v) == "" {
			return bad(key, *v, "is empty")
		}
	}
	set(&cur.Address, t.Address)
	set(&cur.Namespace, t.Namespace)
	set(&cur.TaskQueue, t.TaskQueue)
	if tls := t.TLS; tls != nil {
		file := func(key string, dst *Value, v *string) error {
			if v == nil {
				return nil
			}
			p := expandHome(strings.TrimSpace(*v), home)
			if p == "" {
				return bad("tls."+key, *v, "is empty")
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			*dst = Value{Value: filepath.Clean(p), Source: path}
			return nil
		}
		if err := file("certFile", &cur.CertFile, tls.CertFile); err != nil {
			return err
		}
		if err := file("keyFile", &cur.KeyFile, tls.KeyFile); err != nil {
			return err
		}
		if err := file("caFile", &cur.CAFile, tls.CAFile); err != nil {
			return err
		}
		set(&cur.ServerName, tls.ServerName)
	}
	if t.APIKeyEnv != nil && !validEnvName(strings.TrimSpace(*t.APIKeyEnv)) {
		return bad("apiKeyEnv", *t.APIKeyEnv, "is not an environment variable name")
	}
	if t.APIKey != nil {
		cur.APIKey, cur.APIKeyEnv = Value{Value: *t.APIKey, Source: path}, Value{}
	}
	if t.APIKeyEnv != nil {
		cur.APIKeyEnv, cur.APIKey = Value{Value: strings.TrimSpace(*t.APIKeyEnv), Source: path}, Value{}
	}
	if t.APIKey != nil && t.APIKeyEnv != nil {
		return fmt.Errorf("%w: %s: remote.temporal.apiKey and apiKeyEnv exclude each other: give the variable's name (apiKeyEnv)", ErrMalformed, path)
	}
	return nil
}

// validEnvName reports whether s is a usable environment variable name.
func validEnvName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// Temporal is the connection to the Temporal server remote agents travel
// through, resolved from remote.temporal and the environment.
type Temporal struct {
	// Address is host:port; Namespace and TaskQueue have their defaults
	// filled in.
	Address, Namespace, TaskQueue string
	// TLS is set when any tls key is: the client certificate and key (both
	// or neither), the CA bundle and the server name to verify.
	TLS *TemporalTLS
	// APIKey is the API key (from apiKey, or the variable apiKeyEnv names).
	APIKey string
}

// TemporalTLS is remote.temporal.tls with absolute paths.
type TemporalTLS struct {
	CertFile, KeyFile, CAFile, ServerName string
}

// Temporal resolves remote.temporal: nil when no file sets an address.
// An incomplete setting (a certificate without its key, apiKeyEnv naming
// an unset variable) is an error naming the key and the file.
func (s *Settings) Temporal(getenv func(string) string) (*Temporal, error) {
	ts := s.Remote.Temporal
	if ts.Address.Value == "" {
		for _, v := range []Value{ts.Namespace, ts.TaskQueue, ts.CertFile, ts.KeyFile, ts.CAFile, ts.ServerName, ts.APIKey, ts.APIKeyEnv} {
			if v.Value != "" {
				return nil, fmt.Errorf("%s: remote.temporal has no address (host:port of the Temporal server)", v.Source)
			}
		}
		return nil, nil
	}
	t := &Temporal{Address: ts.Address.Value, Namespace: cmp.Or(ts.Namespace.Value, DefaultTemporalNamespace),
		TaskQueue: cmp.Or(ts.TaskQueue.Value, DefaultTemporalTaskQueue), APIKey: ts.APIKey.Value}
	if (ts.CertFile.Value == "") != (ts.KeyFile.Value == "") {
		src := cmp.Or(ts.CertFile.Source, ts.KeyFile.Source)
		return nil, fmt.Errorf("%s: remote.temporal.tls needs both certFile and keyFile (a client certificate and its key), or neither", src)
	}
	if ts.CertFile.Value != "" || ts.CAFile.Value != "" || ts.ServerName.Value != "" {
		t.TLS = &TemporalTLS{CertFile: ts.CertFile.Value, KeyFile: ts.KeyFile.Value, CAFile: ts.CAFile.Value, ServerName: ts.ServerName.Value}
	}
	if name := ts.APIKeyEnv.Value; name != "" {
		if t.APIKey = getenv(name); t.APIKey == "" {
			return nil, fmt.Errorf("%s: remote.temporal.apiKeyEnv names %s, which is not set", ts.APIKeyEnv.Source, name)
		}
	}
	return t, nil
}

// remoteConfig sets cfg.Remote from remote.temporal and --remote: the
// executor when the settings name a server and opts can make one, and
// every spawn remote with --remote, which needs both.
func remoteConfig(cfg *cadre.Config, s *Settings, opts Options, getenv func(string) string) ([]Diagnostic, error) {
	tc, err := s.Temporal(getenv)
	if err != nil {
		if !opts.Remote {
			// Broken but not asked for: a warning, and a remote spawn is
			// refused saying how to configure it.
			return []Diagnostic{{Severity: SeverityWarning, Topic: TopicSettings, Message: err.Error() + "; remote agents are off"}}, nil
		}
		return nil, err
	}
	if tc != nil && opts.NewRemote != nil {
		if cfg.Remote.Executor, err = opts.NewRemote(tc); err != nil {
			return nil, fmt.Errorf("remote agents: %w", err)
		}
	}
	if !opts.Remote {
		return nil, nil
	}
	if tc == nil {
		return nil, errors.New("--remote needs the Temporal server remote agents run through: set remote.temporal.address in settings (see docs/remote.md)")
	}
	cfg.Remote.All = true
	return nil, nil
}

// BridgeFlags are the connection flags of `cadre-remote bridge` and
// `cadre-remote worker` for t; the API key is not among them (a flag
// shows in ps): it goes in the environment as TEMPORAL_API_KEY (env).
func (t *Temporal) BridgeFlags() (args, env []string) {
	args = []string{"--address", t.Address, "--namespace", t.Namespace, "--task-queue", t.TaskQueue}
	if tls := t.TLS; tls != nil {
		args = append(args, "--tls")
		for _, f := range []struct{ flag, v string }{{"--tls-cert", tls.CertFile}, {"--tls-key", tls.KeyFile}, {"--tls-ca", tls.CAFile}, {"--tls-server-name", tls.ServerName}} {
			if f.v != "" {
				args = append(args, f.flag, f.v)
			}
		}
	}
	if t.APIKey != "" {
		env = []string{"TEMPORAL_API_KEY=" + t.APIKey}
	}
	return args, env
}
