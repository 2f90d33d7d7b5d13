package netdecode

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"time"
)

const tcpMinHeader = 20

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpACK = 0x10
)

// Segment is one TCP segment's header as captured, before reassembly:
// what a per-flow observer needs to judge retransmissions, windows and
// resets, which the reassembled byte stream no longer shows.
type Segment struct {
	Time     time.Time
	Src, Dst netip.AddrPort
	Seq, Ack uint32
	// Flags are the header's flag byte (FIN 0x01, SYN 0x02, RST 0x04,
	// PSH 0x08, ACK 0x10, …).
	Flags uint8
	// Window is the advertised window as sent, not scaled.
	Window uint16
	Len    int // payload bytes
}

// The Segment.Flags bits an observer reads.
const (
	FlagFIN = tcpFIN
	FlagSYN = tcpSYN
	FlagRST = tcpRST
	FlagACK = tcpACK
)

// SegmentObserver is a Handler that also sees every TCP segment's header,
// before the decoder reassembles or drops it (a reset closes the stream,
// a retransmission is not delivered). It runs on the decoder's goroutine.
type SegmentObserver interface {
	Segment(g Segment)
}

// Stream is one direction of a TCP connection as the Handler sees it.
type Stream struct {
	Src, Dst netip.AddrPort
	// State belongs to the Handler (framing mode, say); the decoder never
	// reads it and drops it with the stream.
	State any
	// Gaps counts data lost to this stream (a gap given up on, or
	// unconsumed bytes discarded); a framing handler should resynchronise
	// when it changes.
	Gaps int

	next    uint32 // sequence number of the next expected byte
	synced  bool
	buf     []byte // unconsumed in-order bytes (owned)
	ooo     []segment
	last    time.Time
	created uint64

	// With Options.TrackFrames: which frame carried which bytes of buf
	// (spans) and of the data being offered (offer), and Frames' scratch.
	spans []tagSpan
	offer []tagSpan
	out   []uint64
}

type segment struct {
	seq  uint32
	data []byte
	tag  uint64
}

// tagSpan says the frame tag carried bytes [start, end) of a buffer.
type tagSpan struct {
	tag        uint64
	start, end int
}

// maxTagSpans bounds one direction's span list: a message of
// MaxStreamBuffer bytes in 64-byte segments. Past it the oldest span is
// dropped (TCPStats.TagsDropped) and its frame is missing from Frames.
const maxTagSpans = 4096

// Frames returns the tags of the frames that carried bytes [from, to) of
// the data offered in the current TCP call, oldest first; valid until
// the handler returns. It is empty without Options.TrackFrames.
func (s *Stream) Frames(from, to int) []uint64 {
	s.out = s.out[:0]
	for _, sp := range s.offer {
		if sp.end <= from || sp.start >= to {
			continue
		}
		if n := len(s.out); n == 0 || s.out[n-1] != sp.tag {
			s.out = append(s.out, sp.tag)
		}
	}
	return s.out
}

// addSpan notes that tag carried buf[start:end].
func (d *Decoder) addSpan(s *Stream, tag uint64, start, end int) {
	if n := len(s.spans); n > 0 && s.spans[n-1].tag == tag && s.spans[n-1].end == start {
		s.spans[n-1].end = end
		return
	}
	if len(s.spans) >= maxTagSpans {
		s.spans = s.spans[:copy(s.spans, s.spans[1:])]
		d.c.update(func(st *Stats) { st.TCP.TagsDropped++ })
	}
	s.spans = append(s.spans, tagSpan{tag: tag, start: start, end: end})
}

// consumeSpans drops n consumed bytes from the front of the spans.
func consumeSpans(s *Stream, n int) {
	j := 0
	for _, sp := range s.spans {
		sp.start, sp.end = max(sp.start-n, 0), sp.end-n
		if sp.end > 0 {
			s.spans[j] = sp
			j++
		}
	}
	s.spans = s.spans[:j]
}

type streamKey struct{ src, dst netip.AddrPort }

type streams struct {
	opt   Options
	c     *counters
	m     map[streamKey]*Stream
	seq   uint64
	swept time.Time
}

func newStreams(o Options, c *counters) *streams {
	return &streams{opt: o, c: c, m: map[streamKey]*Stream{}}
}

func (ss *streams) open() int { return len(ss.m) }

func (ss *streams) expire(now time.Time) {
	if len(ss.m) == 0 || now.Sub(ss.swept) < sweepEvery {
		return
	}
	ss.swept = now
	var n uint64
	for k, s := range ss.m {
		if now.Sub(s.last) > ss.opt.StreamIdle {
			delete(ss.m, k)
			n++
		}
	}
	if n > 0 {
		ss.c.update(func(s *Stats) { s.TCP.IdleClosed += n })
	}
}

func (ss *streams) get(k streamKey, now time.Time) *Stream {
	if s := ss.m[k]; s != nil {
		return s
	}
	if len(ss.m) >= ss.opt.MaxStreams {
		var oldK streamKey
		var old *Stream
		for k, s := range ss.m {
			if old == nil || s.last.Before(old.last) {
				oldK, old = k, s
			}
		}
		delete(ss.m, oldK)
		ss.c.update(func(s *Stats) { s.TCP.Evicted++ })
	}
	ss.seq++
	s := &Stream{Src: k.src, Dst: k.dst, last: now, created: ss.seq}
	ss.m[k] = s
	ss.c.update(func(s *Stats) { s.TCP.Streams++ })
	return s
}

