//go:build !linux

package proclife

import "errors"

// Adopt is Linux-only: elsewhere orphans go to init, and EndDescendants
// reaches only what is still below cadre.
func Adopt() error { return errors.New("become child subreaper: only on Linux") }
