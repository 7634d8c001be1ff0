//go:build !linux

package tui

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
