//go:build !unix

package agentdef

import "time"

func processCPU() time.Duration { return 0 }
