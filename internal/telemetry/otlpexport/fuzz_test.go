package otlpexport

import (
	"encoding/json"
	"testing"
)

// FuzzParseHeaders: any OTEL_EXPORTER_OTLP_HEADERS value is parsed or
// refused, never a panic; what is parsed has non-empty keys.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"", "a=b", "a=b,c=d%20e", "novalue", "=x", "a=%zz", ",,a=b,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := map[string]string{}
		if err := parseHeaders(s, m); err != nil {
			return
		}
		for k := range m {
			if k == "" {
				t.Fatalf("%q gave an empty key", s)
			}
		}
	})
}

// FuzzAnswer: any answer body a receiver sends (an Export response, a
// gRPC frame, an error status) is read without a panic.
func FuzzAnswer(f *testing.F) {
	for _, b := range [][]byte{nil, {0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, 'x'}, {0, 0, 0, 0, 2, 0x0a, 0}, {0x0a, 0xff}, []byte(`{"partialSuccess":{"rejectedSpans":"3"}}`)} {
		f.Add(b)
	}
	c := &client{cfg: Config{Signal: Traces}}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = c.partial("application/x-protobuf", b)
		_ = c.partial("application/json", b)
		_ = statusMessage("application/x-protobuf", b)
		_ = statusMessage("application/json", b)
		_, _ = unframe(b, "")
		_, _ = unframe(b, "gzip")
	})
}

// FuzzJSONString: appendJSONString always writes a valid JSON string
// that decodes to the input (invalid UTF-8 replaced).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c\n\t\x00\x1f", "é\u2028", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var want string
		b, _ := json.Marshal(s)
		_ = json.Unmarshal(b, &want)
		if got != want {
			t.Fatalf("%q decoded to %q, want %q", s, got, want)
		}
	})
}
