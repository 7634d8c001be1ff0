package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

type flatIn struct {
	Path    string        `json:"path"`
	Offset  *int          `json:"offset,omitempty"`
	Tags    []string      `json:"tags,omitempty"`
	On      bool          `json:"on,omitempty"`
	Ratio   float64       `json:"ratio,omitempty"`
	Any     any           `json:"any,omitempty"`
	Lenient LenientString `json:"lenient,omitempty"`
	//lint:ignore U1000 an unexported field, which flatInput must pass over
	hidden string
}

type nestedIn struct {
	Path  string `json:"path"`
	Steps []struct {
		Old string `json:"old"`
	} `json:"steps"`
}

type embedIn struct {
	flatIn
	Extra string `json:"extra"`
}

// TestFlatInput: a struct of strings, numbers, booleans, pointers and
// slices of them, self-decoding values and any is flat; one with a nested
// object, a map or an embedded struct is not.
func TestFlatInput(t *testing.T) {
	for _, c := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[flatIn](), true},
		{reflect.TypeFor[nestedIn](), false},
		{reflect.TypeFor[embedIn](), false},
		{reflect.TypeFor[struct{ M map[string]string }](), false},
		{reflect.TypeFor[struct{ P *struct{ A int } }](), false},
		{reflect.TypeFor[string](), false},
	} {
		if got := flatInput(c.t); got != c.want {
			t.Errorf("flatInput(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

// TestCheckObjectFastPathDecodesAsTheStrictDecoder: for every input, the
// problems and the decoded value of checkObject with flat set are those of
// the strict decoder's path (flat unset).
func TestCheckObjectFastPathDecodesAsTheStrictDecoder(t *testing.T) {
	rs := reflectSchema[flatIn]("flat")
	if !rs.flat {
		t.Fatal("flatIn not flat")
	}
	inputs := []string{
		`{"path":"/a"}`,
		`{"path":"/a","offset":3,"tags":["x","y"],"on":true,"ratio":0.5,"any":{"k":[1,2]},"lenient":7}`,
		`{"path":"/a","offset":"3"}`,
		`{"path":1}`,
		`{"path":null}`,
		`{}`,
		``,
		`{"Path":"/a"}`,
		`{"PATH":"/a","offset":2}`,
		`{"path":"/a","nope":1}`,
		`{"path":"/a","hidden":"x"}`,
		`{"path":"/a","tags":"x"}`,
		`{"path":"/a","tags":[1]}`,
		`{"path":"/a","path":"/b"}`,
		`{"path":"/a","offset":1.5}`,
		`{"path":"/a","on":"yes","ratio":"x"}`,
		`[1]`,
		`"s"`,
		`{"path":"/a"} {"x":1}`,
		`{"path":"\u00e9\ud83d\ude00"}`,
	}
	for _, in := range inputs {
		var fast, slow flatIn
		pf := checkObject(json.RawMessage(in), rs.props, rs.required, &fast, true)
		ps := checkObject(json.RawMessage(in), rs.props, rs.required, &slow, false)
		if !slices.Equal(pf, ps) {
			t.Errorf("%s: problems %q, the strict decoder's %q", in, pf, ps)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: decoded %+v, the strict decoder %+v", in, fast, slow)
		}
	}
}

// TestCheckObjectAllocations: a flat input with known fields is checked
// without the strict decoder (fewer allocations than with it).
func TestCheckObjectAllocations(t *testing.T) {
	rs := reflectSchema[flatIn]("flat")
	in := json.RawMessage(`{"path":"/tmp/x/file.txt","offset":3}`)
	run := func(flat bool) float64 {
		return testing.AllocsPerRun(50, func() {
			var v flatIn
			_ = checkObject(in, rs.props, rs.required, &v, flat)
		})
	}
	fast, slow := run(true), run(false)
	t.Logf("allocations: %.0f without the decoder, %.0f with it", fast, slow)
	if fast >= slow {
		t.Errorf("fast path %v allocations, strict decoder's %v", fast, slow)
	}
}

// checkObjectBefore is checkObject as it was before its fast paths: the
// input decoded into a map for the required fields, then by the strict
// decoder. The reference the fast paths are held to.
func checkObjectBefore(input json.RawMessage, props, required []string, v any) []string {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil || fields == nil {
		return []string{"the input must be a JSON object"}
	}
	var problems []string
	for _, k := range required {
		if raw, ok := fields[k]; !ok || string(raw) == "null" {
			problems = append(problems, k+" is required")
		}
	}
	return append(problems, decodeProblems(strictDecode(input, v), props)...)
}

// requiredIn has two required fields, one a pointer (null is missing).
type requiredIn struct {
	Path string  `json:"path"`
	Old  *string `json:"old"`
	Opt  int     `json:"opt,omitempty"`
}

// checkCheckObject fails when checkObject and checkObjectBefore disagree
// on in, for a flat input type and one with two required fields.
func checkCheckObject(t *testing.T, in []byte) {
	rs := reflectSchema[flatIn]("flat")
	var a, b flatIn
	if got, want := checkObject(in, rs.props, rs.required, &a, rs.flat), checkObjectBefore(in, rs.props, rs.required, &b); !slices.Equal(got, want) || !reflect.DeepEqual(a, b) {
		t.Fatalf("%q: %q %+v, before %q %+v", in, got, a, want, b)
	}
	rr := reflectSchema[requiredIn]("required")
	var c, d requiredIn
	if got, want := checkObject(in, rr.props, rr.required, &c, rr.flat), checkObjectBefore(in, rr.props, rr.required, &d); !slices.Equal(got, want) || !reflect.DeepEqual(c, d) {
		t.Fatalf("%q (required): %q %+v, before %q %+v", in, got, c, want, d)
	}
}

var checkSeeds = append([]string{
	``, ` `, `{"old":null}`, `{"old":"x","path":"p"}`, `{"old":"x","old":null,"path":"p"}`, `{"old":null,"old":"x","path":"p"}`,
	`{"path" : null , "old":"y"}`, `{"o\u006cd":"x","path":"p"}`, `{"path":"p","old":{"a":null}}`, `{"path":"p","old":"x","extra":1}`,
	`{"path":"p","old":"x"}x`, "{\"path\":\"\xff\",\"old\":\"x\"}", `{"\xff":1,"path":"p","old":"x"}`,
}, decodeSeeds...)

// TestCheckObjectAsBefore: checkObject's problems and decoded value are
// what they were with the map and the strict decoder.
func TestCheckObjectAsBefore(t *testing.T) {
	for _, in := range checkSeeds {
		checkCheckObject(t, []byte(in))
	}
}

// FuzzCheckObject: whatever the input, checkObject agrees with
// checkObjectBefore.
func FuzzCheckObject(f *testing.F) {
	for _, s := range checkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCheckObject)
}
