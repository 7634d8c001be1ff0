package sandbox

import "syscall"

// sysProcAttr puts bwrap in a process group of its own and has the kernel
// kill it should cadre die, even by kill -9.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
