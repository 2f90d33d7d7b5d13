package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

const toolDescribeResponseShape = "describe_response_shape"

// exampleDepth bounds the synthetic example of a recursive schema.
const exampleDepth = 8

type shapeIn struct {
	Tool string `json:"tool" jsonschema:"name of a loaded tool, as in tools/list"`
}

type shapeOut struct {
	Tool         string         `json:"tool"`
	OutputSchema map[string]any `json:"output_schema"`
	// Example is built from the schema: placeholder values of the right
	// type, one item per array, so a client can plan which keys to read.
	Example map[string]any `json:"example"`
}

// shapeTool answers with the output schema of any loaded tool, whether or
// not tools/list advertises output schemas, and an example, so a client
// that knows nothing can plan before it calls.
func shapeTool(loaded map[string]toolInfo) toolDef {
	return tool[shapeIn, shapeOut]{
		name:  toolDescribeResponseShape,
		reads: readsNothing,
		desc:  "The output JSON Schema of one loaded tool and an example answer built from it (placeholder values). Use it to plan which keys to read and which fields to project; tools/list carries output schemas only when the operator turned them on.",
		hints: readOnly(),
		run: func(c *call, in shapeIn) (shapeOut, error) {
			t, found := loaded[in.Tool]
			if !found {
				names := slices.Collect(maps.Keys(loaded))
				slices.Sort(names)
				return shapeOut{}, argErr("tool", "loaded tools: "+strings.Join(names, ", "), "no loaded tool %q", in.Tool)
			}
			var schema map[string]any
			if err := json.Unmarshal(t.output(), &schema); err != nil {
				return shapeOut{}, fmt.Errorf("tool %s has no readable output schema: %w", in.Tool, err)
			}
			ex, _ := exampleOf(schema, schema, exampleDepth).(map[string]any)
			if _, isEnv := ex["ok"]; isEnv {
				ex["ok"] = true
			}
			return shapeOut{Tool: in.Tool, OutputSchema: schema, Example: ex}, nil
		},
	}
}

// exampleOf builds a placeholder value for schema s; root resolves $ref.
func exampleOf(root, s map[string]any, depth int) any {
	if depth == 0 || s == nil {
		return nil
	}
	if ref, isRef := s["$ref"].(string); isRef {
		name := ref[strings.LastIndex(ref, "/")+1:]
		for _, defs := range []string{"$defs", "definitions"} {
			if m, found := root[defs].(map[string]any); found {
				if def, found := m[name].(map[string]any); found {
					return exampleOf(root, def, depth-1)
				}
			}
		}
		return nil
	}
	switch typeOf(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			sub, _ := v.(map[string]any)
			out[k] = exampleOf(root, sub, depth-1)
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		return []any{exampleOf(root, items, depth-1)}
	case "string":
		if s["format"] == "date-time" {
			return "2026-01-01T00:00:00Z"
		}
		return "…"
	case "integer", "number":
		return 0
	case "boolean":
		return false
	}
	return nil
}

// typeOf reads "type", taking the first non-null member of a union.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, m := range t {
			if str, isStr := m.(string); isStr && str != "null" {
				return str
			}
		}
	}
	return ""
}
