package mcp

import (
	"context"
	"encoding/json"
	"path"
	"slices"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sandbox"
)

// FilesURIPrefix names a sandbox file as an MCP resource: the resource
// of sandbox name N is FilesURIPrefix+N, and HTTP GET FilesPath+N
// serves the same bytes.
const FilesURIPrefix = "fieldtap://files/"

// resourceLink is one file an answer made, linked after the envelope.
type resourceLink struct {
	name  string // sandbox name, ROOT/REL
	bytes int64
}

// linkedTool is a tool whose successful answers also carry a
// resource_link content item per file it wrote, so a client can fetch
// the file without parsing the envelope. The links go after the
// envelope (content[0]) and before the provenance note, which stays last.
type linkedTool[In, Out any] struct {
	tool  tool[In, Out]
	links func(Out) []resourceLink
}

func (t linkedTool[In, Out]) toolName() string { return t.tool.name }
func (t linkedTool[In, Out]) info() toolInfo   { return t.tool.info() }

func (t linkedTool[In, Out]) handler(d Deps, ti toolInfo, maxBytes int) server.ToolHandlerFunc {
	inner := t.tool.handler(d, ti, maxBytes)
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := inner(ctx, req)
		if err != nil || res == nil || res.IsError {
			return res, err
		}
		var env Envelope[Out]
		if json.Unmarshal(res.RawStructuredContent, &env) != nil || env.Data == nil {
			return res, nil
		}
		var items []mcpgo.Content
		for _, l := range t.links(*env.Data) {
			link := mcpgo.NewResourceLink(FilesURIPrefix+l.name, path.Base(l.name), "written by "+ti.name+"; HTTP GET "+FilesPath+l.name, sandbox.MediaType(l.name))
			size := l.bytes
			link.Size = &size
			items = append(items, link)
		}
		res.Content = slices.Insert(res.Content, 1, items...)
		return res, nil
	}
}
