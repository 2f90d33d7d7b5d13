package rtp

import (
	"bytes"
	"net/netip"
	"strconv"
	"time"

	"fieldtap/services/batchlock"
	"fieldtap/services/netdecode"
	"fieldtap/services/sdp"
	"fieldtap/services/sip"
)

// Stats are the analyser's counters: what it could not place or keep.
type Stats struct {
	Datagrams        uint64 // non-SIP UDP datagrams seen
	RTPPackets       uint64 // accounted to a stream
	RTCPPackets      uint64 // parsed into reports
	RTCPMalformed    uint64 // RTCP-looking but invalid
	NotRTP           uint64 // not version 2 or too short
	Unsignalled      uint64 // RTP-looking to/from no SDP address (heuristic off)
	StreamsEvicted   uint64 // streams dropped at the bounds: the oldest of those not live (Analyser.live) first
	EndpointsEvicted uint64 // signalled addresses dropped at MaxEndpoints
	DialogsEvicted   uint64 // dialogs' SDP dropped at MaxDialogs
	ReportsOverwrote uint64 // RTCP reports past MaxReports
	EventsOverwrote  uint64 // DTMF events past MaxEvents
	SDPInvalid       uint64 // application/sdp bodies that were not SDP
	SRTCPUnread      uint64 // RTCP of SRTP media: encrypted (SRTCP), not parsed
	Heuristic        bool
}

// Analyser tracks media for one SPAN analyser. It implements
// sip.MediaHook.
type Analyser struct {
	opt Options
	// mu guards everything below; the feeding goroutine's calls
	// (Datagram, SIPMessage, CallOf) take it with FeedLock, so a batch it
	// holds (Hold) costs one lock.
	mu  batchlock.Mutex
	st  Stats
	gen uint64
	ids uint64
	hdr Header

	streams   *fifo[Key, *stream]
	endpoints *endpointTable
	dialogs   *dialogTable
	reports   ring[Report]
	events    ring[*Event]
	lastEvent map[Key]*Event // bounded with streams: deleted on eviction
	// hot caches recently seen streams by key: a packet finds its stream
	// without hashing two addresses and an SSRC (issue #14). An evicted
	// stream leaves the cache with it.
	hot [hotStreams]hotStream
	// restarts counts timing epochs begun after a stream's first, evicted
	// streams' included (TimingEpochs).
	restarts uint64
	// now is the time of the packet being handled, in ns: when its
	// stream's addition or growth makes the streams' table evict, a
	// stream with a packet within liveStreamIntervals of it, or after it
	// (a capture's clock may step back), is live; its own stream is.
	now int64
}

// liveStreamIntervals is how many intervals (10 s by default) a stream
// may go without a packet and still be spared when the streams' table
// evicts: silence suppression pauses a live call for seconds.
const liveStreamIntervals = 2

// live says s carried a packet within liveStreamIntervals of the packet
// that makes the streams' table evict (that packet's stream among them):
// the table evicts the others first (fifo.spare), so a live call's
// streams outlast ended ones.
func (a *Analyser) live(s *stream) bool {
	return a.now-s.last.UnixNano() < liveStreamIntervals*int64(a.opt.Interval)
}

// hotStreams is the stream cache's size: a power of two above the streams
// a few dozen concurrent calls carry.
const hotStreams = 256

type hotStream struct {
	k Key
	s *stream
}

func (k Key) slot() int { return slotOf(k.SSRC, k.Src.Port(), k.Dst.Port()) }

func slotOf(ssrc uint32, src, dst uint16) int {
	return int((ssrc ^ uint32(src)<<16 ^ uint32(dst)) * 2654435761 >> 24 % hotStreams)
}

