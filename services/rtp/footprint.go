package rtp

import (
	"net/netip"
	"unsafe"

	"fieldtap/services/heapsize"
	"fieldtap/services/sdp"
)

// What the analyser's tables cost in the heap, per entry, for the memory
// budget (issue #14). Under a byte share (fieldtapd always runs under
// one) streams, endpoints and dialogs are each charged what they hold,
// weighed again as they grow, and each table is bounded by its share's
// bytes: a dialog's SDP is what its sender wrote, parsed, and
// sdp.Session.Bytes says what it holds (up to about 20 KiB a body).
// RTCP reports and DTMF events are fixed-size but for their bounded
// lists, so their figures are worst cases. Options with counts only
// (tests) charge every entry a typical or worst figure.
const (
	// typicalSDPBytes is an offer and an answer parsed: one audio
	// section of three formats each, about 1 KiB apiece (a count-only
	// dialog's charge).
	typicalSDPBytes = 2 << 10
	// typicalCallID is a Call-ID's bytes (hex and a host: ~50).
	typicalCallID = 64
	// typicalSDPEvents is the offer and answer of a call plus a re-INVITE.
	typicalSDPEvents = 4
	// srtpSessionBytes is an SRTP stream's key state (srtp.Session: an
	// AES key schedule, HMAC-SHA1 and its scratch), measured at about
	// 1.35 KiB with a small event's buffer (footprint_test.go), plus the
	// buffer's bound, maxEventPacket. A stream with SRTP state is
	// charged it whole.
	srtpSessionBytes = 1400 + maxEventPacket
)

// Shares of Options.MaxBytes, in percent: streams carry the interval
// history and are the most numerous.
const (
	streamsPct   = 50
	endpointsPct = 24
	dialogsPct   = 16
	reportsPct   = 5
	eventsPct    = 5
)

const ptr = int(unsafe.Sizeof(uintptr(0)))

// streamBytes is one stream at its fullest: an SRTP stream with an
// interval ring of MaxIntervals, its key in the order and, signalled, a
// typical endpoint it holds. It is the charge of every stream when the
// streams are bounded by count alone (no MaxBytes).
func streamBytes(o Options) int {
	return int(weightOf(uint64(o.MaxIntervals)|srtpShape)) + keyBytes + endpointBytes()
}

// streamStateBytes is what every stream holds whatever it carries: its
// state, its table entry and its last-event entry. Its key in the order
// is charged with the order's array, by its length (streamOrderBytes).
var streamStateBytes = heapsize.Pointers(int(unsafe.Sizeof(stream{}))) + 2*heapsize.MapEntry(keyBytes+ptr)

// streamOrderBytes is the streams' ring of n keys, charged as the table
// grows it (fifo.orderBytes).
func streamOrderBytes(n int) int64 { return int64(heapsize.Pointers(n * keyBytes)) }

const (
	keyBytes      = int(unsafe.Sizeof(Key{}))
	intervalBytes = int(unsafe.Sizeof(Interval{}))
	pendingBytes  = int(unsafe.Sizeof(pendingEvent{}))
	// A shape's bit (stream.shape) above the two capacities.
	srtpShape = 1 << 63
)

// shape is what a stream's own weight depends on: its interval ring's
// and pending events' capacities and whether it has SRTP state, told
// apart at the cost of a few loads, so a packet weighs its stream again
// only when its shape changed.
func (s *stream) shape() uint64 {
	v := uint64(cap(s.iv.ring)) | uint64(cap(s.dtmf.emitted))<<32
	if s.srtp != nil {
		v |= srtpShape
	}
	return v
}

// weightOf is what a stream of shape v holds itself: its fixed part, the
// interval ring's and pending DTMF events' arrays and its SRTP state once
// it has one (at its bound: the key state and the event buffer).
func weightOf(v uint64) int64 {
	n := streamStateBytes + heapsize.Bytes(int(uint32(v))*intervalBytes) + heapsize.Bytes(int(v>>32&(1<<30-1))*pendingBytes)
	if v&srtpShape != 0 {
		n += srtpBytes()
	}
	return int64(n)
}

// charge is what a stream is charged under a share: its own weight,
// charged again as it grows (Datagram), and the weight of the endpoint
// it holds, read as it is now: the stream keeps the endpoint, and its
// line's session, alive after the endpoints' table has evicted it. When
// a re-INVITE changes an endpoint's weight, its streams' table is
// charged the change for each of them at once (signal), so a stream that
// carries no packet after is charged what it holds too.
func (s *stream) charge() int64 {
	n := weightOf(s.weighed)
	if s.ep != nil {
		n += int64(s.ep.weight)
	}
	return n
}

