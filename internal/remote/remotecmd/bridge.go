package remotecmd

import (
	"errors"
	"io"
)

// bridge runs `cadre-remote bridge`.
func bridge(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("the bridge is not built yet")
}
