package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
func checkObject(input json.RawMessage, props, required []string, v any) []string {
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
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, &typeErr) && typeErr.Field != "":
		problems = append(problems, fmt.Sprintf("%s must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		problems = append(problems, fmt.Sprintf("unknown field %s (the fields are %s)", strings.TrimPrefix(err.Error(), "json: unknown field "), strings.Join(props, ", ")))
	default:
		problems = append(problems, err.Error())
	}
	return problems
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
