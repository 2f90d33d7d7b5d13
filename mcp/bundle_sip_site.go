package mcp

// The sip_site bundle: what a VoIP engineer at a site's mirror port asks
// of the trunks and registrations as a whole.
var sipSiteTools = []toolDef{trunkHealth}
