package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Projection is embedded in the arguments of every list tool: it projects the
// columns of each item. The envelope (page, source, warnings, errors) is
// never projected, because it is how a caller knows what it did not get.
type Projection struct {
	Fields []string `json:"fields,omitempty" jsonschema:"columns to return per item (default all); the item's id column always comes back; an unknown name is an error"`
}

func (p Projection) projection() []string { return p.Fields }

// fieldsOnly is the arguments of a list tool that takes nothing else.
type fieldsOnly struct {
	Projection
}

// listOutput sets a list tool's output schema to the page of Row.
func listOutput[Row any]() mcpgo.ToolOption {
	return mcpgo.WithRawOutputSchema(schemaOf[ListEnvelope[Row]]())
}

// projector is what listHandler needs of a list tool's arguments.
type projector interface{ projection() []string }

// listHandler is handler for a list tool whose items are Row: it checks
// the requested fields against Row's columns before the tool runs (an
// unknown name is an error, never a silently missing column) and projects
// each item afterwards, keeping ids, the columns that identify a row and
// that follow-up calls take.
func listHandler[In projector, Row any](d Deps, ids []string, fn func(context.Context, In) *mcpgo.CallToolResult) server.ToolHandlerFunc {
	cols := columnsOf[Row]()
	for _, id := range ids {
		if !slices.Contains(cols, id) {
			panic(fmt.Sprintf("list tool: id column %q is not a column of %T (%v)", id, *new(Row), cols))
		}
	}
	return handler(d, func(ctx context.Context, in In) *mcpgo.CallToolResult {
		want := in.projection()
		if len(want) == 0 {
			return fn(ctx, in)
		}
		for _, f := range want {
			if !slices.Contains(cols, f) {
				return fail(d.Source(), CodeInvalidArgument, fmt.Sprintf("fields: %q is not a column", f), "columns are: "+strings.Join(cols, ", "))
			}
		}
		return project(fn(ctx, in), append(slices.Clone(want), ids...))
	})
}

// columnsOf lists Row's JSON columns from its schema, so embedded structs
// and omitempty fields count exactly as the encoder and tools/list see them.
func columnsOf[Row any]() []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schemaOf[Row](), &s); err != nil {
		panic(err)
	}
	cols := make([]string, 0, len(s.Properties))
	for c := range s.Properties {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	return cols
}

// project keeps only the named keys of each item of a list answer. It
// runs on the serialized page, so a key the row omitted stays absent
// rather than reappearing as null.
func project(res *mcpgo.CallToolResult, keep []string) *mcpgo.CallToolResult {
	if res == nil || res.IsError {
		return res
	}
	var env ListEnvelope[map[string]json.RawMessage]
	if err := json.Unmarshal(res.RawStructuredContent, &env); err != nil || env.Page == nil {
		return res
	}
	for _, item := range env.Items {
		for k := range item {
			if !slices.Contains(keep, k) {
				delete(item, k)
			}
		}
	}
	b, err := json.Marshal(env)
	if err != nil {
		return res
	}
	return rendered(b, true, hasProvenance(res))
}
