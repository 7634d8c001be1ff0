package builtin

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/prompts"
)

// maxCollectDepth bounds how deep the error walk goes (schemas nested in
// schemas, $ref chains included): a $ref cycle ends there.
const maxCollectDepth = 128

// maxCollectSteps bounds the schema-and-value pairs one walk visits:
// nested anyOf/oneOf (through $ref too) could otherwise make it
// exponential in a small schema. A walk that runs out reports what it has.
const maxCollectSteps = 200000

// collector lists every error of an instance against a schema for the
// common keywords (issue 29: the model gets all of them, each with its
// path). It is not the judge of validity — the validator is — only the
// reporter once the validator said no, so keywords it does not know
// (format, contains, unevaluated*, not, $dynamicRef, …) add nothing.
type collector struct {
	root    *jsonschema.Schema
	out     []prompts.SchemaError
	regexps map[string]*regexp.Regexp
	steps   int // pairs visited, up to maxCollectSteps
}

// collect returns the errors of inst against root, in walk order.
func collect(root *jsonschema.Schema, inst any) []prompts.SchemaError {
	c := &collector{root: root, regexps: map[string]*regexp.Regexp{}}
	c.walk(root, inst, "", 0)
	return c.out
}

// sub returns the errors of v against s alone, for the keywords that
// choose among schemas (anyOf, oneOf, if).
func (c *collector) sub(s *jsonschema.Schema, v any, path string, depth int) []prompts.SchemaError {
	saved := c.out
	c.out = nil
	c.walk(s, v, path, depth)
	got := c.out
	c.out = saved
	return got
}

func (c *collector) add(path, format string, args ...any) {
	c.out = append(c.out, prompts.SchemaError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// walk adds the errors of v (at JSON pointer path) against s.
func (c *collector) walk(s *jsonschema.Schema, v any, path string, depth int) {
	if s == nil || depth > maxCollectDepth || c.steps >= maxCollectSteps {
		return
	}
	c.steps++
	if isFalseSchema(s) {
		c.add(path, "value not allowed here")
		return
	}
	if s.Ref != "" {
		c.walk(c.local(s.Ref), v, path, depth+1)
	}
	if want := schemaTypes(s); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return hasType(v, t) }) {
		c.add(path, "got %s, want %s", typeOf(v), strings.Join(want, " or "))
		return
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = show(e)
		}
		c.add(path, "value must be one of %s", strings.Join(vals, ", "))
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		c.add(path, "value must be %s", show(*s.Const))
	}
	switch x := v.(type) {
	case string:
		c.str(s, x, path)
	case float64:
		c.number(s, x, path)
	case []any:
		c.array(s, x, path, depth)
	case map[string]any:
		c.object(s, x, path, depth)
	}
	for _, a := range s.AllOf {
		c.walk(a, v, path, depth+1)
	}
	if len(s.AnyOf) > 0 {
		c.choice("anyOf", s.AnyOf, v, path, depth, false)
	}
	if len(s.OneOf) > 0 {
		c.choice("oneOf", s.OneOf, v, path, depth, true)
	}
	if s.If != nil {
		if len(c.sub(s.If, v, path, depth+1)) == 0 {
			c.walk(s.Then, v, path, depth+1)
		} else {
			c.walk(s.Else, v, path, depth+1)
		}
	}
}

// choice reports anyOf (one=false) or oneOf (one=true): when no
// alternative matches, that and the errors of the closest one; for oneOf,
// more than one match too.
func (c *collector) choice(kw string, alts []*jsonschema.Schema, v any, path string, depth int, one bool) {
	var matched []string
	var best []prompts.SchemaError
	for i, a := range alts {
		errs := c.sub(a, v, path, depth+1)
		if len(errs) == 0 {
			matched = append(matched, strconv.Itoa(i))
		} else if best == nil || closeness(errs, path) < closeness(best, path) {
			best = errs
		}
	}
	switch {
	case c.steps >= maxCollectSteps:
		// Out of steps: an alternative without errors may not match.
	case len(matched) == 0:
		c.add(path, "value matches none of the %d %s alternatives; the closest one fails with:", len(alts), kw)
		c.out = append(c.out, best...)
	case one && len(matched) > 1:
		c.add(path, "value matches %s alternatives %s, want exactly one", kw, strings.Join(matched, " and "))
	}
}

// closeness ranks an alternative's errors for choice: fewer is closer,
// and one whose type is not the value's is farthest.
func closeness(errs []prompts.SchemaError, path string) int {
	n := len(errs)
	for _, e := range errs {
		if e.Path == path && strings.HasPrefix(e.Message, "got ") {
			n += 1 << 20
		}
	}
	return n
}

