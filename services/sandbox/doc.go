// Package sandbox serves files by name from a few directories the box
// owns (exports, evidence bundles, capture files an operator copied in)
// and refuses everything else: a name is ROOT/REL with REL a local path
// (no "..", not absolute), no component may be a symbolic link, hidden
// and temporary files are not served, and a root may verify a file
// before it is opened (evidence bundles check their digests). The MCP
// layer's resources/read, its file tools and its HTTP GET all read
// through one Sandbox, so they agree on what exists.
package sandbox