// seqLess compares sequence numbers modulo 2^32 (RFC 1982).
func seqLess(a, b uint32) bool { return int32(a-b) < 0 }

func (d *Decoder) tcp(p *ipPacket) {
	b := p.payload
	if len(b) < tcpMinHeader {
		d.c.skip(SkipBadTCP)
		return
	}
	hl := int(b[12]>>4) * 4
	if hl < tcpMinHeader || hl > len(b) {
		d.c.skip(SkipBadTCP)
		return
	}
	d.c.update(func(s *Stats) { s.TCP.Segments++ })
	k := streamKey{
		src: netip.AddrPortFrom(p.src, binary.BigEndian.Uint16(b[0:])),
		dst: netip.AddrPortFrom(p.dst, binary.BigEndian.Uint16(b[2:])),
	}
	seq, flags, data := binary.BigEndian.Uint32(b[4:]), b[13], b[hl:]
	if d.seg != nil {
		d.seg.Segment(Segment{Time: d.now, Src: k.src, Dst: k.dst, Seq: seq, Ack: binary.BigEndian.Uint32(b[8:]),
			Flags: flags, Window: binary.BigEndian.Uint16(b[14:]), Len: len(data)})
	}
	ss := d.streams
	if flags&tcpRST != 0 {
		delete(ss.m, k)
		return
	}
	s := ss.get(k, d.now)
	s.last = d.now
	if flags&tcpSYN != 0 {
		s.next, s.synced = seq+1, true
		s.buf, s.ooo, s.spans = s.buf[:0], nil, s.spans[:0]
		return
	}
	if len(data) > 0 {
		if !s.synced { // joined mid-connection: start at the first segment seen
			s.next, s.synced = seq, true
		}
		d.segment(s, seq, data)
	}
	if flags&tcpFIN != 0 {
		delete(ss.m, k)
	}
}

// segment places data at seq in s and delivers whatever is now in order.
func (d *Decoder) segment(s *Stream, seq uint32, data []byte) {
	end := seq + uint32(len(data))
	if !seqLess(s.next, end) { // wholly old: a retransmission
		d.c.update(func(st *Stats) { st.TCP.Retransmitted++ })
		return
	}
	if seqLess(seq, s.next) { // partly old: trim the overlap
		data = data[s.next-seq:]
		seq = s.next
	}
	if seq != s.next {
		if len(s.ooo) < d.opt.MaxOutOfOrder {
			d.c.update(func(st *Stats) { st.TCP.OutOfOrder++ })
			s.ooo = append(s.ooo, segment{seq: seq, data: slices.Clone(data), tag: d.tag})
			return
		}
		// Give up on the gap: jump to the earliest held segment, deliver
		// what follows it, then place this segment again (the held list
		// is now shorter, so this recursion ends).
		d.c.update(func(st *Stats) { st.TCP.Gaps++ })
		s.Gaps++
		s.buf, s.spans = s.buf[:0], s.spans[:0]
		slices.SortFunc(s.ooo, func(a, b segment) int { return int(int32(a.seq - b.seq)) })
		if seqLess(seq, s.ooo[0].seq) {
			s.next = seq
		} else {
			s.next = s.ooo[0].seq
			d.drain(s)
			d.segment(s, seq, data)
			return
		}
	}
	s.next = seq + uint32(len(data))
	d.deliver(s, data, d.tag)
	d.drain(s)
}

// drain delivers held segments that are now in order.
func (d *Decoder) drain(s *Stream) {
	for progress := true; progress && len(s.ooo) > 0; {
		progress = false
		for i := 0; i < len(s.ooo); i++ {
			g := s.ooo[i]
			end := g.seq + uint32(len(g.data))
			switch {
			case !seqLess(s.next, end): // already covered
			case !seqLess(s.next, g.seq): // starts at or before next
				part := g.data[s.next-g.seq:]
				s.next = end
				d.deliver(s, part, g.tag)
			default:
				continue
			}
			s.ooo = slices.Delete(s.ooo, i, i+1)
			i--
			progress = true
		}
	}
}

// deliver offers in-order bytes carried by the frame tagged tag to the
// handler, keeping what it does not consume, bounded by MaxStreamBuffer.
func (d *Decoder) deliver(s *Stream, data []byte, tag uint64) {
	track := d.opt.TrackFrames
	if len(s.buf) == 0 {
		if track {
			s.offer = append(s.offer[:0], tagSpan{tag: tag, start: 0, end: len(data)})
		}
		n := d.h.TCP(s, d.now, data)
		if n >= len(data) {
			return
		}
		data = data[max(n, 0):]
	} else {
		start := len(s.buf)
		s.buf = append(s.buf, data...)
		if track {
			d.addSpan(s, tag, start, len(s.buf))
			s.offer = s.spans
		}
		n := d.h.TCP(s, d.now, s.buf)
		n = min(max(n, 0), len(s.buf))
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
		if track {
			consumeSpans(s, n)
		}
		data = nil
	}
	if len(data) > 0 {
		s.buf = append(s.buf, data...)
		if track {
			s.spans = append(s.spans[:0], tagSpan{tag: tag, start: 0, end: len(s.buf)})
		}
	}
	if len(s.buf) > d.opt.MaxStreamBuffer {
		d.c.update(func(st *Stats) { st.TCP.BufferFull++ })
		s.Gaps++
		s.buf, s.spans = s.buf[:0], s.spans[:0]
	}
}