// NewAnalyser returns an empty analyser bounded by o; a bound at 0 or
// below takes its default, or its share of MaxBytes.
func NewAnalyser(o Options) *Analyser {
	o.fill()
	a := &Analyser{
		opt:       o,
		streams:   newStreamTable(o),
		endpoints: newEndpointTable(o.MaxEndpoints, o.endpointShare),
		dialogs:   newDialogTable(o.MaxDialogs, o.dialogShare),
		reports:   ring[Report]{limit: o.MaxReports},
		events:    ring[*Event]{limit: o.MaxEvents},
		lastEvent: map[Key]*Event{},
	}
	a.st.Heuristic = o.Heuristic
	a.dialogs.counter, a.endpoints.counter = &a.st.DialogsEvicted, &a.st.EndpointsEvicted
	a.streams.spare = a.live
	a.streams.onEvict = func(k Key, s *stream) {
		a.st.StreamsEvicted++
		if s.ep != nil {
			s.ep.streams--
		}
		delete(a.lastEvent, k)
		if h := &a.hot[k.slot()]; h.s != nil && h.k == k {
			*h = hotStream{}
		}
	}
	return a
}

var (
	_ sip.MediaHook = (*Analyser)(nil)
	_ sip.Holder    = (*Analyser)(nil)
)

// TimingEpochs returns how many timing epochs were restarted across all
// streams since the analyser began: each a sender that restarted its RTP
// clock while keeping SSRC and sequence, where jitter and transit were
// measured again from scratch (docs/media.md).
func (a *Analyser) TimingEpochs() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.restarts
}

// Hold implements sip.Holder: the feeding goroutine keeps the lock for a
// batch of frames, until Release; readers wait meanwhile.
func (a *Analyser) Hold() { a.mu.Hold() }

// Release implements sip.Holder.
func (a *Analyser) Release() { a.mu.Release() }

// Datagram implements sip.MediaHook: one non-SIP UDP datagram.
func (a *Analyser) Datagram(d *netdecode.Datagram) {
	a.mu.FeedLock()
	defer a.mu.FeedUnlock()
	a.st.Datagrams++
	b := d.Payload
	if IsRTCP(b) {
		a.rtcp(d)
		return
	}
	if a.hdr.Decode(b) != nil {
		if len(b) == 0 || b[0]>>6 != version2 {
			a.mgcp(d.Time, d.Src, d.Dst, b)
		}
		a.st.NotRTP++
		return
	}
	// The packet's time is the one the streams' table judges liveness
	// by, should adding or growing its stream make it evict (live).
	t := d.Time.UnixNano()
	a.now = t
	// The cached stream is matched field by field against d: a Key built
	// and copied here would stall on store forwarding, once a packet.
	ssrc := a.hdr.SSRC
	h := &a.hot[slotOf(ssrc, d.Src.Port(), d.Dst.Port())]
	s := h.s
	if s == nil || h.k.SSRC != ssrc || h.k.Src != d.Src || h.k.Dst != d.Dst {
		k := Key{Src: d.Src, Dst: d.Dst, SSRC: ssrc}
		var ok bool
		if s, ok = a.streams.get(k); !ok {
			if s = a.newStream(k, d.Time); s == nil {
				return
			}
		}
		*h = hotStream{k: k, s: s}
	}
	a.st.RTPPackets++
	if _, event := s.clockFor(a.hdr.PT); s.srtpKeyed {
		// Sequence, timestamp and SSRC are clear in SRTP (RFC 3711 §3.1):
		// the figures below come from them as for RTP; only the payload
		// needs the key.
		s.unprotect(a.dialogs, &a.hdr, b, event)
	}
	if s.add(t, &a.hdr, len(b), int64(a.opt.Interval)) {
		a.restarts++
	}
	s.last = d.Time
	if len(s.dtmf.emitted) > 0 {
		a.publishDTMF(s)
	}
	if v := s.shape(); v != s.weighed {
		// Last: growing may evict s, the oldest when every stream is live,
		// as adding a stream would, and eviction takes off what s is
		// charged now.
		delta := weightOf(v) - weightOf(s.weighed)
		s.weighed = v
		a.streams.grow(delta)
	}
}

// newStreamTable is the streams' table: bounded by their share of
// MaxBytes, each charged what it holds, when the options have one, else
// by MaxStreams alone.
func newStreamTable(o Options) *fifo[Key, *stream] {
	if o.streamShare > 0 {
		return newWeighedFIFO[Key](o.MaxStreams, o.streamShare, (*stream).charge, streamOrderBytes)
	}
	return newFIFO[Key, *stream](o.MaxStreams)
}

