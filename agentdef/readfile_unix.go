//go:build unix

package agentdef

import (
	"fmt"
	"syscall"
)

// readSmall reads a file into buf (growing it as needed) with plain
// system calls: open, read until EOF, close. os.ReadFile also stats the
// file and registers it with the poller, which for hundreds of small
// agent files costs more than the parsing. tooBig reports a file over
// MaxFileSize, which is not read to the end.
func readSmall(path string, buf []byte) (data []byte, tooBig bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	data = buf[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", path, err)
		}
		if n == 0 {
			return data, false, nil
		}
		data = data[:len(data)+n]
		if len(data) > MaxFileSize {
			return nil, true, nil
		}
	}
}
