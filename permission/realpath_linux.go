//go:build linux

package permission

import (
	"bytes"
	"strconv"
	"syscall"
)

// oPath is Linux's O_PATH: a descriptor that names a file without opening
// it for reading (no read permission needed, a FIFO or a device is not
// opened). Its value is the same on every architecture Go supports.
const oPath = 0x200000

// realPath is filepath.EvalSymlinks of an existing absolute p as the
// kernel resolves it: the path /proc/self/fd shows for a descriptor of p.
// Three system calls and two allocations, against an lstat and several
// allocations per component (a Read's permission check resolves its file
// every call). ok is false when p cannot be opened (it does not exist, a
// dangling or looping link: evalExisting's walk decides those) or the
// answer is not a plain absolute path (no /proc, a file deleted meanwhile).
func realPath(p string) (string, bool) {
	fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer syscall.Close(fd)
	var small [256]byte
	buf := small[:]
	for {
		n, err := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
		if err != nil || n <= 0 {
			return "", false
		}
		if n == len(buf) {
			if len(buf) >= 1<<16 {
				return "", false
			}
			buf = make([]byte, 4*len(buf)) // the answer may have been cut
			continue
		}
		r := buf[:n]
		if r[0] != '/' || bytes.HasSuffix(r, []byte(" (deleted)")) {
			return "", false
		}
		return string(r), true
	}
}
