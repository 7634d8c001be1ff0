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
	hidden  string
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