// srtpBytes is a keyed SRTP stream's state beyond the stream itself.
func srtpBytes() int {
	return heapsize.Pointers(int(unsafe.Sizeof(srtpState{}))) + srtpSessionBytes
}

// endpointBytes is a typical endpoint's charge when the endpoints are
// bounded by count alone (no MaxBytes), as when the table was a fifo: an
// endpoint with a copy of its m= line, a Go map entry and an order key.
// Under a share each endpoint is charged what it holds (endpointWeight).
func endpointBytes() int {
	addr := int(unsafe.Sizeof(netip.AddrPort{}))
	withMedia := int(unsafe.Sizeof(endpoint{})) - ptr + int(unsafe.Sizeof(sdp.Media{}))
	return heapsize.Pointers(withMedia) + heapsize.MapEntry(addr+ptr) + addr
}

// dialogBytes is a typical dialog's charge when the dialogs are bounded
// by count alone (no MaxBytes). Under a share each dialog is charged
// what it holds (dialogMedia.bytes).
func dialogBytes() int {
	addr := int(unsafe.Sizeof(netip.AddrPort{}))
	return heapsize.Pointers(int(unsafe.Sizeof(dialogMedia{}))) + heapsize.MapEntry(int(unsafe.Sizeof(""))+ptr) + int(unsafe.Sizeof("")) +
		heapsize.Bytes(typicalCallID) + typicalSDPBytes + heapsize.Pointers(typicalSDPEvents*int(unsafe.Sizeof(SDPEvent{}))) +
		heapsize.Pointers(maxEndpointsPerDialog*addr) + heapsize.Pointers(maxRTCPFlowsPerDialog*int(unsafe.Sizeof(flowSpan{})))
}

// dialogStateBytes is what every dialog holds whatever it carries: its
// allocation with its lists' first arrays (newDialog). Its table entry
// and index slots are charged with the table's arrays.
var dialogStateBytes = heapsize.Pointers(int(unsafe.Sizeof(newDialog{})))

// bytes is what d holds: its state, its Call-ID's bytes, its lists'
// arrays once they outgrow the first ones, and the sessions it keeps
// (sdp.Session.Bytes). The dialogs' table charges it when it adds d and
// again as d grows (dialogTable.weigh).
func (d *dialogMedia) bytes() int64 {
	n := dialogStateBytes + heapsize.String(d.callID) + d.sdpBytes
	if cap(d.sdp) > len(newDialog{}.sdp) {
		n += heapsize.Pointers(cap(d.sdp) * int(unsafe.Sizeof(SDPEvent{})))
	}
	if cap(d.endpoints) > len(newDialog{}.endpoints) {
		n += heapsize.Pointers(cap(d.endpoints) * int(unsafe.Sizeof(netip.AddrPort{})))
	}
	n += heapsize.Pointers(cap(d.rtcp) * int(unsafe.Sizeof(flowSpan{})))
	return int64(n)
}

// endpointStateBytes is what every endpoint holds whatever its line
// carries. Its table entry and index slots are charged with the table's
// arrays.
var endpointStateBytes = heapsize.Pointers(int(unsafe.Sizeof(endpoint{})))

// endpointWeight is what an endpoint holds: itself, the parsed session
// its line lies in (session bytes: the endpoint keeps it alive after
// the dialog has gone; while the dialog keeps it, and for the line's
// other endpoints, it is charged again) and its call's Call-ID.
func endpointWeight(session int, callID string) uint32 {
	return uint32(endpointStateBytes + session + heapsize.String(callID))
}

// indexBytes is a table's index of n slots (ringIndex).
func indexBytes(n int) int64 { return int64(heapsize.Bytes(n * 8)) }

func reportBytes() int {
	return int(unsafe.Sizeof(Report{})) + heapsize.Pointers(maxReportBlocks*int(unsafe.Sizeof(ReportBlock{})))
}

func eventBytes() int {
	return ptr + heapsize.Pointers(int(unsafe.Sizeof(Event{}))) + heapsize.Bytes(8) + heapsize.Bytes(typicalCallID)
}

// analyserBytes is the analyser itself, its stream cache included.
func analyserBytes() int { return heapsize.Pointers(int(unsafe.Sizeof(Analyser{}))) }

