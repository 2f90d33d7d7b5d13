package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// objectSchemaOf is the output schema of an object tool: the envelope
// around Out, encoded when first asked for (toolInfo.output).
func objectSchemaOf[Out any]() func() json.RawMessage {
	return sync.OnceValue(schemaOf[Envelope[Out]])
}

// schema is page[Row]'s output schema and its row columns. Only the id
// columns are required of a row: with fields, every other column may be
// absent, and the answer must still match what the tool advertises. The
// columns are checked now; the schema is encoded when first asked for
// (toolInfo.output).
func (page[Row]) schema(tool string, ids []string) (func() json.RawMessage, []string) {
	row, err := jsonschema.For[Row](&jsonschema.ForOptions{TypeSchemas: outTypes})
	if err != nil || row.Type != "object" {
		panic(fmt.Sprintf("tool %s: rows must be structs: %v", tool, err))
	}
	cols := make([]string, 0, len(row.Properties))
	for c := range row.Properties {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	for _, id := range ids {
		if !slices.Contains(cols, id) {
			panic(fmt.Sprintf("tool %s: id column %q is not a column (%v)", tool, id, cols))
		}
	}
	if len(ids) == 0 {
		panic(fmt.Sprintf("tool %s: a list tool names its id columns", tool))
	}
	row.Required = slices.Clone(ids)
	return sync.OnceValue(func() json.RawMessage {
		env, err := jsonschema.For[ListEnvelope[Row]](&jsonschema.ForOptions{TypeSchemas: outTypes})
		if err != nil {
			panic(err)
		}
		env.Properties["items"].Items = row
		b, err := json.Marshal(env)
		if err != nil {
			panic(err)
		}
		return b
	}), cols
}

// listSchemaOf is the output schema of a list tool whose answer is Out,
// a page[Row].
func listSchemaOf[Out any](tool string, ids []string) (func() json.RawMessage, []string) {
	var zero Out
	return any(zero).(interface {
		schema(string, []string) (func() json.RawMessage, []string)
	}).schema(tool, ids)
}

// outTypes are the answer types that write themselves: a DBC raw value
// is an integer, a 64-bit unsigned one included.
var outTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[dbcRaw](): {Type: "integer"},
	// A budget cut's counted value is whatever the column holds.
	reflect.TypeFor[cutValue](): {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}, {Type: "boolean"}, {Type: "object"}, {Type: "array"}, {Type: "null"}}},
}

// schemaOf returns the JSON Schema of T; a type the generator cannot
// describe is a programming error, caught by the tests that read every
// tool's output schema.
func schemaOf[T any]() json.RawMessage {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: outTypes})
	if err != nil {
		panic(fmt.Sprintf("schema for %T: %v", *new(T), err))
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// withoutCoverage drops the coverage property from an envelope's schema:
// a tool that reads no captured data never sends one, and its schema
// does not offer what it never sends.
func withoutCoverage(schema func() json.RawMessage) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage {
		var s map[string]any
		if err := json.Unmarshal(schema(), &s); err != nil {
			panic(err)
		}
		if props, ok := s["properties"].(map[string]any); ok {
			delete(props, "coverage")
		}
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return b
	})
}
