//go:build !linux

package builtin

import "syscall"

// setParentDeathSignal does nothing: only Linux has parent-death signals.
func setParentDeathSignal(*syscall.SysProcAttr) {}
