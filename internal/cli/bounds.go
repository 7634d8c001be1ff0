package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// modelBounds are the limits that keep a model request from hanging, from
// the environment (0: the adapter's default).
type modelBounds struct {
	header, idle, maxRetryAfter, budget time.Duration
}

// boundsFromEnv reads CADRE_HEADER_TIMEOUT_MS, CADRE_STREAM_IDLE_TIMEOUT_MS,
// CADRE_MAX_RETRY_AFTER_MS and CADRE_RETRY_BUDGET_MS.
func boundsFromEnv(getenv func(string) string) (modelBounds, error) {
	var b modelBounds
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{
		{"CADRE_HEADER_TIMEOUT_MS", &b.header},
		{"CADRE_STREAM_IDLE_TIMEOUT_MS", &b.idle},
		{"CADRE_MAX_RETRY_AFTER_MS", &b.maxRetryAfter},
		{"CADRE_RETRY_BUDGET_MS", &b.budget},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 || ms > int64(24*time.Hour/time.Millisecond) {
			return modelBounds{}, fmt.Errorf("%s=%q: want a number of milliseconds between 1 and 86400000", v.name, s)
		}
		*v.dst = time.Duration(ms) * time.Millisecond
	}
	return b, nil
}
