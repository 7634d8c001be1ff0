package tool

import (
	"encoding/json"
	"reflect"
	"testing"
)

var decodeSeeds = []string{
	`{"path":"/a"}`,
	`{"path":"/a","offset":3,"tags":["x","y"],"on":true,"ratio":0.5,"any":{"k":[1,{"nope":2}]},"lenient":7}`,
	`{ "path" : "/a" , "offset" : 3 }`,
	`{"path":"/a","any":"}\"{,","tags":["],\\\"["]}`,
	`{"path":"/a","offset":"3"}`,
	`{"path":1}`,
	`{"path":null}`,
	`{}`,
	`{"Path":"/a"}`,
	`{"pa\u0074h":"/a"}`,
	`{"path":"/a","nope":1}`,
	`{"path":"/a","any":{"nope":1},"nope":[1]}`,
	`{"path":"/a","hidden":"x"}`,
	`{"path":"/a"} {"nope":1}`,
	`{"path":"/a"} trailing`,
	`{"path":"/a",}`,
	`{"path":}`,
	`{"path" "/a"}`,
	`[{"path":"/a"}]`,
	`null`,
	`{"path":"/a","tags":[1]}`,
	`{"path":"/a","on":tru}`,
	`{"path":"\ud83d\ude00 é"}`,
	"{\"path\":\"/a\"\n,\"offset\":-1e2}",
}

// checkDecodeInput fails when decodeInput (flat, known fields) and the
// strict decoder disagree on in: the error or the decoded value.
func checkDecodeInput(t *testing.T, in []byte) {
	rs := reflectSchema[flatIn]("flat")
	var fast, slow flatIn
	ef := decodeInput(in, &fast, rs.props, true)
	es := strictDecode(in, &slow)
	if (ef == nil) != (es == nil) || (ef != nil && ef.Error() != es.Error()) {
		t.Fatalf("%q: error %v, the strict decoder's %v", in, ef, es)
	}
	if es == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: decoded %+v, the strict decoder %+v", in, fast, slow)
	}
}

// TestDecodeInputAsTheStrictDecoder: decodeInput's error and value are the
// strict decoder's, on known and unknown fields, nested unknown fields
// inside values that hold any JSON, escaped keys, trailing data and
// malformed input.
func TestDecodeInputAsTheStrictDecoder(t *testing.T) {
	for _, in := range decodeSeeds {
		checkDecodeInput(t, []byte(in))
	}
}

// FuzzDecodeInput: whatever the input (a model writes it), decodeInput
// agrees with the strict decoder.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeInput)
}

// TestOnlyKnownKeys pins the key scan on valid JSON: true exactly when
// every top-level key is a known one written plainly.
func TestOnlyKnownKeys(t *testing.T) {
	props := []string{"a", "b"}
	for in, want := range map[string]bool{
		`{}`:                           true,
		`{"a":1}`:                      true,
		`{"a":{"c":1},"b":[{"c":2}]}`:  true,
		`{"a":"\"c\":1","b":"}"}`:      true,
		`{"a":1,"c":2}`:                false,
		`{"a":{"b":1},"c":2}`:          false,
		`{"\u0061":1}`:                 false,
		`{"A":1}`:                      false,
		`[]`:                           false,
		` {"b" : null , "a" : true } `: true,
	} {
		if !json.Valid([]byte(in)) {
			t.Fatalf("%s: not valid JSON", in)
		}
		if got := onlyKnownKeys([]byte(in), props); got != want {
			t.Errorf("onlyKnownKeys(%s) = %v, want %v", in, got, want)
		}
	}
}
