package proclife

import "syscall"

// SetParentDeathSignal has the kernel kill the process a starts when
// cadre dies, even by kill -9 (what that process starts in turn is not
// covered: only the Bash sandbox's PID namespace promises that).
func SetParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
