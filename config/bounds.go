package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds are the limits that keep a model request from hanging, from the
// environment (0: the adapter's default).
type Bounds struct {
	// Header bounds the wait for response headers; Idle a silence in the
	// stream; MaxRetryAfter the retry-after honoured; Budget the waits
	// between the attempts of one request.
	Header, Idle, MaxRetryAfter, Budget time.Duration
}

// BoundsFromEnv reads CADRE_HEADER_TIMEOUT_MS, CADRE_STREAM_IDLE_TIMEOUT_MS,
// CADRE_MAX_RETRY_AFTER_MS and CADRE_RETRY_BUDGET_MS.
func BoundsFromEnv(getenv func(string) string) (Bounds, error) {
	var b Bounds
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{
		{"CADRE_HEADER_TIMEOUT_MS", &b.Header},
		{"CADRE_STREAM_IDLE_TIMEOUT_MS", &b.Idle},
		{"CADRE_MAX_RETRY_AFTER_MS", &b.MaxRetryAfter},
		{"CADRE_RETRY_BUDGET_MS", &b.Budget},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 || ms > int64(24*time.Hour/time.Millisecond) {
			return Bounds{}, fmt.Errorf("%s=%q: want a number of milliseconds between 1 and 86400000", v.name, s)
		}
		*v.dst = time.Duration(ms) * time.Millisecond
	}
	return b, nil
}
