package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// InputChecker is a Tool that can tell, before a call is authorized, that
// its input cannot run: a required field missing, a field of the wrong
// type, an unknown field. The loop reports such a call to the model as an
// input error it can fix — never as a permission denial.
type InputChecker interface {
	// CheckInput returns one line per problem ("file_path is required");
	// none when the input fits.
	CheckInput(input json.RawMessage) []string
}

// CheckInput returns the problems t finds in input when t is an
// InputChecker; nil otherwise.
func CheckInput(t Tool, input json.RawMessage) []string {
	c, ok := t.(InputChecker)
	if !ok {
		return nil
	}
	return c.CheckInput(input)
}

// schemaFields reads the property names and the required ones of an
// object schema.
func schemaFields(schema json.RawMessage) (props, required []string) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	for k := range s.Properties {
		props = append(props, k)
	}
	slices.Sort(props)
	return props, s.Required
}

// checkObject reports what of input does not fit an object schema with
// these required fields, then decodes it into v (unknown fields refused)
// and reports a field of the wrong type or an unknown one.
//
// When flat (v's fields cannot hold an object with fields of its own:
// flatInput) and every field of input is one of props, exactly, no field
// can be unknown at any depth: json.Unmarshal then decodes v as the strict
// decoder would (the input is one valid object, checked above), without a
// decoder and its buffer per call.
func checkObject(input json.RawMessage, props, required []string, v any, flat bool) []string {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	problems, object, known, scanned := scanObject(input, props, required)
	if !scanned {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(input, &fields); err != nil || fields == nil {
			return []string{"the input must be a JSON object"}
		}
		for _, k := range required {
			if raw, ok := fields[k]; !ok || string(raw) == "null" {
				problems = append(problems, k+" is required")
			}
		}
		object, known = true, onlyKnown(fields, props)
	}
	if !object {
		return []string{"the input must be a JSON object"}
	}
	var err error
	if flat && known {
		err = json.Unmarshal(input, v)
	} else {
		err = strictDecode(input, v)
	}
	return append(problems, decodeProblems(err, props)...)
}

// decodeProblems is what checkObject reports of the decoder's error: a
// field of the wrong type, an unknown field, or the error as it is.
func decodeProblems(err error, props []string) []string {
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return []string{fmt.Sprintf("%s must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return []string{fmt.Sprintf("unknown field %s (the fields are %s)", strings.TrimPrefix(err.Error(), "json: unknown field "), strings.Join(props, ", "))}
	}
	return []string{err.Error()}
}

// maxScannedRequired is the most required fields scanObject tracks.
const maxScannedRequired = 16

// scanObject is checkObject's look at input without decoding it into a
// map: whether it is a JSON object, the problems of its required fields
// (missing or null, the last of a repeated key counting, in required's
// order) and whether every key is one of props. scanned is false when it
// cannot tell as the map would (invalid JSON is left to the decoder's
// error, an escaped key to the decoder's unescaping): the caller decodes
// the map then.
func scanObject(input []byte, props, required []string) (problems []string, object, known, scanned bool) {
	if len(required) > maxScannedRequired || !json.Valid(input) {
		return nil, false, false, false
	}
	i := skipSpace(input, 0)
	if input[i] != '{' {
		return nil, false, false, true // valid JSON, not an object (null among them)
	}
	var state [maxScannedRequired]byte // 0 missing, 1 null, 2 set
	known = true
	i++
	for {
		i = skipSpace(input, i)
		switch input[i] {
		case '}':
			for k, name := range required {
				if state[k] != 2 {
					problems = append(problems, name+" is required")
				}
			}
			return problems, true, known, true
		case ',':
			i++
			continue
		}
		j := i + 1 // input[i] is '"': the JSON is valid
		for input[j] != '"' {
			if input[j] == '\\' {
				return nil, false, false, false
			}
			j++
		}
		key := input[i+1 : j]
		known = known && isProp(key, props)
		i = skipSpace(input, j+1) + 1 // past ':'
		start := skipSpace(input, i)
		end, _ := skipValue(input, start)
		i = end
		for k, name := range required {
			if string(key) == name {
				state[k] = 2
				if string(input[start:end]) == "null" {
					state[k] = 1
				}
			}
		}
	}
}

// strictDecode decodes input into v, refusing unknown fields.
func strictDecode(input json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// onlyKnown reports whether every key of fields is one of props (sorted).
func onlyKnown(fields map[string]json.RawMessage, props []string) bool {
	for k := range fields {
		if _, ok := slices.BinarySearch(props, k); !ok {
			return false
		}
	}
	return true
}

// flatInput reports whether t is a struct none of whose JSON fields can
// hold an object decoded field by field: strings, numbers, booleans,
// pointers, slices and arrays of them, values that decode themselves
// (json.Unmarshaler: the decoder's unknown-field check does not reach
// inside them), any. No embedded struct (its fields are promoted).
func flatInput(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		if !leafInput(f.Type) {
			return false
		}
	}
	return true
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// leafInput reports whether a value of type t decodes without fields of
// its own (flatInput).
func leafInput(t reflect.Type) bool {
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return leafInput(t.Elem())
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0 // decoded as generic JSON values
	}
	return false
}

// jsonKind names a Go kind as the JSON type a model writes.
func jsonKind(kind string) string {
	switch {
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "slice", kind == "array":
		return "an array"
	case kind == "struct", kind == "map":
		return "an object"
	case kind == "ptr":
		return "a value of another type"
	}
	return "a value of another type"
}
