package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
)

// project keeps only the named keys of each row of an encoded list
// answer. It runs on the encoded page, so a key a row omitted stays
// absent rather than reappearing as null. The schema has already refused
// an unknown column.
func project(b []byte, keep []string) ([]byte, error) {
	var env ListEnvelope[map[string]json.RawMessage]
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	for _, item := range env.Items {
		for k := range item {
			if !slices.Contains(keep, k) {
				delete(item, k)
			}
		}
	}
	env.Items = nonNil(env.Items)
	return json.Marshal(env)
}
