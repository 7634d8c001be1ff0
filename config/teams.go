package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cadre-dev/cadre"
)

// teamsFile is the teams key of a settings file: true/false, or an
// object {"enabled": bool, "shutdownGraceMs": n}.
type teamsFile struct {
	Enabled         *bool `json:"enabled"`
	ShutdownGraceMs *int  `json:"shutdownGraceMs"`
}

// mergeTeams merges a file's teams key (issue 25).
func (s *Settings) mergeTeams(path string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var on bool
	if json.Unmarshal(raw, &on) == nil {
		s.Teams = BoolValue{Value: on, Source: path}
		return nil
	}
	var tf teamsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		return fmt.Errorf("%w: %s: teams: want true, false or {\"enabled\": bool, \"shutdownGraceMs\": n}: %v", ErrMalformed, path, err)
	}
	if tf.Enabled != nil {
		s.Teams = BoolValue{Value: *tf.Enabled, Source: path}
	}
	if v := tf.ShutdownGraceMs; v != nil {
		if *v < 0 {
			return fmt.Errorf("%w: %s: teams.shutdownGraceMs must be 0 or more, not %d", ErrMalformed, path, *v)
		}
		s.TeamShutdownGraceMs = IntValue{Value: *v, Source: path}
	}
	return nil
}

// teams resolves agent teams: CADRE_AGENT_TEAMS over
// CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS over the teams setting; the
// shutdown grace period from CADRE_TEAM_SHUTDOWN_GRACE_MS over
// teams.shutdownGraceMs (0: the engine's default, 60 s).
func teams(getenv func(string) string, s Settings, cfg *cadre.Config) error {
	on, err := envBool(getenv, "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", s.Teams.Value)
	if err != nil {
		return err
	}
	if cfg.Teams, err = envBool(getenv, "CADRE_AGENT_TEAMS", on); err != nil {
		return err
	}
	ms := s.TeamShutdownGraceMs.Value
	if v := getenv("CADRE_TEAM_SHUTDOWN_GRACE_MS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("CADRE_TEAM_SHUTDOWN_GRACE_MS=%q: want milliseconds, 0 or more", v)
		}
		ms = n
	}
	cfg.TeamShutdownGrace = time.Duration(ms) * time.Millisecond
	return nil
}