func (c *collector) str(s *jsonschema.Schema, x, path string) {
	n := utf8.RuneCountInString(x)
	if s.MinLength != nil && n < *s.MinLength {
		c.add(path, "minLength: got %d, want %d", n, *s.MinLength)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		c.add(path, "maxLength: got %d, want %d", n, *s.MaxLength)
	}
	if s.Pattern != "" {
		if re := c.regexp(s.Pattern); re != nil && !re.MatchString(x) {
			c.add(path, "%s does not match pattern %s", show(x), show(s.Pattern))
		}
	}
}

func (c *collector) number(s *jsonschema.Schema, x float64, path string) {
	if s.Minimum != nil && x < *s.Minimum {
		c.add(path, "minimum: got %s, want %s", show(x), show(*s.Minimum))
	}
	if s.Maximum != nil && x > *s.Maximum {
		c.add(path, "maximum: got %s, want %s", show(x), show(*s.Maximum))
	}
	if s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum {
		c.add(path, "exclusiveMinimum: got %s, want more than %s", show(x), show(*s.ExclusiveMinimum))
	}
	if s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum {
		c.add(path, "exclusiveMaximum: got %s, want less than %s", show(x), show(*s.ExclusiveMaximum))
	}
	if m := s.MultipleOf; m != nil && *m > 0 {
		q := x / *m
		if math.IsInf(q, 0) || math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			c.add(path, "multipleOf: got %s, want a multiple of %s", show(x), show(*m))
		}
	}
}

func (c *collector) array(s *jsonschema.Schema, x []any, path string, depth int) {
	if s.MinItems != nil && len(x) < *s.MinItems {
		c.add(path, "minItems: got %d, want %d", len(x), *s.MinItems)
	}
	if s.MaxItems != nil && len(x) > *s.MaxItems {
		c.add(path, "maxItems: got %d, want %d", len(x), *s.MaxItems)
	}
	if s.UniqueItems {
	unique:
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if jsonEqual(x[i], x[j]) {
					c.add(path, "items at %d and %d are equal, want unique items", i, j)
					break unique
				}
			}
		}
	}
	// Positional schemas: prefixItems (2020-12) or an items array
	// (draft-07); the rest get items (2020-12) or additionalItems.
	prefix, rest := s.PrefixItems, s.Items
	if len(s.ItemsArray) > 0 {
		prefix, rest = s.ItemsArray, s.AdditionalItems
	}
	for i, e := range x {
		sch := rest
		if i < len(prefix) {
			sch = prefix[i]
		}
		c.walk(sch, e, path+"/"+strconv.Itoa(i), depth+1)
	}
}

