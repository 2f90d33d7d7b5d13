package netdecode

import (
	"maps"

	"fieldtap/services/batchlock"
)

// Reasons a frame or segment yields no payload, as counted in Stats.Skipped.
const (
	SkipLinkType  = "unsupported_link_type"
	SkipTruncated = "truncated"
	SkipNotIP     = "not_ip"
	SkipBadIP     = "bad_ip_header"
	SkipProto     = "other_ip_protocol"
	SkipTooDeep   = "too_many_encapsulations"
	SkipBadUDP    = "bad_udp_header"
	SkipBadTCP    = "bad_tcp_header"
	// SkipTunnel is a tunnel the decoder does not open (EtherIP, L2TPv3,
	// GRE carrying PPP or another protocol, GRE version 1 or with RFC 1701
	// routing, an ERSPAN version or frame type it does not know, MPLS over
	// something other than IP or an Ethernet pseudowire): remote SPAN may
	// arrive this way, and whatever it carries is not analysed, so answers
	// must say so.
	SkipTunnel = "tunnel_not_decoded"
	// SkipEncrypted is IPsec ESP: its payload cannot be read.
	SkipEncrypted = "encrypted_ipsec"
)

// Counters of fragment reassembly (Stats.Frag).
type FragStats struct {
	Fragments   uint64 // fragment packets seen
	Reassembled uint64 // datagrams completed
	TimedOut    uint64 // datagrams dropped incomplete after FragTimeout
	TableFull   uint64 // datagrams evicted because MaxFragDatagrams were pending
	Oversize    uint64 // datagrams refused for exceeding maxDatagram or MaxFragBytes
	Overlapping uint64 // fragments overlapping inconsistently, datagram dropped
	Pending     int    // datagrams waiting now
	PendingB    int    // bytes they hold
}

// TCPStats are counters of TCP stream reassembly (Stats.TCP).
type TCPStats struct {
	Segments      uint64
	Streams       uint64 // directions ever tracked
	Open          int    // directions tracked now
	Evicted       uint64 // directions dropped because MaxStreams were open
	IdleClosed    uint64 // directions dropped after StreamIdle without a segment
	Retransmitted uint64 // segments wholly before the expected sequence number
	OutOfOrder    uint64 // segments held for a gap to fill
	Gaps          uint64 // gaps given up on (data lost to the analyser)
	BufferFull    uint64 // unconsumed bytes discarded at MaxStreamBuffer
	// TagsDropped counts frame tags dropped past maxTagSpans on one
	// direction (Options.TrackFrames only): a message then lacks a frame.
	TagsDropped uint64
}

// Stats describes what a Decoder has seen.
type Stats struct {
	Frames   uint64
	IPv4     uint64
	IPv6     uint64
	UDP      uint64
	Skipped  map[string]uint64 // by reason
	Frag     FragStats
	TCP      TCPStats
	LinkSeen map[string]uint64 // frames by link type name
	// Tunnels counts the tunnel headers opened by kind (TunnelGRE, …):
	// a frame in GRE in GRE counts twice.
	Tunnels map[string]uint64
}

type counters struct {
	// mu is held by the decoder's goroutine for a batch (Decoder.Hold);
	// its own updates take it with FeedLock, readers with Lock.
	mu batchlock.Mutex
	s  Stats
	// links counts frames by link type name (linkNames); snapshot names
	// them.
	links [len(linkNames)]uint64
	// tunnels counts headers opened by kind (tunnelNames).
	tunnels [tunnelKindCount]uint64
}

// tunnel counts one tunnel header opened; only a frame in a tunnel pays.
func (c *counters) tunnel(kind int) {
	c.mu.FeedLock()
	c.tunnels[kind]++
	c.mu.FeedUnlock()
}

func (c *counters) skip(reason string) {
	c.mu.FeedLock()
	if c.s.Skipped == nil {
		c.s.Skipped = map[string]uint64{}
	}
	c.s.Skipped[reason]++
	c.mu.FeedUnlock()
}

func (c *counters) update(fn func(s *Stats)) {
	c.mu.FeedLock()
	fn(&c.s)
	c.mu.FeedUnlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Skipped = maps.Clone(c.s.Skipped)
	for i, n := range c.links {
		if n == 0 {
			continue
		}
		if s.LinkSeen == nil {
			s.LinkSeen = map[string]uint64{}
		}
		s.LinkSeen[linkNames[i]] = n
	}
	s.Tunnels = TunnelCounts(c.tunnels).Map()
	return s
}

// TunnelCounts are tunnel headers opened by kind, indexed like
// TunnelKinds: a port's share of a shared decoder is the difference of
// two readings around its frames.
type TunnelCounts [tunnelKindCount]uint64

// TunnelKinds names TunnelCounts' entries.
func TunnelKinds() []string { return tunnelNames[:] }

// Add adds u's counts to t.
func (t *TunnelCounts) Add(u TunnelCounts) {
	for i, n := range u {
		t[i] += n
	}
}

// Sub returns t less u.
func (t TunnelCounts) Sub(u TunnelCounts) TunnelCounts {
	for i := range t {
		t[i] -= u[i]
	}
	return t
}

// Map returns the non-zero counts by kind name; nil when none.
func (t TunnelCounts) Map() map[string]uint64 {
	var m map[string]uint64
	for i, n := range t {
		if n == 0 {
			continue
		}
		if m == nil {
			m = map[string]uint64{}
		}
		m[tunnelNames[i]] = n
	}
	return m
}
