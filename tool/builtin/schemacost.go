package builtin

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The validator (jsonschema-go's Resolved.Validate) checks every
// alternative of anyOf and oneOf, following $ref each time, and has no
// bound of its own: two-way anyOf nested through $ref n deep costs 2^n
// checks of one value, and a $ref cycle that never reaches a value
// recurses until the stack overflows, which kills the process. So an
// output schema is linted for both when it is compiled (lintCost), and an
// answer is counted against the schema before it is validated
// (answerCost).

// maxInPlace bounds the schema checks the validator makes of one value
// before it looks inside it: the schema, what $ref names and the
// subschemas of allOf, anyOf, oneOf, not, if, then, else and
// dependentSchemas, transitively.
const maxInPlace = 10000

// maxAnswerChecks bounds the schema checks of a whole answer (every value
// in it, maxInPlace-bounded each): an answer past it is refused as too
// costly to check rather than validated.
const maxAnswerChecks = 1000000

// errAnswerCost is why an answer was not validated: checking it against
// the schema would take more than maxAnswerChecks checks.
var errAnswerCost = fmt.Errorf("the answer is too large to check against this schema (more than %d schema checks); give a smaller answer", maxAnswerChecks)

// costWalk resolves the references of one schema document and counts
// checks. refs maps a subschema to what its $ref (or $dynamicRef) names;
// locs gives each subschema's location for messages.
type costWalk struct {
	root    *jsonschema.Schema
	anchors map[string]*jsonschema.Schema
	refs    map[*jsonschema.Schema]*jsonschema.Schema
	locs    map[*jsonschema.Schema]string
	inPlace map[*jsonschema.Schema]int
}

// lintCost checks root for references it cannot follow, $ref cycles that
// never reach a value and alternatives nested so deep that one value
// would take more than maxInPlace checks; it returns the walk that counts
// answers.
func lintCost(root *jsonschema.Schema) (*costWalk, error) {
	w := &costWalk{root: root, anchors: map[string]*jsonschema.Schema{}, refs: map[*jsonschema.Schema]*jsonschema.Schema{},
		locs: map[*jsonschema.Schema]string{}, inPlace: map[*jsonschema.Schema]int{}}
	var all []*jsonschema.Schema
	var index func(s *jsonschema.Schema, at string, depth int) error
	index = func(s *jsonschema.Schema, at string, depth int) error {
		if depth > maxCollectDepth {
			return fmt.Errorf("at %s: schemas nested more than %d deep", where(at), maxCollectDepth)
		}
		if _, seen := w.locs[s]; seen {
			return nil
		}
		w.locs[s] = at
		all = append(all, s)
		for _, a := range []string{s.Anchor, s.DynamicAnchor} {
			if a != "" {
				w.anchors[a] = s
			}
		}
		var err error
		eachSubschema(s, at, func(sub *jsonschema.Schema, loc string) {
			if err == nil {
				err = index(sub, loc, depth+1)
			}
		})
		return err
	}
	if err := index(root, "", 0); err != nil {
		return nil, err
	}
	c := &collector{root: root}
	for _, s := range all {
		for _, ref := range []string{s.Ref, s.DynamicRef} {
			if ref == "" {
				continue
			}
			target := c.local(ref)
			if name, ok := strings.CutPrefix(ref, "#"); ok && target == nil && name != "" && !strings.HasPrefix(name, "/") {
				target = w.anchors[name]
			}
			if target == nil {
				return nil, fmt.Errorf("at %s: $ref %q names no subschema of this document (use \"#/$defs/name\", a JSON pointer or \"#anchor\")", where(w.locs[s]), ref)
			}
			if s.Ref != "" && s.DynamicRef != "" {
				return nil, fmt.Errorf("at %s: both $ref and $dynamicRef", where(w.locs[s]))
			}
			w.refs[s] = target
		}
	}
	for _, s := range all {
		if _, err := w.cost(s, map[*jsonschema.Schema]bool{}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// where names a location in the schema for a message.
func where(at string) string {
	if at == "" {
		return "the root"
	}
	return at
}

// inPlaceSubs are the schemas the validator checks against the same value
// as s.
func (w *costWalk) inPlaceSubs(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	if t := w.refs[s]; t != nil {
		out = append(out, t)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, x := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if x != nil {
			out = append(out, x)
		}
	}
	for _, x := range s.DependentSchemas {
		out = append(out, x)
	}
	for _, x := range s.DependencySchemas {
		out = append(out, x)
	}
	return out
}

// cost is the number of checks of one value against s before the
// validator looks inside the value (memoized); a cycle is an error.
func (w *costWalk) cost(s *jsonschema.Schema, onPath map[*jsonschema.Schema]bool) (int, error) {
	if n, ok := w.inPlace[s]; ok {
		return n, nil
	}
	if onPath[s] {
		return 0, fmt.Errorf("at %s: $ref cycle that never reaches a value (the schema refers back to itself without a property or item in between)", where(w.locs[s]))
	}
	onPath[s] = true
	defer delete(onPath, s)
	n := 1
	for _, sub := range w.inPlaceSubs(s) {
		m, err := w.cost(sub, onPath)
		if err != nil {
			return 0, err
		}
		n += m
		if n > maxInPlace {
			return 0, fmt.Errorf("at %s: anyOf/oneOf/allOf nested through $ref make more than %d schema checks of one value; flatten the alternatives", where(w.locs[s]), maxInPlace)
		}
	}
	w.inPlace[s] = n
	return n, nil
}

// answerCost counts, up to maxAnswerChecks, the checks the validator may
// make of inst against the root schema (every alternative followed, as
// it does); errAnswerCost when there are more.
func (w *costWalk) answerCost(inst any) error {
	left := maxAnswerChecks
	if !w.count(w.root, inst, &left) {
		return errAnswerCost
	}
	return nil
}

// count spends the checks of v against s (and what s applies to v and to
// the values inside it) from left; false once they run out.
func (w *costWalk) count(s *jsonschema.Schema, v any, left *int) bool {
	if s == nil {
		return true
	}
	*left--
	if *left < 0 {
		return false
	}
	for _, sub := range w.inPlaceSubs(s) {
		if !w.count(sub, v, left) {
			return false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			for _, sub := range []*jsonschema.Schema{s.Properties[k], s.AdditionalProperties, s.UnevaluatedProperties} {
				if !w.count(sub, e, left) {
					return false
				}
			}
			for _, sub := range s.PatternProperties {
				if !w.count(sub, e, left) {
					return false
				}
			}
			if !w.count(s.PropertyNames, k, left) {
				return false
			}
		}
	case []any:
		for i, e := range x {
			subs := []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems}
			if i < len(s.PrefixItems) {
				subs = append(subs, s.PrefixItems[i])
			}
			if i < len(s.ItemsArray) {
				subs = append(subs, s.ItemsArray[i])
			}
			for _, sub := range subs {
				if !w.count(sub, e, left) {
					return false
				}
			}
		}
	}
	return true
}