// newStream starts a stream for k if either address was signalled, or
// by heuristic when enabled; it returns nil for RTP nobody signalled.
func (a *Analyser) newStream(k Key, t time.Time) *stream {
	ep, ok := a.endpoints.get(k.Dst)
	if !ok || ep.rtcp {
		ep, ok = a.endpoints.get(k.Src)
	}
	if ok && ep.rtcp {
		ok = false
	}
	if !ok {
		if !a.opt.Heuristic || !plausiblePorts(k) {
			a.st.Unsignalled++
			return nil
		}
		ep = nil
	}
	a.ids++
	s := &stream{id: a.ids, key: k, ep: ep, first: t, last: t, clockPT: -1, confirmed: ep != nil}
	s.iv.limit = a.opt.MaxIntervals
	if ep != nil {
		s.callID = ep.callID
		ep.streams++
	}
	s.weighed = s.shape()
	a.streams.add(k, s)
	return s
}

// plausiblePorts keeps heuristic detection off well-known services
// (DNS, NTP, SNMP, syslog …): RTP uses unprivileged ports.
func plausiblePorts(k Key) bool {
	const minRTPPort = 1024
	return k.Src.Port() >= minRTPPort && k.Dst.Port() >= minRTPPort
}

func (a *Analyser) rtcp(d *netdecode.Datagram) {
	ep, ok := a.endpoints.get(d.Dst)
	if !ok {
		ep, ok = a.endpoints.get(d.Src)
	}
	switch {
	case ok:
		if dm := a.dialogs.of(ep); dm != nil && dm.noteRTCP(d.Src, d.Dst, d.Time) { // for export_capture
			a.dialogs.weigh(dm)
		}
		if ep.media.SRTP() != "" {
			// SRTCP (RFC 3711 §3.4) keeps only its first 8 bytes clear:
			// parsed, the encrypted rest would be reports nobody sent.
			a.st.SRTCPUnread++
			return
		}
	case !a.opt.Heuristic:
		a.st.Unsignalled++
		return
	}
	rs, err := ParseRTCP(d.Payload)
	if err != nil {
		a.st.RTCPMalformed++
	}
	if len(rs) > 0 {
		a.st.RTCPPackets++
	}
	for _, r := range rs {
		r.Time, r.Src, r.Dst = d.Time, d.Src, d.Dst
		if a.reports.push(r) {
			a.st.ReportsOverwrote++
		}
	}
}

func (a *Analyser) publishDTMF(s *stream) {
	for _, p := range s.dtmf.emitted {
		if p.repeatOf {
			if e := a.lastEvent[s.key]; e != nil {
				e.EndRepeats++
			}
			continue
		}
		dur := float64(p.duration) / 8 // RFC 4733 duration is in 8 kHz units for DTMF
		e := &Event{Time: time.Unix(0, p.at).UTC(), CallID: s.callID, Digit: digitName(p.code), Method: MethodRFC4733,
			DurationMs: &dur, Stream: StreamID(s.key), EndSeen: p.end}
		a.lastEvent[s.key] = e
		if a.events.push(e) {
			a.st.EventsOverwrote++
		}
	}
	s.dtmf.emitted = s.dtmf.emitted[:0]
}

// sdpType is the Content-Type of an SDP body (RFC 4566 §8.1).
const sdpType = "application/sdp"

// methodName is b as a string, without a copy for the methods that carry
// SDP or end a call: a string per message was most of this hook's garbage.
func methodName(b []byte) string {
	switch string(b) {
	case "INVITE":
		return "INVITE"
	case "ACK":
		return "ACK"
	case "BYE":
		return "BYE"
	case "UPDATE":
		return "UPDATE"
	case "PRACK":
		return "PRACK"
	case "INFO":
		return "INFO"
	}
	return string(b)
}

