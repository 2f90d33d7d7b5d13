package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/auth"
	"fieldtap/services/sandbox"
)

// filesTemplate makes every sandbox file (exports/…, evidence/ID/FILE,
// captures/…) a resource under the URI the tools' resource links name;
// {+name} keeps the slashes of ROOT/REL.
const filesTemplate = FilesURIPrefix + "{+name}"

// addFileResources serves the sandbox through resources/read: the same
// checks as HTTP GET /files (regular files under a root, no symbolic
// links, evidence whose digests still match), text as text and anything
// else base64, one read at most sandbox.MaxRead. A larger file is
// refused with the HTTP path that serves it whole.
func addFileResources(s *server.MCPServer, files *sandbox.Sandbox) {
	s.AddResourceTemplate(mcpgo.NewResourceTemplate(filesTemplate, "files",
		mcpgo.WithTemplateDescription("A file the box wrote: exports/NAME, evidence/ID/FILE, captures/NAME. Binary files come base64, at most 8 MiB a read; larger ones over HTTP GET "+FilesPath+"NAME.")),
		func(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			if c := auth.CallerOf(ctx); !c.May(auth.ScopeRead) {
				return nil, fmt.Errorf("resources need the %s scope", auth.ScopeRead)
			}
			return readFile(files, req.Params.URI)
		})
}

func readFile(files *sandbox.Sandbox, uri string) ([]mcpgo.ResourceContents, error) {
	raw := strings.TrimPrefix(uri, FilesURIPrefix)
	name, err := url.PathUnescape(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: the name is not valid percent-encoding", uri)
	}
	f, err := files.Open(name)
	if err != nil {
		return nil, err // the sandbox's refusal names the file and why
	}
	defer f.Close()
	if f.Bytes > sandbox.MaxRead {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d one resources/read carries: fetch it with HTTP GET %s%s",
			name, f.Bytes, sandbox.MaxRead, FilesPath, name)
	}
	b, err := f.ReadChunk(0, int(max(f.Bytes, 1)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	mime := sandbox.MediaType(name)
	if strings.HasPrefix(mime, "text/") || mime == "application/json" {
		return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: mime, Text: string(b)}}, nil
	}
	return []mcpgo.ResourceContents{mcpgo.BlobResourceContents{URI: uri, MIMEType: mime, Blob: base64.StdEncoding.EncodeToString(b)}}, nil
}
