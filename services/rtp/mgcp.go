package rtp

import (
	"bytes"
	"net/netip"
	"time"

	"fieldtap/services/sdp"
)

// mgcpCallPrefix marks a media "dialog" set up by MGCP (RFC 3435) rather
// than SIP: its id is this prefix and the C: (CallId) parameter.
const mgcpCallPrefix = "mgcp:"

// mgcpVerbs are RFC 3435 §2.3 command verbs that may carry SDP.
var mgcpVerbs = [][]byte{[]byte("CRCX "), []byte("MDCX ")}

// mgcpSDP finds the SDP of an MGCP command or response: the CallId and
// the body after the first empty line. Gateways on a SPAN port often
// signal media this way beside SIP, and tshark follows it.
func mgcpSDP(b []byte) (callID string, body []byte, ok bool) {
	isCmd := false
	for _, v := range mgcpVerbs {
		if bytes.HasPrefix(b, v) {
			isCmd = true
		}
	}
	// A response is "<3-digit code> <transaction id>": it answers a CRCX
	// with the gateway's own SDP.
	isResp := len(b) > 4 && b[0] >= '1' && b[0] <= '5' && b[1] >= '0' && b[1] <= '9' && b[2] >= '0' && b[2] <= '9' && b[3] == ' '
	if !isCmd && !isResp {
		return "", nil, false
	}
	sep := []byte("\n\n")
	i := bytes.Index(b, sep)
	if j := bytes.Index(b, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
		i, sep = j, []byte("\r\n\r\n")
	}
	if i < 0 {
		return "", nil, false
	}
	head, body := b[:i], b[i+len(sep):]
	for line := range bytes.Lines(head) {
		line = bytes.TrimSpace(line)
		if len(line) > 2 && (line[0] == 'C' || line[0] == 'c') && line[1] == ':' {
			callID = string(bytes.TrimSpace(line[2:]))
		}
		if len(line) > 2 && (line[0] == 'I' || line[0] == 'i') && line[1] == ':' && callID == "" {
			callID = string(bytes.TrimSpace(line[2:])) // a response names the connection
		}
	}
	return clipID(callID), body, true
}

// maxIDLen caps identifiers taken from a sender.
const maxIDLen = 128

func clipID(s string) string {
	if len(s) > maxIDLen {
		return s[:maxIDLen]
	}
	return s
}

// mgcp records the SDP of an MGCP message; it reports whether b was one.
func (a *Analyser) mgcp(t time.Time, src, dst netip.AddrPort, b []byte) bool {
	callID, body, ok := mgcpSDP(b)
	if !ok {
		return false
	}
	s, err := sdp.Parse(body)
	if err != nil {
		return true
	}
	id := mgcpCallPrefix + callID
	d, h, found := a.dialogs.lookup([]byte(id))
	if !found {
		d = &dialogMedia{callID: id, created: t}
		a.dialogs.add(h, d)
	}
	a.addSDP(d, SDPEvent{Time: t.UTC(), From: src, To: dst, Message: "MGCP", Role: RoleOffer, Session: s})
	return true
}
