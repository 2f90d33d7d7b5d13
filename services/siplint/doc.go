// Package siplint checks one dialog against the rules that matter in the
// field (a missing ACK, re-INVITE glare, a CANCEL before any provisional
// response, an SDP answer without an offer, RTP on a port no SDP
// announced), each rule naming its RFC and
// section, and lists the rules it could not evaluate and why.
package siplint