// SIPMessage implements sip.MediaHook: SDP bodies and INFO digits.
func (a *Analyser) SIPMessage(meta sip.Meta, m *sip.Parsed) {
	id := m.Get(sip.HCallID)
	if len(id) == 0 {
		return
	}
	// Decide on the borrowed bytes first: most messages carry nothing
	// for media, and strings for them would be garbage per message.
	mb := m.Method
	if !m.Request {
		mb = m.CSeqMethod
	}
	// Only a body has a type that matters: most messages have none.
	var ct []byte
	if len(m.Body) > 0 {
		ct = bytes.TrimSpace(m.Get(sip.HContentType))
	}
	isSDP := len(ct) >= len(sdpType) && bytes.EqualFold(ct[:len(sdpType)], []byte(sdpType))
	isInfo := m.Request && string(mb) == "INFO" && len(m.Body) > 0
	final := !m.Request && string(mb) == "INVITE" && m.StatusCode >= 200
	if !isSDP && !isInfo && !final && string(mb) != "BYE" {
		return
	}
	method := methodName(mb)
	a.mu.FeedLock()
	defer a.mu.FeedUnlock()
	d, h, ok := a.dialogs.lookup(id)
	var callID string
	if ok {
		callID = d.callID
	} else {
		if !isSDP && !isInfo {
			return
		}
		callID = string(id)
		// A call's offer and answer, and their two media addresses, in
		// arrays of two rather than grown by append (1, then 2), made in
		// one allocation with the dialog: the same bytes (480) as the
		// three apart. A list that outgrows its array moves out, as
		// append does. The dialog is accounted at typicalSDPEvents and
		// maxEndpointsPerDialog whatever it holds (footprint.go).
		nd := &newDialog{}
		d = &nd.d
		d.callID, d.created, d.sdp, d.endpoints = callID, meta.Time, nd.sdp[:0], nd.endpoints[:0]
		a.dialogs.add(h, d)
	}
	switch {
	case method == "BYE":
		d.ended = true
	case final:
		d.final = m.StatusCode
		if m.StatusCode >= 300 {
			d.pending = false // the offer died with the transaction
		}
	}
	if isInfo {
		if digit, dur, ok := parseInfoDTMF(ct, m.Body); ok {
			if a.events.push(&Event{Time: meta.Time.UTC(), CallID: callID, Digit: digit, Method: MethodSIPInfo, DurationMs: dur, EndSeen: true}) {
				a.st.EventsOverwrote++
			}
		}
	}
	if !isSDP {
		return
	}
	if sdp.SameOrigin(m.Body, d.lastOrigin(meta.Src)) {
		// The last body from src carried the same o= line (same session
		// version): RFC 3264 §8 says a changed session must bump the
		// version, so this is the same description again, a
		// retransmission or a 200 repeating a reliable 183's answer. Told
		// before parsing: a retransmitted body costs a scan, not a parse.
		return
	}
	s, err := sdp.Parse(m.Body)
	if err != nil {
		a.st.SDPInvalid++
		return
	}
	label := method
	if !m.Request {
		label = responseLabel(m.StatusCode, method)
	}
	role := RoleOffer
	if d.pending {
		role = RoleAnswer
	}
	d.pending = role == RoleOffer
	a.addSDP(d, SDPEvent{Time: meta.Time.UTC(), From: meta.Src, To: meta.Dst, Message: label, Role: role, Session: s})
}

// newDialog is a dialog's media with its lists' first arrays.
type newDialog struct {
	d         dialogMedia
	sdp       [2]SDPEvent
	endpoints [2]netip.AddrPort
}

// responseLabel is "code method": the answers most calls carry SDP in
// are constants, the rest built.
func responseLabel(code int, method string) string {
	if method == "INVITE" {
		switch code {
		case 200:
			return "200 INVITE"
		case 183:
			return "183 INVITE"
		case 180:
			return "180 INVITE"
		}
	}
	return strconv.Itoa(code) + " " + method
}

// ring is a bounded append-only list; push reports an overwrite.
type ring[T any] struct {
	items []T
	head  int
	limit int
}

func (r *ring[T]) push(v T) bool {
	if len(r.items) < r.limit {
		r.items = append(r.items, v)
		return false
	}
	r.items[r.head] = v
	r.head = (r.head + 1) % r.limit
	return true
}

func (r *ring[T]) each(fn func(T)) {
	n := len(r.items)
	for i := range n {
		fn(r.items[(r.head+i)%n])
	}
}
