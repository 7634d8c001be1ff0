package builtin

import "syscall"

// setParentDeathSignal has the kernel kill the process when cadre dies,
// even by kill -9.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
