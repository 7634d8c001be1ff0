package proclife

import (
	"syscall"
	"unsafe"
)

// prGetChildSubreaper is PR_GET_CHILD_SUBREAPER from <linux/prctl.h>.
const prGetChildSubreaper = 37

// isSubreaper reports whether this process is a child subreaper (Adopt).
func isSubreaper() bool {
	var v int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&v)), 0)
	return errno == 0 && v != 0
}
