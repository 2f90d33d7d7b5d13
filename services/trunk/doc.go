// Package trunk watches the health of SIP trunks over TCP and TLS without
// keys: per TCP flow on a SIP port, the retransmissions, out-of-order
// segments, zero windows and resets, counted as tshark's tcp.analysis
// fields count them (tcp.go says where the definitions differ); per TLS
// flow on a SIPS port, what the clear handshake shows: the outcome, the
// alerts, the negotiated version and cipher suite, the SNI and, up to
// TLS 1.2, the server's certificate (tls.go).
//
// A Table is fed by the SPAN decoder through the SIP analyser's TCP hook
// (sip.TCPHook), for live ports and opened captures alike; it holds at
// most Options.MaxFlows flows and counts the ones it evicts to stay
// there. Its parsers read bytes a remote party wrote: they are bounded
// and fuzzed, and never panic.
package trunk
