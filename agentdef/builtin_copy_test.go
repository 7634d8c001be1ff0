package agentdef

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestBuiltinsReturnsCopies changes every slice and field of what Builtins
// returned and checks that the next call's definitions are as parsed: the
// embedded files are parsed once per process, every caller gets its own
// copy.
func TestBuiltinsReturnsCopies(t *testing.T) {
	want := Builtins()
	if len(want) != 4 {
		t.Fatalf("%d built-in agents, want 4", len(want))
	}
	got := Builtins()
	for i, d := range got {
		if d == want[i] {
			t.Fatalf("%s: the same pointer twice", d.Name)
		}
		if !reflect.DeepEqual(d, want[i]) {
			t.Fatalf("%s: two calls differ", d.Name)
		}
		if len(d.Tools) > 0 {
			d.Tools[0].Name = "Changed"
		}
		d.Tools = append(d.Tools, ParseToolEntry("Extra"))
		d.DisallowedTools = append(d.DisallowedTools, ParseToolEntry("X"))
		d.Skills = append(d.Skills, "s")
		d.Hooks = json.RawMessage(`{}`)
		d.Name, d.OneShot, d.Body = "changed", !d.OneShot, "changed"
	}
	again := Builtins()
	for i, d := range again {
		if !reflect.DeepEqual(d, want[i]) {
			t.Errorf("%s: a caller's change reached the next call: %+v", want[i].Name, d)
		}
	}
}

// TestDefinitionCloneCopiesEverySlice sets every slice field of a
// Definition and checks that clone shares none of their arrays: a field
// added later without a line in clone fails here.
func TestDefinitionCloneCopiesEverySlice(t *testing.T) {
	d := &Definition{}
	v := reflect.ValueOf(d).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Slice {
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
	}
	c := d.clone()
	cv := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Slice {
			continue
		}
		if f.Pointer() == cv.Field(i).Pointer() {
			t.Errorf("clone shares field %s", v.Type().Field(i).Name)
		}
	}
}
