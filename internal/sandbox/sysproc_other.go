//go:build !linux

package sandbox

import "syscall"

// sysProcAttr puts bwrap in a process group of its own (bubblewrap runs
// only on Linux; New fails elsewhere).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
