package netdecode

import (
	"net/netip"
	"slices"
	"time"
)

// maxDatagram is the largest IP payload reassembly accepts: IPv4's 16-bit
// total length; IPv6 jumbograms are never fragmented.
const maxDatagram = 65535

// sweepEvery is how often (capture time) expiry walks the tables; timeouts
// are tens of seconds, so a second of slack is immaterial.
const sweepEvery = time.Second

type fragKey struct {
	src, dst netip.Addr
	id       uint32
	proto    uint8
	v6       bool
}

type frag struct {
	off  int
	data []byte // owned copy
	tag  uint64 // the frame that carried it (Options.TrackFrames)
}

type pendingDatagram struct {
	first time.Time
	frags []frag
	total int // payload length once the last fragment is known, else -1
	bytes int
}

// defragger reassembles IP datagrams. Bounded by MaxFragDatagrams and
// MaxFragBytes; a datagram incomplete after FragTimeout is dropped.
type defragger struct {
	opt   Options
	c     *counters
	m     map[fragKey]*pendingDatagram
	bytes int
	swept time.Time // capture time of the last expiry sweep
	tags  []uint64  // scratch: the completed datagram's fragment tags
}

func newDefragger(o Options, c *counters) *defragger {
	return &defragger{opt: o, c: c, m: map[fragKey]*pendingDatagram{}}
}

func (f *defragger) pending() (int, int) { return len(f.m), f.bytes }

// expire drops datagrams older than the timeout on capture time.
func (f *defragger) expire(now time.Time) {
	if len(f.m) == 0 || now.Sub(f.swept) < sweepEvery {
		return
	}
	f.swept = now
	var n uint64
	for k, p := range f.m {
		if now.Sub(p.first) > f.opt.FragTimeout {
			f.drop(k, p)
			n++
		}
	}
	if n > 0 {
		f.c.update(func(s *Stats) { s.Frag.TimedOut += n })
	}
}

func (f *defragger) drop(k fragKey, p *pendingDatagram) {
	f.bytes -= p.bytes
	delete(f.m, k)
}

// add stores one fragment carried by the frame tagged tag; when it
// completes its datagram, add returns the reassembled payload (owned by
// the caller), the tags of its fragments in offset order (valid until the
// next add; nil without Options.TrackFrames) and true.
func (f *defragger) add(now time.Time, k fragKey, off int, more bool, data []byte, tag uint64) ([]byte, []uint64, bool) {
	f.c.update(func(s *Stats) { s.Frag.Fragments++ })
	end := off + len(data)
	p := f.m[k]
	if end > maxDatagram || len(data) > f.opt.MaxFragBytes {
		if p != nil {
			f.drop(k, p)
		}
		f.c.update(func(s *Stats) { s.Frag.Oversize++ })
		return nil, nil, false
	}
	if p == nil {
		if len(f.m) >= f.opt.MaxFragDatagrams {
			f.evictOldest()
		}
		p = &pendingDatagram{first: now, total: -1}
		f.m[k] = p
	}
	for f.bytes+len(data) > f.opt.MaxFragBytes && len(f.m) > 1 {
		f.evictOldestExcept(k)
	}
	if !more {
		if p.total >= 0 && p.total != end {
			f.drop(k, p)
			f.c.update(func(s *Stats) { s.Frag.Overlapping++ })
			return nil, nil, false
		}
		p.total = end
	}
	for _, q := range p.frags {
		if q.off == off && len(q.data) == len(data) {
			return nil, nil, false // a duplicate fragment
		}
	}
	p.frags = append(p.frags, frag{off: off, data: slices.Clone(data), tag: tag})
	p.bytes += len(data)
	f.bytes += len(data)
	if p.total < 0 {
		return nil, nil, false
	}
	slices.SortFunc(p.frags, func(a, b frag) int { return a.off - b.off })
	covered := 0
	for _, q := range p.frags {
		if q.off > covered {
			return nil, nil, false // a hole remains
		}
		covered = max(covered, q.off+len(q.data))
	}
	if covered < p.total {
		return nil, nil, false
	}
	out := make([]byte, p.total)
	f.tags = f.tags[:0]
	for _, q := range p.frags {
		if q.off < p.total {
			copy(out[q.off:], q.data)
		}
		if f.opt.TrackFrames {
			f.tags = append(f.tags, q.tag)
		}
	}
	f.drop(k, p)
	f.c.update(func(s *Stats) { s.Frag.Reassembled++ })
	if !f.opt.TrackFrames {
		return out, nil, true
	}
	return out, f.tags, true
}

func (f *defragger) evictOldest() { f.evictOldestExcept(fragKey{}) }

func (f *defragger) evictOldestExcept(keep fragKey) {
	var ok fragKey
	var oldest *pendingDatagram
	for k, p := range f.m {
		if k != keep && (oldest == nil || p.first.Before(oldest.first)) {
			ok, oldest = k, p
		}
	}
	if oldest != nil {
		f.drop(ok, oldest)
		f.c.update(func(s *Stats) { s.Frag.TableFull++ })
	}
}
