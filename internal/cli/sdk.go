package cli

import (
	"context"
	"errors"
)

// runSDK serves the Claude Agent SDK protocol on stdin and stdout.
func runSDK(ctx context.Context, p procIO, sigs *signals, o *options) error {
	return &exitError{ExitUsage, errors.New("not yet")}
}
