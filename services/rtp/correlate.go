package rtp

import "net/netip"

// CallOf is the Call-ID whose SDP announced either address of a
// datagram (RTP or RTCP), as the analyser files it; false when no SDP
// did. An exporter on the feeding goroutine (hep.Tee) uses it to
// correlate RTCP with its call, inside a batch the feeder may hold (Hold).
func (a *Analyser) CallOf(src, dst netip.AddrPort) (string, bool) {
	a.mu.FeedLock()
	defer a.mu.FeedUnlock()
	for _, addr := range []netip.AddrPort{dst, src} {
		if ep, ok := a.endpoints.get(addr); ok {
			return ep.callID, true
		}
	}
	return "", false
}
