package mcp

import (
	"encoding/json"
	"fmt"
)

// strictInput rewrites every `"type": [..]` of an input schema to its one
// non-null member: strict clients read type as a single string and drop
// or refuse a tool whose schema has a union. An absent optional argument
// is still accepted, and a null one still decodes; only the advertisement
// changes. A union of two real types is a programming error.
func strictInput(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if err := collapseUnions(s); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func collapseUnions(v any) error {
	switch x := v.(type) {
	case map[string]any:
		if ts, isList := x["type"].([]any); isList {
			var real []string
			for _, t := range ts {
				if s, isStr := t.(string); isStr && s != "null" {
					real = append(real, s)
				}
			}
			if len(real) != 1 {
				return fmt.Errorf("input schema type union %v has no single non-null type", ts)
			}
			x["type"] = real[0]
		}
		for _, sub := range x {
			if err := collapseUnions(sub); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range x {
			if err := collapseUnions(sub); err != nil {
				return err
			}
		}
	}
	return nil
}
