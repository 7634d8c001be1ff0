//go:build !linux

package proclife

// isSubreaper is false off Linux: orphans go to init there.
func isSubreaper() bool { return false }
