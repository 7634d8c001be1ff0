//go:build !linux

package proclife

import "syscall"

// SetParentDeathSignal does nothing: only Linux has parent-death signals.
func SetParentDeathSignal(*syscall.SysProcAttr) {}
