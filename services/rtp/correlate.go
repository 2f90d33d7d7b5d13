package rtp

import "net/netip"

// CallOf is the Call-ID whose SDP announced either address of a
// datagram (RTP or RTCP), as the analyser files it; false when no SDP
// did. An exporter uses it to correlate RTCP with its call.
func (a *Analyser) CallOf(src, dst netip.AddrPort) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, addr := range []netip.AddrPort{dst, src} {
		if ep, ok := a.endpoints.get(addr); ok && ep.dialog != nil {
			return ep.dialog.callID, true
		}
	}
	return "", false
}
