//go:build !unix

package agentdef

import (
	"fmt"
	"os"
)

// readSmall reads a file; tooBig reports a file over MaxFileSize.
func readSmall(path string, _ []byte) (data []byte, tooBig bool, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, true, nil
	}
	return data, false, nil
}
