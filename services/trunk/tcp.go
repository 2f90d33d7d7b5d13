package trunk

import (
	"time"

	"fieldtap/services/netdecode"
)

// TCPCounts are one direction's segment analysis, counted as tshark 4.0's
// tcp.analysis does (epan/dissectors/packet-tcp.c), with these
// definitions:
//
//   - Retransmissions: a segment carrying data, SYN or FIN whose sequence
//     number is below the highest next sequence number seen in its
//     direction, not a keep-alive and not out of order: tshark's
//     tcp.analysis.retransmission, which fast and spurious retransmissions
//     also carry.
//   - FastRetransmissions: of those, the ones at the sequence number the
//     other side acknowledged twice more in duplicate, within 20 ms of its
//     last acknowledgement (tcp.analysis.fast_retransmission).
//   - SpuriousRetransmissions: of those, the data the other side had
//     already acknowledged (tcp.analysis.spurious_retransmission, which
//     tshark 4.0 also flags tcp.analysis.retransmission).
//   - OutOfOrder: a segment below the highest next sequence number that
//     came sooner after its direction's previous segment than the
//     connection's initial round trip (3 ms when the handshake was not
//     seen) and does not end at that number (tcp.analysis.out_of_order).
//   - ZeroWindows: a segment advertising a window of 0 without SYN, FIN
//     or RST (tcp.analysis.zero_window).
//   - Resets: segments with RST (tcp.flags.reset == 1).
//
// The box sees a flow from its first captured segment: joined mid-stream,
// the first segment of each direction sets the sequence baseline, as it
// does for tshark.
type TCPCounts struct {
	Segments                uint64
	Bytes                   uint64 // payload bytes
	Retransmissions         uint64
	FastRetransmissions     uint64
	SpuriousRetransmissions uint64
	OutOfOrder              uint64
	ZeroWindows             uint64
	Resets                  uint64
}

// defaultOutOfOrder is tshark's out-of-order threshold without a round
// trip measured from the handshake.
const defaultOutOfOrder = 3 * time.Millisecond

// fastRetransmitWindow is how soon after the other side's last
// acknowledgement a retransmission counts as fast.
const fastRetransmitWindow = 20 * time.Millisecond

// direction is one side's sequence state.
type direction struct {
	hasNext     bool
	nextSeq     uint32 // highest sequence number sent, plus its length
	hasAck      bool
	lastAck     uint32
	lastAckTime time.Time
	window      uint16
	dupAcks     int
	lastSeg     time.Time
	c           TCPCounts
}

// seqLess compares sequence numbers modulo 2^32 (RFC 1982).
func seqLess(a, b uint32) bool { return int32(a-b) < 0 }

// analyse counts segment g, sent by fwd to rev, and updates fwd's state.
// irtt is the connection's initial round trip, 0 when unknown.
func analyse(fwd, rev *direction, g netdecode.Segment, irtt time.Duration) {
	c := &fwd.c
	c.Segments++
	c.Bytes += uint64(g.Len)
	syn, fin, rst := g.Flags&netdecode.FlagSYN != 0, g.Flags&netdecode.FlagFIN != 0, g.Flags&netdecode.FlagRST != 0
	ack := g.Flags&netdecode.FlagACK != 0
	if rst {
		c.Resets++
	}
	if g.Window == 0 && !syn && !fin && !rst {
		c.ZeroWindows++
	}
	keepAlive := g.Len <= 1 && !syn && !fin && !rst && fwd.hasNext && g.Seq == fwd.nextSeq-1
	probe := g.Len == 1 && fwd.hasNext && g.Seq == fwd.nextSeq && rev.hasAck && rev.window == 0
	dupAck := g.Len == 0 && g.Window != 0 && !syn && !fin && !rst && fwd.hasNext && fwd.hasAck &&
		g.Window == fwd.window && g.Seq == fwd.nextSeq && g.Ack == fwd.lastAck
	if (g.Len > 0 || syn || fin) && fwd.hasNext && seqLess(g.Seq, fwd.nextSeq) && !keepAlive {
		ooo := irtt
		if ooo <= 0 {
			ooo = defaultOutOfOrder
		}
		switch {
		case rev.dupAcks >= 2 && rev.hasAck && rev.lastAck == g.Seq && g.Time.Sub(rev.lastAckTime) < fastRetransmitWindow:
			c.FastRetransmissions++
			c.Retransmissions++
		case g.Len > 0 && g.Time.Sub(fwd.lastSeg) < ooo && fwd.nextSeq != g.Seq+uint32(g.Len):
			c.OutOfOrder++
		case g.Len > 0 && rev.hasAck && !seqLess(rev.lastAck, g.Seq+uint32(g.Len)):
			c.SpuriousRetransmissions++
			c.Retransmissions++
		default:
			c.Retransmissions++
		}
	}
	next := g.Seq + uint32(g.Len)
	if syn || fin {
		next++
	}
	if (!fwd.hasNext || seqLess(fwd.nextSeq, next)) && !probe {
		fwd.nextSeq, fwd.hasNext = next, true
	}
	if dupAck {
		fwd.dupAcks++
	} else {
		fwd.dupAcks = 0
	}
	if ack {
		fwd.lastAck, fwd.hasAck, fwd.lastAckTime = g.Ack, true, g.Time
	}
	fwd.window = g.Window
	fwd.lastSeg = g.Time
}
