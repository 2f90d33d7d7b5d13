package rtp

import (
	"net/netip"
	"unsafe"

	"fieldtap/services/heapsize"
	"fieldtap/services/sdp"
)

// What the analyser's tables cost in the heap, per entry, for the memory
// budget (issue #14). Under a byte share a stream is charged what it
// holds, weighed again as it grows (weightOf); endpoints, RTCP reports
// and DTMF events are fixed-size but for their bounded lists, so their
// figures are worst cases. A dialog's SDP is what its sender wrote, parsed: sdp bounds it
// (MaxMedia sections of MaxFormats formats with 128-byte values) far
// above what phones send, so a dialog is accounted at typicalSDPBytes of
// it, measured on generated and reference calls (footprint_test.go). A
// capture built to carry maximal SDP bodies on every call could hold more
// than its share; the count bounds still hold.
const (
	// typicalSDPBytes is an offer and an answer parsed: one audio
	// section of three formats each, about 1 KiB apiece.
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
	endpointsPct = 10
	dialogsPct   = 30
	reportsPct   = 5
	eventsPct    = 5
)

const ptr = int(unsafe.Sizeof(uintptr(0)))

// streamBytes is one stream at its fullest: a signalled SRTP stream with
// an interval ring of MaxIntervals, and its key in the order. It is the
// most one stream may be charged, and the charge of every stream when
// the streams are bounded by count alone (no MaxBytes).
func streamBytes(o Options) int {
	return int(weightOf(uint64(o.MaxIntervals)|srtpShape|signalledShape)) + keyBytes
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
	// A shape's bits (stream.shape) above the two capacities.
	srtpShape      = 1 << 63
	signalledShape = 1 << 62
)

// shape is what a stream's weight depends on: its interval ring's and
// pending events' capacities, whether it has SRTP state and whether it
// was signalled, told apart at the cost of a few loads, so a packet
// weighs its stream again only when its shape changed.
func (s *stream) shape() uint64 {
	v := uint64(cap(s.iv.ring)) | uint64(cap(s.dtmf.emitted))<<32
	if s.srtp != nil {
		v |= srtpShape
	}
	if s.ep != nil {
		v |= signalledShape
	}
	return v
}

// weightOf is what a stream of shape v holds: its fixed part, the
// interval ring's and pending DTMF events' arrays, its SRTP state once it
// has one (at its bound: the key state and the event buffer) and, when
// signalled, half of a dialog's charge: its endpoint keeps the dialog
// and its SDP alive after the dialogs' table has evicted them, which the
// dialogs' share then no longer counts (a call's two streams, half
// each). A stream is charged this when added and again as it grows
// (Datagram).
func weightOf(v uint64) int64 {
	n := streamStateBytes + heapsize.Bytes(int(uint32(v))*intervalBytes) + heapsize.Bytes(int(v>>32&(1<<30-1))*pendingBytes)
	if v&srtpShape != 0 {
		n += srtpBytes()
	}
	if v&signalledShape != 0 {
		n += dialogBytes() / 2
	}
	return int64(n)
}

// srtpBytes is a keyed SRTP stream's state beyond the stream itself.
func srtpBytes() int {
	return heapsize.Pointers(int(unsafe.Sizeof(srtpState{}))) + srtpSessionBytes
}

// endpointBytes is still what an endpoint holding a copy of its
// sdp.Media, a Go map entry and an order key cost, as when the table was
// a fifo: the endpoint now points at the Media (half of a 64-byte pair),
// its ring entry (48 bytes, up to a quarter more as append grew the
// ring) and index slots (8 bytes, up to four per entry) cost less
// (footprint in endpoints_test.go), and the figure derives the bound.
func endpointBytes() int {
	addr := int(unsafe.Sizeof(netip.AddrPort{}))
	withMedia := int(unsafe.Sizeof(endpoint{})) - ptr + int(unsafe.Sizeof(sdp.Media{}))
	return heapsize.Pointers(withMedia) + heapsize.MapEntry(addr+ptr) + addr
}

func dialogBytes() int {
	addr := int(unsafe.Sizeof(netip.AddrPort{}))
	return heapsize.Pointers(int(unsafe.Sizeof(dialogMedia{}))) + heapsize.MapEntry(int(unsafe.Sizeof(""))+ptr) + int(unsafe.Sizeof("")) +
		heapsize.Bytes(typicalCallID) + typicalSDPBytes + heapsize.Pointers(typicalSDPEvents*int(unsafe.Sizeof(SDPEvent{}))) +
		heapsize.Pointers(maxEndpointsPerDialog*addr) + heapsize.Pointers(maxRTCPFlowsPerDialog*int(unsafe.Sizeof(flowSpan{})))
}

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
	return int64(analyserBytes()) + o.streamsBound() + int64(o.MaxEndpoints)*int64(endpointBytes()) +
		int64(o.MaxDialogs)*int64(dialogBytes()) + int64(o.MaxReports)*int64(reportBytes()) + int64(o.MaxEvents)*int64(eventBytes())
}

// streamsBound is the most the streams may be charged: their share of
// MaxBytes, else MaxStreams at their fullest.
func (o Options) streamsBound() int64 {
	if o.streamShare > 0 {
		return o.streamShare
	}
	return int64(o.MaxStreams) * int64(streamBytes(o))
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
	derive(&o.MaxEndpoints, endpointsPct, endpointBytes())
	derive(&o.MaxDialogs, dialogsPct, dialogBytes())
	derive(&o.MaxReports, reportsPct, reportBytes())
	derive(&o.MaxEvents, eventsPct, eventBytes())
}

// Usage is what the analyser holds against its bounds: the tables' entry
// counts, their accounted bytes (each entry at its footprint), and the
// entries the bounds evicted.
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
		Evicted:  a.streams.evicted + a.endpoints.evicted + a.dialogs.evicted,
	}
	u.Bytes = int64(analyserBytes()) + a.streamsBytes() + int64(u.Endpoints)*int64(endpointBytes()) +
		int64(u.Dialogs)*int64(dialogBytes()) + int64(len(a.reports.items))*int64(reportBytes()) + int64(len(a.events.items))*int64(eventBytes())
	return u
}
