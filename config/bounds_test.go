package config

import (
	"strings"
	"testing"
	"time"
)

func TestBoundsFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want Bounds
		err  string
	}{
		{nil, Bounds{}, ""},
		{map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": "300", "CADRE_HEADER_TIMEOUT_MS": " 1500 "}, Bounds{Header: 1500 * time.Millisecond, Idle: 300 * time.Millisecond}, ""},
		{map[string]string{"CADRE_MAX_RETRY_AFTER_MS": "600000", "CADRE_RETRY_BUDGET_MS": "1"}, Bounds{MaxRetryAfter: 10 * time.Minute, Budget: time.Millisecond}, ""},
		{map[string]string{"CADRE_RETRY_BUDGET_MS": "0"}, Bounds{}, "CADRE_RETRY_BUDGET_MS"},
		{map[string]string{"CADRE_HEADER_TIMEOUT_MS": "5s"}, Bounds{}, "milliseconds"},
		{map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": "99999999999"}, Bounds{}, "86400000"},
	}
	for _, tt := range tests {
		got, err := BoundsFromEnv(func(k string) string { return tt.env[k] })
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%v: err %v, want one mentioning %q", tt.env, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%v: %+v %v, want %+v", tt.env, got, err, tt.want)
		}
	}
}