// Footprint is what an analyser with options o holds at its bounds.
func (o Options) Footprint() int64 {
	o.fill()
	return int64(analyserBytes()) + bound(o.streamShare, o.MaxStreams, streamBytes(o)) + bound(o.endpointShare, o.MaxEndpoints, endpointBytes()) +
		bound(o.dialogShare, o.MaxDialogs, dialogBytes()) + int64(o.MaxReports)*int64(reportBytes()) + int64(o.MaxEvents)*int64(eventBytes())
}

// bound is the most a table may be charged: its share of MaxBytes, else
// its count bound at each entry's charge without one.
func bound(share int64, count, each int) int64 {
	if share > 0 {
		return share
	}
	return int64(count) * int64(each)
}

// total is what a ringTable's entries are charged: what its byte
// bound counts, else each entry at each. The caller holds mu.
func (t *ringTable[E]) total(each int) int64 {
	if t.maxBytes > 0 {
		return t.bytes
	}
	return int64(t.n) * int64(each)
}

// streamsBytes is what the kept streams are charged: each its weight
// when a share bounds them, else each at its fullest. The caller holds mu.
func (a *Analyser) streamsBytes() int64 {
	if a.streams.charge != nil {
		return a.streams.bytes
	}
	return int64(a.streams.len()) * int64(streamBytes(a.opt))
}

// fromBytes derives the count bounds left unset from MaxBytes, each table
// taking its percentage.
func (o *Options) fromBytes() {
	if o.MaxBytes <= 0 {
		return
	}
	if o.MaxIntervals <= 0 {
		o.MaxIntervals = DefaultMaxIntervals
	}
	tables := max(o.MaxBytes-int64(analyserBytes()), 0)
	derive := func(v *int, pct int, each int) {
		if *v <= 0 {
			*v = max(int(tables*int64(pct)/100/int64(each)), 1)
		}
	}
	// Streams are charged what they hold (weightOf): the share bounds
	// their bytes, and the count bound is the most streams of the least
	// weight it holds, which the bytes reach first (each also has its key
	// in the order).
	o.streamShare = tables * streamsPct / 100
	derive(&o.MaxStreams, streamsPct, int(weightOf(0)))
	// Endpoints and dialogs too, each charged what it holds: the count
	// bounds are the most of the least weight (an endpoint of an empty
	// session, a dialog without SDP, each with a 16-byte Call-ID and its
	// entry and index slots) the shares hold, which the bytes reach first.
	o.endpointShare = tables * endpointsPct / 100
	derive(&o.MaxEndpoints, endpointsPct, endpointStateBytes+heapsize.Pointers(int(unsafe.Sizeof(sdp.Session{})))+heapsize.Bytes(16)+int(unsafe.Sizeof(endpointEntry{}))+2*8)
	o.dialogShare = tables * dialogsPct / 100
	derive(&o.MaxDialogs, dialogsPct, dialogStateBytes+heapsize.Bytes(16)+int(unsafe.Sizeof(dialogEntry{}))+2*8)
	derive(&o.MaxReports, reportsPct, reportBytes())
	derive(&o.MaxEvents, eventsPct, eventBytes())
}

// Usage is what the analyser holds against its bounds: the tables' entry
// counts, their accounted bytes, and the streams the bounds evicted (the
// store's items; the dialogs and endpoints evicted are in Stats, which
// the media tools' answers state).
type Usage struct {
	Streams, MaxStreams     int
	Endpoints, MaxEndpoints int
	Dialogs, MaxDialogs     int
	Bytes, MaxBytes         int64
	Evicted                 uint64
}

// Usage reports the tables against their bounds.
func (a *Analyser) Usage() Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.opt
	u := Usage{
		Streams: a.streams.len(), MaxStreams: o.MaxStreams,
		Endpoints: a.endpoints.len(), MaxEndpoints: o.MaxEndpoints,
		Dialogs: a.dialogs.len(), MaxDialogs: o.MaxDialogs,
		MaxBytes: o.Footprint(),
		Evicted:  a.streams.evicted,
	}
	u.Bytes = int64(analyserBytes()) + a.streamsBytes() + a.endpoints.total(endpointBytes()) +
		a.dialogs.total(dialogBytes()) + int64(len(a.reports.items))*int64(reportBytes()) + int64(len(a.events.items))*int64(eventBytes())
	return u
}
