package tool

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"sync"
)

// The input schemas of cadre's own tools are generated ahead of time
// (schemas_gen.go), so a run does not reflect them at start: reflecting
// and marshalling ~20 schemas cost about 2 ms of CPU and a hundred page
// faults before the first model request (issue 24). A type not in the
// table is reflected as before.
//
// The table cannot go stale unnoticed: in a test binary every schema is
// reflected, and one that differs from its generated entry panics, naming
// the type. Only a schema that depends on the type alone belongs in the
// table (struct tags, and JSONSchemaExtend methods that read constant
// text): all of cadre's tool inputs are such. To regenerate:
//
//	CADRE_SCHEMA_DUMP=/tmp/schemas.jsonl go test ./tool/... ./skills/ ./internal/engine/... ./internal/mcpx/
//	go run ./tool/internal/genschemas /tmp/schemas.jsonl > tool/schemas_gen.go

// pregen is one generated schema: the type's key (package path and
// name), the schema, its properties (sorted) and its required fields.
type pregen struct {
	key             string
	schema          string
	props, required []string
}

// schemaKey names a type for the generated table: its package path and
// name, or "" for a type without both (those are always reflected).
func schemaKey(typ reflect.Type) string {
	if typ.PkgPath() == "" || typ.Name() == "" {
		return ""
	}
	return typ.PkgPath() + "." + typ.Name()
}

// pregenerated returns the generated schema of the type with this key.
func pregenerated(key string) (*reflectedSchema, bool) {
	if key == "" {
		return nil, false
	}
	i := sort.Search(len(generatedSchemas), func(i int) bool { return generatedSchemas[i].key >= key })
	if i == len(generatedSchemas) || generatedSchemas[i].key != key {
		return nil, false
	}
	g := &generatedSchemas[i]
	return &reflectedSchema{schema: json.RawMessage(g.schema), props: slices.Clip(g.props), required: slices.Clip(g.required)}, true
}

// inTestBinary reports whether this process is a Go test binary: the
// testing package registers its -test.* flags before any test runs.
func inTestBinary() bool { return flag.Lookup("test.v") != nil }

// dumpMu serialises the lines a test binary appends to CADRE_SCHEMA_DUMP.
var dumpMu sync.Mutex

// checkPregenerated is the test binaries' guard: the reflected schema of
// a type in the table must equal its generated one. With
// CADRE_SCHEMA_DUMP set it also appends the reflected schema to that file
// for the generator.
func checkPregenerated(key string, rs *reflectedSchema) {
	if key == "" {
		return
	}
	if g, ok := pregenerated(key); ok {
		if !bytes.Equal(g.schema, rs.schema) || !slices.Equal(g.props, rs.props) || !slices.Equal(g.required, rs.required) {
			panic(fmt.Sprintf("tool/schemas_gen.go is stale for %s: generated %s %q %q, reflected %s %q %q; regenerate it (see tool/schemas.go)",
				key, g.schema, g.props, g.required, rs.schema, rs.props, rs.required))
		}
	}
	path := os.Getenv("CADRE_SCHEMA_DUMP")
	if path == "" {
		return
	}
	line, err := json.Marshal(struct {
		Key      string          `json:"key"`
		Schema   json.RawMessage `json:"schema"`
		Props    []string        `json:"props"`
		Required []string        `json:"required"`
	}{key, rs.schema, rs.props, rs.required})
	if err != nil {
		panic(fmt.Sprintf("dump schema %s: %v", key, err))
	}
	dumpMu.Lock()
	defer dumpMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		panic(fmt.Sprintf("dump schema %s: %v", key, err))
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		panic(fmt.Sprintf("dump schema %s: %v", key, err))
	}
}

// HasGeneratedSchema reports whether t is a Func tool whose input schema
// is in the generated table, so that building it reflects nothing outside
// test binaries. Tests of the packages that make cadre's tools use it to
// keep the table complete.
func HasGeneratedSchema(t Tool) bool {
	k, ok := t.(interface{ inputKey() string })
	if !ok {
		return false
	}
	_, ok = pregenerated(k.inputKey())
	return ok
}

// inputKey is the generated table's key of the tool's input type.
func (t *funcTool[In]) inputKey() string { return schemaKey(reflect.TypeFor[In]()) }
