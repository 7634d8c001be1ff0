package tool

import (
	"encoding/json"
	"testing"
)

var lenientSeeds = []string{`"/a/b.txt"`, `"é😀"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"\xff\"", "\"a\tb\"", `""`, `"`, `1`, `null`, `["x"]`, `{"a":"b"}`, `"/x/"`}

// checkLenient fails when LenientString decodes b other than json.Unmarshal
// into a string does (kept when it decodes, empty otherwise).
func checkLenient(t *testing.T, b []byte) {
	var want string
	if json.Unmarshal(b, &want) != nil {
		want = ""
	}
	var got LenientString
	if err := got.UnmarshalJSON(b); err != nil || string(got) != want {
		t.Fatalf("%q: %q %v, want %q", b, got, err, want)
	}
}

// TestLenientStringAsUnmarshal: a plain string's bytes are taken as they
// are, anything else as json.Unmarshal reads it.
func TestLenientStringAsUnmarshal(t *testing.T) {
	for _, s := range lenientSeeds {
		checkLenient(t, []byte(s))
	}
}

// FuzzLenientString: whatever the value, LenientString agrees with
// json.Unmarshal.
func FuzzLenientString(f *testing.F) {
	for _, s := range lenientSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkLenient)
}
