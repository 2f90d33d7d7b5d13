package mcp

import (
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// Bundles not yet moved to the tool framework.
var (
	sipTools   []toolDef
	mediaTools []toolDef
)

// SIPStats reports the SPAN analysers' stream and decode counters.
type SIPStats func() (sip.StreamStats, netdecode.Stats)
