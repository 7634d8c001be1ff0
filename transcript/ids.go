package transcript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// isUUID reports whether id is a UUID as 8-4-4-4-12 hexadecimal digits:
// google/uuid's check, held to its plain 36-character form (it also
// accepts braces, a urn:uuid: prefix and no hyphens, which a file name
// should not carry).
func isUUID(id string) bool { return len(id) == 36 && uuid.Validate(id) == nil }

// isAgentID reports whether id is 1 to 128 letters, digits, '-' or '_'.
func isAgentID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ErrBadID is wrapped by the checks below: an id that is not one, which
// could otherwise turn a file name into a path elsewhere.
var ErrBadID = errors.New("invalid id")

// ValidateSessionID accepts a session id in the form Claude Code uses and
// cadre generates: a UUID as 8-4-4-4-12 hexadecimal digits. A session id
// names files, so nothing else is let through (S-10.4).
func ValidateSessionID(id string) error {
	if !isUUID(id) {
		return fmt.Errorf("%w: session id %q is not a UUID (like 123e4567-e89b-42d3-a456-426614174000)", ErrBadID, truncate(id))
	}
	return nil
}

// ValidateAgentID accepts an agent id: letters, digits, '-' and '_', at
// most 128 of them (cadre's are "a" and 16 hexadecimal digits).
func ValidateAgentID(id string) error {
	if !isAgentID(id) {
		return fmt.Errorf("%w: agent id %q may hold only letters, digits, '-' and '_'", ErrBadID, truncate(id))
	}
	return nil
}

// SessionFile is SessionPath for a validated session id, checked to stay
// inside stateDir.
func SessionFile(stateDir, projectDir, sessionID string) (string, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return "", err
	}
	return within(stateDir, SessionPath(stateDir, projectDir, sessionID))
}

// AgentFile is AgentPath for validated ids, checked to stay inside
// stateDir.
func AgentFile(stateDir, projectDir, sessionID, agentID string) (string, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return "", err
	}
	if err := ValidateAgentID(agentID); err != nil {
		return "", err
	}
	return within(stateDir, AgentPath(stateDir, projectDir, sessionID, agentID))
}

// SessionExists reports whether the session already left files for the
// project: its transcript or its sub-agents' directory. A run that is not
// a resume must not add to them. path names what was found.
func SessionExists(stateDir, projectDir, sessionID string) (path string, exists bool, err error) {
	main, err := SessionFile(stateDir, projectDir, sessionID)
	if err != nil {
		return "", false, err
	}
	for _, p := range []string{main, strings.TrimSuffix(main, ".jsonl")} {
		if _, err := os.Lstat(p); err == nil {
			return p, true, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", false, fmt.Errorf("check session %s: %w", sessionID, err)
		}
	}
	return "", false, nil
}

// within returns p when, cleaned, it is inside root, and an error
// otherwise.
func within(root, p string) (string, error) {
	root, p = filepath.Clean(root), filepath.Clean(p)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %s is not inside %s", ErrBadID, p, root)
	}
	return p, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
