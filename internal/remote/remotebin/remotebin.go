// Package remotebin finds cadre-remote, the companion binary that holds
// everything of Temporal (the cadre binary links none of it): first
// $CADRE_REMOTE_BIN, then beside the running executable, then on PATH.
package remotebin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Name is the companion binary's file name.
const Name = "cadre-remote"

// Build says how to build the binary, for error messages.
const Build = "go build -o \"$(dirname \"$(command -v cadre)\")/cadre-remote\" github.com/cadre-dev/cadre/cmd/cadre-remote (or set CADRE_REMOTE_BIN to its path)"

// Find returns the path of cadre-remote. getenv reads the environment
// (os.Getenv when nil).
func Find(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv("CADRE_REMOTE_BIN"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Errorf("CADRE_REMOTE_BIN=%s is not a file", p)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), Name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(Name); err == nil {
		return p, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("look for %s on PATH: %w", Name, err)
	}
	return "", fmt.Errorf("%s is not installed: remote agents on Temporal run in this companion binary, which is neither in $CADRE_REMOTE_BIN, beside cadre nor on PATH; build it with %s", Name, Build)
}
