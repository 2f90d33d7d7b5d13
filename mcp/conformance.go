package mcp

import "github.com/mark3labs/mcp-go/server"

// fixtures are what the official MCP conformance suite calls by name:
// test_* tools and prompts, test:// resources. Only a build with the
// mcpconformance tag has any (conformance_fixtures.go, for
// .ci/mcp-conformance.sh); a production build's are empty
// (conformance_none.go), and no configuration key or bundle loads them.
type fixtures struct {
	tools     []server.ServerTool
	prompts   []server.ServerPrompt
	resources []server.ServerResource
	templates []server.ServerResourceTemplate
	// watched are the fixture URIs resources/subscribe accepts besides
	// the live views.
	watched []string
}
