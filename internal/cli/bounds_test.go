package cli

import (
	"strings"
	"testing"
	"time"
)

func TestBoundsFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want modelBounds
		err  string
	}{
		{nil, modelBounds{}, ""},
		{map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": "300", "CADRE_HEADER_TIMEOUT_MS": " 1500 "}, modelBounds{header: 1500 * time.Millisecond, idle: 300 * time.Millisecond}, ""},
		{map[string]string{"CADRE_MAX_RETRY_AFTER_MS": "600000", "CADRE_RETRY_BUDGET_MS": "1"}, modelBounds{maxRetryAfter: 10 * time.Minute, budget: time.Millisecond}, ""},
		{map[string]string{"CADRE_RETRY_BUDGET_MS": "0"}, modelBounds{}, "CADRE_RETRY_BUDGET_MS"},
		{map[string]string{"CADRE_HEADER_TIMEOUT_MS": "5s"}, modelBounds{}, "milliseconds"},
		{map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": "99999999999"}, modelBounds{}, "86400000"},
	}
	for _, tt := range tests {
		got, err := boundsFromEnv(func(k string) string { return tt.env[k] })
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%v: err %v, want one mentioning %q", tt.env, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%v: %+v %v, want %+v", tt.env, got, err, tt.want)
		}
	}
}
