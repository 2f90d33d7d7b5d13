package mcp

// sipSiteTools answer a site's questions about its calls as a whole.
var sipSiteTools = []toolDef{
	exportAudio,
}
