package mcp

// sipSiteTools is the sip_site bundle: the site-wide SIP views an
// engineer at a mirror port asks for after single calls (issue #37), each
// in its own file.
var sipSiteTools = []toolDef{sipRegistrations, compareCaptures, trunkHealth, generateFail2banRule, exportAudio}
