package rtp

// Interval is one fixed period of a stream (default 5 s), so a short
// burst of loss or jitter is not hidden by the stream's mean.
type Interval struct {
	Start      int64 // ns since the epoch, aligned to the interval length
	Packets    uint64
	Expected   int64
	Lost       int64
	MaxJitter  float64 // ms, as MeanJitter and MaxDelta
	MeanJitter float64
	MaxDelta   float64
	jitterSum  float64
	jitterN    uint64
	expBase    int64 // stream's expected at the interval's first packet, minus one
	uniqBase   uint64
}

// intervals is a bounded ring of closed intervals plus the open one.
// Capacity grows by intervalStep up to the limit, then the oldest is
// overwritten and counted, so memory per stream is bounded.
type intervals struct {
	cur     Interval
	open    bool
	ring    []Interval
	head    int // index of the oldest when full
	limit   int
	dropped uint64
}

// intervalStep is how many intervals the ring grows by: 40 s of the
// default 5 s intervals, at most 704 bytes unused.
const intervalStep = 8

// roll opens the interval holding t, closing the previous one; it runs
// before the packet's sequence number is counted, so a gap crossing the
// boundary is lost in the interval where the sender resumed.
func (v *intervals) roll(t, length int64, sq *seqState) {
	start := t - t%length
	if v.open && start == v.cur.Start {
		return
	}
	if v.open {
		v.close(sq)
	}
	v.cur = Interval{Start: start, expBase: sq.expected(), uniqBase: sq.unique}
	v.open = true
}

// add counts one packet: its delta when it is a regular one, its jitter
// when it is also timed (not the first of a timing epoch).
func (v *intervals) add(jitter, delta float64, regular, timed bool) {
	c := &v.cur
	c.Packets++
	if regular {
		c.MaxDelta = max(c.MaxDelta, delta)
	}
	if timed {
		c.MaxJitter = max(c.MaxJitter, jitter)
		c.jitterSum += jitter
		c.jitterN++
	}
}

// finish fills an interval's derived figures against the stream's
// current sequence state.
func (c Interval) finish(sq *seqState) Interval {
	c.Expected = sq.expected() - c.expBase
	c.Lost = max(c.Expected-int64(sq.unique-c.uniqBase), 0)
	if c.jitterN > 0 {
		c.MeanJitter = c.jitterSum / float64(c.jitterN)
	}
	return c
}

func (v *intervals) close(sq *seqState) {
	c := v.cur.finish(sq)
	if len(v.ring) < v.limit {
		if len(v.ring) == cap(v.ring) {
			// Grown a few intervals at a time, not doubled: a stream is
			// charged its ring's array (weightOf), and a doubled one
			// would leave up to half of it unused for the call's rest.
			r := make([]Interval, len(v.ring), min(len(v.ring)+intervalStep, v.limit))
			copy(r, v.ring)
			v.ring = r
		}
		v.ring = append(v.ring, c)
		return
	}
	v.ring[v.head] = c
	v.head = (v.head + 1) % len(v.ring)
	v.dropped++
}

// list returns the closed intervals oldest first and the open one.
func (v *intervals) list(sq *seqState) []Interval {
	out := make([]Interval, 0, len(v.ring)+1)
	out = append(out, v.ring[v.head:]...)
	out = append(out, v.ring[:v.head]...)
	if v.open {
		out = append(out, v.cur.finish(sq))
	}
	return out
}
