package rtp

import (
	"fieldtap/drivers/wire"
	"fieldtap/services/netdecode"
)

// ipProtoUDP is the IP protocol number of UDP (RFC 768).
const ipProtoUDP = 17

// HeadersOnly is how many bytes of a frame the recorder keeps when RTP is
// recorded headers only: up to the end of the RTP header (fixed part,
// CSRCs, extension) for an unfragmented datagram on a flow this analyser
// counts as RTP (a stream it tracks, an address SDP signalled, or the
// heuristic when on), and the whole frame for anything else (SIP, RTCP,
// fragments, RTP nobody signalled). Call it after the frame was fed, so
// a stream the frame starts is already known.
func (a *Analyser) HeadersOnly(link wire.LinkType, frame []byte) int {
	l, ok := netdecode.Locate(link, frame, a.opt.VXLANPorts)
	if !ok || l.Proto != ipProtoUDP || l.Payload == 0 || l.Fragment {
		return len(frame)
	}
	p := frame[l.Payload:]
	var h Header
	if !LooksLikeRTP(p) || h.Decode(p) != nil || h.Truncated {
		return len(frame)
	}
	a.mu.Lock()
	rtp := a.knownRTP(Key{Src: l.Src, Dst: l.Dst, SSRC: h.SSRC})
	a.mu.Unlock()
	if !rtp {
		return len(frame)
	}
	return l.Payload + len(p) - len(h.Payload) - h.Padding
}

// knownRTP reports whether k is media this analyser accounts; the caller
// holds a.mu.
func (a *Analyser) knownRTP(k Key) bool {
	if _, ok := a.streams.get(k); ok {
		return true
	}
	if ep, ok := a.endpoints.get(k.Dst); ok && !ep.rtcp {
		return true
	}
	if ep, ok := a.endpoints.get(k.Src); ok && !ep.rtcp {
		return true
	}
	return a.opt.Heuristic && plausiblePorts(k)
}