func (c *collector) object(s *jsonschema.Schema, x map[string]any, path string, depth int) {
	var missing []string
	for _, r := range s.Required {
		if _, ok := x[r]; !ok {
			missing = append(missing, "'"+r+"'")
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		c.add(path, "missing property %s", missing[0])
	default:
		c.add(path, "missing properties %s", strings.Join(missing, ", "))
	}
	if s.MinProperties != nil && len(x) < *s.MinProperties {
		c.add(path, "minProperties: got %d, want %d", len(x), *s.MinProperties)
	}
	if s.MaxProperties != nil && len(x) > *s.MaxProperties {
		c.add(path, "maxProperties: got %d, want %d", len(x), *s.MaxProperties)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range x {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		for _, need := range s.DependentRequired[k] {
			if _, ok := x[need]; !ok {
				c.add(path, "property '%s' requires property '%s'", k, need)
			}
		}
	}
	var extra []string
	for _, k := range keys {
		at := path + "/" + escapeToken(k)
		known := false
		if p, ok := s.Properties[k]; ok {
			known = true
			c.walk(p, x[k], at, depth+1)
		}
		for _, pat := range slices.Sorted(mapKeys(s.PatternProperties)) {
			if re := c.regexp(pat); re != nil && re.MatchString(k) {
				known = true
				c.walk(s.PatternProperties[pat], x[k], at, depth+1)
			}
		}
		if known || s.AdditionalProperties == nil {
			continue
		}
		if isFalseSchema(s.AdditionalProperties) {
			extra = append(extra, "'"+k+"'")
			continue
		}
		c.walk(s.AdditionalProperties, x[k], at, depth+1)
	}
	if len(extra) > 0 {
		c.add(path, "additional properties %s not allowed", strings.Join(extra, ", "))
	}
}

// regexp compiles a pattern once per walk; nil when it does not compile
// (the validator has already refused such a schema).
func (c *collector) regexp(pat string) *regexp.Regexp {
	re, ok := c.regexps[pat]
	if !ok {
		re, _ = regexp.Compile(pat)
		c.regexps[pat] = re
	}
	return re
}

// local finds the subschema a $ref names inside the root schema: "#" or
// a JSON pointer ("#/$defs/x", "#/definitions/x", "#/properties/a/items",
// …). Other references (anchors, $id-relative URIs) give nil: the walk
// reports nothing for them and the validator's message stands.
func (c *collector) local(ref string) *jsonschema.Schema {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if frag == "" {
		return c.root
	}
	frag, err := url.PathUnescape(frag)
	if err != nil || !strings.HasPrefix(frag, "/") {
		return nil
	}
	s := c.root
	toks := strings.Split(frag[1:], "/")
	for i := 0; s != nil && i < len(toks); i++ {
		tok := unescapeToken(toks[i])
		next := func() (string, bool) {
			if i+1 >= len(toks) {
				return "", false
			}
			i++
			return unescapeToken(toks[i]), true
		}
		index := func(list []*jsonschema.Schema) *jsonschema.Schema {
			t, ok := next()
			n, err := strconv.Atoi(t)
			if !ok || err != nil || n < 0 || n >= len(list) {
				return nil
			}
			return list[n]
		}
		named := func(m map[string]*jsonschema.Schema) *jsonschema.Schema {
			t, ok := next()
			if !ok {
				return nil
			}
			return m[t]
		}
		switch tok {
		case "$defs":
			s = named(s.Defs)
		case "definitions":
			s = named(s.Definitions)
		case "properties":
			s = named(s.Properties)
		case "patternProperties":
			s = named(s.PatternProperties)
		case "dependentSchemas":
			s = named(s.DependentSchemas)
		case "prefixItems":
			s = index(s.PrefixItems)
		case "allOf":
			s = index(s.AllOf)
		case "anyOf":
			s = index(s.AnyOf)
		case "oneOf":
			s = index(s.OneOf)
		case "items":
			if len(s.ItemsArray) > 0 {
				s = index(s.ItemsArray)
			} else {
				s = s.Items
			}
		case "additionalProperties":
			s = s.AdditionalProperties
		case "additionalItems":
			s = s.AdditionalItems
		case "not":
			s = s.Not
		case "if":
			s = s.If
		case "then":
			s = s.Then
		case "else":
			s = s.Else
		default:
			return nil
		}
	}
	return s
}

// eachSubschema calls fn with every schema directly inside s and its
// location (a JSON pointer into the schema document, at being s's).
func eachSubschema(s *jsonschema.Schema, at string, fn func(sub *jsonschema.Schema, loc string)) {
	one := func(kw string, sub *jsonschema.Schema) {
		if sub != nil {
			fn(sub, at+"/"+kw)
		}
	}
	list := func(kw string, subs []*jsonschema.Schema) {
		for i, sub := range subs {
			if sub != nil {
				fn(sub, at+"/"+kw+"/"+strconv.Itoa(i))
			}
		}
	}
	named := func(kw string, m map[string]*jsonschema.Schema) {
		for _, k := range slices.Sorted(mapKeys(m)) {
			if m[k] != nil {
				fn(m[k], at+"/"+kw+"/"+escapeToken(k))
			}
		}
	}
	named("$defs", s.Defs)
	named("definitions", s.Definitions)
	named("dependencies", s.DependencySchemas)
	named("dependentSchemas", s.DependentSchemas)
	named("properties", s.Properties)
	named("patternProperties", s.PatternProperties)
	list("prefixItems", s.PrefixItems)
	list("items", s.ItemsArray)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("items", s.Items)
	one("additionalItems", s.AdditionalItems)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	one("additionalProperties", s.AdditionalProperties)
	one("propertyNames", s.PropertyNames)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	one("contentSchema", s.ContentSchema)
}

// mapKeys yields the keys of m.
func mapKeys[V any](m map[string]V) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// isFalseSchema reports the schema false, which jsonschema-go decodes as
// {"not": {}}.
func isFalseSchema(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// schemaTypes are the types s allows; none means any.
func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typeOf names the JSON type of a decoded value (a number is "number",
// whole or not).
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// hasType reports whether v is of the schema type t ("integer" is a
// whole number, "number" any).
func hasType(v any, t string) bool {
	if f, ok := v.(float64); ok && t == "integer" {
		return f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return typeOf(v) == t
}

// jsonEqual compares decoded JSON values.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// show writes a value as JSON for an error message.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// escapeToken escapes one JSON pointer token (RFC 6901).
func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// unescapeToken undoes escapeToken.
func unescapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}
