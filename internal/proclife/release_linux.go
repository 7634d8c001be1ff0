package proclife

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// releaseFilePages drops from this process's resident set the pages it
// maps read-only from its own executable: the reaper is cadre's binary
// re-executed, and its start-up faulted in megabytes of code and
// read-only data that its small loop never touches again. Those pages are
// clean copies of the file, so the kernel reads back what is touched
// later. Only pages that are the file's bytes unchanged are dropped: code
// always, read-only data only in a position-dependent executable (in a
// position-independent one the loader may have relocated it in place
// before making it read-only); writable mappings and shared libraries are
// left alone. It returns how many bytes it asked the kernel to drop.
func releaseFilePages() int {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	fixed := positionDependent(exe)
	released := 0
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := bytes.Fields(sc.Bytes())
		if len(f) != 6 || len(f[1]) < 3 || string(f[5]) != exe || f[1][1] == 'w' || (f[1][2] != 'x' && !fixed) {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
		if errno == 0 {
			released += int(end - start)
		}
	}
	return released
}

// positionDependent reports whether the ELF file at path is an executable
// loaded at a fixed address (type ET_EXEC), whose mapped bytes no loader
// relocates.
func positionDependent(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [18]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:4]) != "\x7fELF" || h[5] != 1 {
		return false // not a little-endian ELF file: assume the worst
	}
	return h[16] == 2 && h[17] == 0 // e_type == ET_EXEC
}
