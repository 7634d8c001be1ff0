package tasktools

import (
	"bytes"
	"testing"
)

// TestAgentSchemaWithIsReflectedOnce: for every combination of options the
// schema AgentSchemaWith gives (reflected once per process) is the bytes a
// fresh reflection makes, the same array on the second call, and an append
// to it does not reach the next caller.
func TestAgentSchemaWithIsReflectedOnce(t *testing.T) {
	for bits := range 32 {
		o := SchemaOptions{ModelForced: bits&1 != 0, Isolation: bits&2 != 0, NoBackground: bits&4 != 0, Budget: bits&8 != 0, Teams: bits&16 != 0}
		first := AgentSchemaWith(o)
		if fresh := reflectAgentSchema(o); !bytes.Equal(first, fresh) {
			t.Fatalf("%+v: cached schema differs from a fresh reflection:\n%s\n%s", o, first, fresh)
		}
		second := AgentSchemaWith(o)
		if &first[0] != &second[0] {
			t.Errorf("%+v: reflected twice", o)
		}
		if cap(second) != len(second) {
			t.Errorf("%+v: shared schema has spare room (cap %d, len %d)", o, cap(second), len(second))
		}
		_ = append(second, '!')
		if third := AgentSchemaWith(o); !bytes.Equal(third, first) {
			t.Errorf("%+v: an append changed the shared schema", o)
		}
	}
}
