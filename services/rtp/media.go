package rtp

import (
	"net/netip"
	"strconv"
	"time"

	"fieldtap/services/heapsize"
	"fieldtap/services/sdp"
)

// SDP roles in an offer/answer exchange (RFC 3264).
const (
	RoleOffer  = "offer"
	RoleAnswer = "answer"
)

// SDPEvent is one SDP body a dialog carried.
type SDPEvent struct {
	Time    time.Time
	From    netip.AddrPort // signalling sender
	To      netip.AddrPort
	Message string // "INVITE" or "200 INVITE"
	Role    string
	Session *sdp.Session
}

// dialogMedia is what one Call-ID said about media.
type dialogMedia struct {
	callID     string
	created    time.Time
	sdp        []SDPEvent
	sdpDropped int
	pending    bool // an offer awaits its answer
	endpoints  []netip.AddrPort
	epDropped  int
	final      int // final status to the last INVITE, 0 if none
	ended      bool
	// rtcp lists the RTCP address pairs seen for export (flows.go).
	rtcp        []flowSpan
	rtcpDropped int
	// sdpBytes is what the kept sessions hold (sdp.Session.Bytes) and
	// their labels; pos is d's place in the dialogs' table (ringEntry).
	sdpBytes int
	pos      int
}

// endpoint is a signalled media address: RTP or RTCP of one m= line.
// It names its call rather than pointing at the call's dialog, so an
// endpoint, and a stream holding it, keep of an evicted dialog only the
// session their line lies in, which they are charged (dialogTable.of
// finds the dialog while the table keeps it).
type endpoint struct {
	callID string
	// media is the m= line in its parsed session, which nothing changes
	// after sdp.Parse: pointed at, not copied into both RTP and RTCP. It
	// keeps the session alive after the dialog has gone.
	media *sdp.Media
	gen   uint64 // bumps whenever media changes, so streams re-resolve clocks
	// weight is what it holds (endpointWeight), as the endpoints' table
	// last charged it and as each of its streams, streams of them, is
	// charged it (stream.charge); pos is its place in that table
	// (ringEntry).
	weight  uint32
	pos     int32
	streams int32
	rtcp    bool
}

// resolveClock finds pt's RTP clock rate from the endpoint's formats, or
// the static table when nothing was signalled. telephone-event has no
// usable clock for jitter (RFC 4733 §2.2.1 keeps its timestamp fixed for
// an event), as tshark treats it.
func resolveClock(ep *endpoint, pt uint8) (int, bool) {
	f := sdp.Format{PT: int(pt)}
	if ep != nil {
		if g, ok := ep.media.Format(int(pt)); ok {
			f = g
		}
	}
	if sdp.IsTelephoneEvent(f) {
		return 0, true
	}
	if pt >= 96 && f.Encoding == "" {
		return 0, false // dynamic and unsignalled: no clock, like tshark
	}
	return sdp.ClockRate(f), false
}

// codecName names pt for a stream: the signalled encoding, else the
// static name, else "PT<n>".
func codecName(ep *endpoint, pt uint8) Codec {
	if ep != nil {
		if f, ok := ep.media.Format(int(pt)); ok && f.Encoding != "" {
			return Codec(f.Encoding)
		}
	}
	if st, ok := sdp.Static(int(pt)); ok {
		return Codec(st.Encoding)
	}
	return Codec("PT" + strconv.Itoa(int(pt)))
}

// lastOrigin is the o= line (sdp.Session.Origin) of the last body from
// src, "" if none.
func (d *dialogMedia) lastOrigin(src netip.AddrPort) string {
	for i := len(d.sdp) - 1; i >= 0; i-- {
		if d.sdp[i].From == src {
			return d.sdp[i].Session.Origin
		}
	}
	return ""
}

// addSDP records a body on d, registers its media addresses and
// weighs d again, which may evict dialogs (d too when it is the oldest).
func (a *Analyser) addSDP(d *dialogMedia, ev SDPEvent) {
	session := ev.Session.Bytes()
	if len(d.sdp) < maxSDPPerDialog {
		d.sdp = append(d.sdp, ev)
		d.sdpBytes += session + heapsize.String(ev.Message)
	} else {
		d.sdpDropped++
	}
	w := endpointWeight(session, d.callID)
	for i := range ev.Session.Media {
		m := &ev.Session.Media[i]
		addr, ok := m.Addr()
		if !ok || addr.Addr().IsUnspecified() {
			continue
		}
		ep, h, known := a.endpoints.lookup(addr)
		if m.RTCPPort <= 0 || m.RTCPPort == m.Port {
			a.signal(d, addr, h, m, w, false, ep, known, nil)
			continue
		}
		rtcpAddr := netip.AddrPortFrom(addr.Addr(), uint16(m.RTCPPort))
		rtcpH := a.endpoints.pairHash(addr, h, rtcpAddr)
		rtcpEP, rtcpKnown := a.endpoints.find(rtcpAddr, rtcpH)
		// A new RTP and RTCP pair is one allocation: the two are added,
		// and so evicted, one after the other. Only when both are new,
		// so no half is ever kept alive unused.
		var pair *endpointPair
		if !known && !rtcpKnown {
			pair = new(endpointPair)
		}
		if a.signal(d, addr, h, m, w, false, ep, known, pair.at(0)) && rtcpKnown {
			// The RTP address's entry may have pushed the RTCP one out.
			rtcpEP, rtcpKnown = a.endpoints.find(rtcpAddr, rtcpH)
		}
		a.signal(d, rtcpAddr, rtcpH, m, w, true, rtcpEP, rtcpKnown, pair.at(1))
	}
	a.dialogs.weigh(d)
}

// endpointPair is an m= line's RTP and RTCP endpoints in one allocation.
type endpointPair [2]endpoint

// at is the pair's i-th endpoint, or nil without a pair.
func (p *endpointPair) at(i int) *endpoint {
	if p == nil {
		return nil
	}
	return &p[i]
}

// signal registers addr, of hash h, for m's media on d, the endpoint
// then weighing w: ep, its entry when known, takes them; else a new
// entry, in fresh when given, is added. It reports whether the
// endpoints' table evicted any entry (an addition, or a known entry
// weighed again).
func (a *Analyser) signal(d *dialogMedia, addr netip.AddrPort, h uint32, m *sdp.Media, w uint32, rtcp bool, ep *endpoint, known bool, fresh *endpoint) (evicted bool) {
	a.gen++
	if known {
		// A re-INVITE (or another dialog) reusing the address takes it.
		delta := int64(w) - int64(ep.weight)
		ep.callID, ep.media, ep.rtcp, ep.gen, ep.weight = d.callID, m, rtcp, a.gen, w
		before := a.endpoints.evicted
		a.endpoints.weigh(ep)
		evicted = a.endpoints.evicted != before
		if ep.streams > 0 {
			// Its streams hold it: each is charged its weight now.
			a.streams.grow(int64(ep.streams) * delta)
		}
	} else {
		if fresh == nil {
			fresh = new(endpoint)
		}
		*fresh = endpoint{callID: d.callID, media: m, rtcp: rtcp, gen: a.gen, weight: w}
		evicted = a.endpoints.add(addr, h, fresh)
	}
	if rtcp {
		return
	}
	for _, e := range d.endpoints {
		if e == addr {
			return
		}
	}
	if len(d.endpoints) < maxEndpointsPerDialog {
		d.endpoints = append(d.endpoints, addr)
	} else {
		d.epDropped++
	}
	return evicted
}
