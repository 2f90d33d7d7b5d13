package netdecode

import (
	"net/netip"
	"time"

	"fieldtap/drivers/wire"
)

// Defaults for Options; each bound keeps a hostile or lossy capture from
// growing memory without limit.
const (
	// DefaultMaxFragDatagrams bounds datagrams awaiting fragments; a SPAN
	// port rarely carries more than a handful at once.
	DefaultMaxFragDatagrams = 1024
	// DefaultMaxFragBytes bounds the bytes held by all pending datagrams.
	DefaultMaxFragBytes = 8 << 20
	// DefaultFragTimeout is Linux's ipfrag_time (30 s): a datagram still
	// incomplete after it will never complete.
	DefaultFragTimeout = 30 * time.Second
	// DefaultMaxStreams bounds tracked TCP directions (two per connection).
	DefaultMaxStreams = 8192
	// DefaultMaxStreamBuffer bounds the unconsumed bytes of one direction:
	// 4 × the largest SIP message we accept (64 KiB).
	DefaultMaxStreamBuffer = 256 << 10
	// DefaultMaxOutOfOrder bounds segments held waiting for a gap to fill.
	DefaultMaxOutOfOrder = 64
	// DefaultStreamIdle closes a direction with no segment for this long
	// (capture time), like a NAT table's TCP timeout for idle flows.
	DefaultStreamIdle = 10 * time.Minute
)

// maxEncapsulation bounds nested headers (VLAN tags, IP in IP) per frame.
const maxEncapsulation = 8

// Options bound a Decoder; zero fields take the defaults.
type Options struct {
	MaxFragDatagrams int
	MaxFragBytes     int
	FragTimeout      time.Duration
	MaxStreams       int
	MaxStreamBuffer  int
	MaxOutOfOrder    int
	StreamIdle       time.Duration
	// TrackFrames keeps, for every fragment and buffered TCP byte, the
	// tag of the frame that carried it (DecodeTagged), so a handler can
	// tell which frames made a datagram or a message (Datagram.Frames,
	// Stream.Frames). Export turns it on; live analysis does not pay.
	TrackFrames bool
	// VXLANPorts are the UDP destination ports read as VXLAN; nil takes
	// DefaultVXLANPort alone, and ports past MaxVXLANPorts are not read
	// (configuration refuses more).
	VXLANPorts []uint16
}

func (o *Options) fill() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxFragDatagrams, DefaultMaxFragDatagrams)
	def(&o.MaxFragBytes, DefaultMaxFragBytes)
	def(&o.MaxStreams, DefaultMaxStreams)
	def(&o.MaxStreamBuffer, DefaultMaxStreamBuffer)
	def(&o.MaxOutOfOrder, DefaultMaxOutOfOrder)
	if o.FragTimeout <= 0 {
		o.FragTimeout = DefaultFragTimeout
	}
	if o.StreamIdle <= 0 {
		o.StreamIdle = DefaultStreamIdle
	}
	if o.VXLANPorts == nil {
		o.VXLANPorts = []uint16{DefaultVXLANPort}
	}
}

// Datagram is one UDP payload. Payload is borrowed: it is valid only during
// the Handler call.
type Datagram struct {
	Time       time.Time
	Src, Dst   netip.AddrPort
	Payload    []byte
	Fragmented bool // the IP datagram was reassembled from fragments
	// Frames are the tags of the frames that carried the datagram, every
	// fragment in offset order; set only with Options.TrackFrames, and
	// borrowed like Payload.
	Frames []uint64
}

// Handler receives what a Decoder extracts. Both methods run on the
// decoder's goroutine.
type Handler interface {
	// UDP receives one datagram: d is the decoder's, valid for the call
	// (a pointer, not a copy of its 14 words a packet).
	UDP(d *Datagram)
	// TCP receives the in-order, not yet consumed bytes of one direction
	// (borrowed) and returns how many it consumed; the rest is offered
	// again, with more appended, when the next segment arrives.
	TCP(s *Stream, t time.Time, data []byte) int
}

// Decoder decodes frames for one port. Not safe for concurrent Decode.
type Decoder struct {
	opt     Options
	h       Handler
	seg     SegmentObserver // h, when it observes segments
	c       counters
	frag    *defragger
	streams *streams
	now     time.Time
	tag     uint64   // the frame being decoded (DecodeTagged)
	tags    []uint64 // scratch for an unfragmented datagram's Frames
	dg      Datagram // the one UDP hands its handler, reused
	n       perFrame // this frame's counts, added to c once it is decoded
	// vxlanPorts are Options.VXLANPorts held in the decoder, so checking a
	// datagram's port reads no slice header.
	vxlanPorts [MaxVXLANPorts]uint16
	nVXLAN     int
}

// perFrame is what one frame adds to the counters.
type perFrame struct{ ipv4, ipv6, udp uint64 }

// New returns a decoder that passes payloads to h.
func New(o Options, h Handler) *Decoder {
	o.fill()
	d := &Decoder{opt: o, h: h}
	d.seg, _ = h.(SegmentObserver)
	d.nVXLAN = copy(d.vxlanPorts[:], o.VXLANPorts)
	d.frag = newDefragger(o, &d.c)
	d.streams = newStreams(o, &d.c)
	return d
}

// Stats returns the decoder's counters. It waits while the decoder is
// held (Hold).
func (d *Decoder) Stats() Stats { return d.c.snapshot() }

// Tunnels returns the tunnel headers opened so far without taking the
// counters' lock: only the goroutine that calls Decode may read it,
// between calls (a caller splitting one decoder's counts by port).
func (d *Decoder) Tunnels() TunnelCounts { return d.c.tunnels }

// Hold keeps the counters' lock for a batch of Decode calls on the
// decoder's goroutine, until Release: the batch pays one lock, not one a
// frame.
func (d *Decoder) Hold() { d.c.mu.Hold() }

// Release ends Hold.
func (d *Decoder) Release() { d.c.mu.Release() }

// Decode handles one frame captured at t. data is borrowed for the call.
func (d *Decoder) Decode(t time.Time, link wire.LinkType, data []byte) {
	d.DecodeTagged(0, t, link, data)
}

// DecodeTagged is Decode for a frame the caller names by tag; with
// Options.TrackFrames the tag comes back in Datagram.Frames and
// Stream.Frames for the payloads the frame carried.
func (d *Decoder) DecodeTagged(tag uint64, t time.Time, link wire.LinkType, data []byte) {
	d.now, d.tag = t, tag
	d.n = perFrame{}
	// Counted even if a handler panics (the SIP analyser recovers).
	defer d.publish(link)
	d.frag.expire(t)
	d.streams.expire(t)
	d.link(link, data)
}

// publish adds the frame's counts under one lock; table sizes go through
// the counters too, so Stats never reads the decoder's maps from another
// goroutine.
func (d *Decoder) publish(link wire.LinkType) {
	c := &d.c
	p, pb := d.frag.pending()
	o := d.streams.open()
	c.mu.FeedLock()
	c.s.Frames++
	c.links[linkIndex(link)]++
	c.s.IPv4 += d.n.ipv4
	c.s.IPv6 += d.n.ipv6
	c.s.UDP += d.n.udp
	c.s.Frag.Pending, c.s.Frag.PendingB, c.s.TCP.Open = p, pb, o
	c.mu.FeedUnlock()
}
