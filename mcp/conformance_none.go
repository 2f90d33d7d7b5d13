//go:build !mcpconformance

package mcp

// conformanceFixtures is empty in a production build: a capture box
// serves no test_* tool, prompt or test:// resource.
func conformanceFixtures() fixtures { return fixtures{} }
