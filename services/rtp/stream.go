package rtp

import (
	"math"
	"net/netip"
	"time"
)

// Comfort noise payload types: RFC 3389 (13) and the pre-RFC 3551 value (19).
const (
	ptCN    = 13
	ptCNOld = 19
	// maxPTs bounds the distinct payload types counted per stream; a
	// stream switching among more is counted in ptOverflow.
	maxPTs = 8
)

// A packet that carries the sequence on but puts its RTP timestamp
// further than these from where the stream's clock stood is a sender that
// restarted its clock and kept SSRC and sequence (a fax call's T.38
// re-INVITEs do): timing starts a new epoch there. Before, every later
// packet was "behind" the old clock and was never timed (issue #33).
const (
	// maxClockStepBack: video sends frames out of order (B-frames) a
	// fraction of a second back; audio never steps back.
	maxClockStepBack = time.Second
	// maxClockLead: how far the timestamp may run ahead of arrival. An
	// RFC 4733 event keeps its start timestamp for up to 0xFFFF units
	// (8.2 s at 8 kHz) while the audio clock runs on, so the audio after
	// a long key press leads by as much; no change in network delay
	// comes near.
	maxClockLead = 10 * time.Second
	// fastestClock converts maxClockStepBack for a payload type without a
	// known clock: RFC 3551's video rate, the fastest in use, so the step
	// is at least a second at any real rate.
	fastestClock = 90000
)

// Key identifies a stream: SSRC and both addresses, since some endpoints
// reuse one SSRC in both directions (PROVENANCE.md, gen-sipp-hold-resume).
type Key struct {
	Src, Dst netip.AddrPort
	SSRC     uint32
}

type ptCount struct {
	pt      uint8
	packets uint64
}

// stream is one RTP stream's running state. Only the analyser goroutine
// touches it, under Analyser.mu.
type stream struct {
	id      uint64
	key     Key
	ep      *endpoint // the signalled address it matched; nil for heuristic
	callID  string
	first   time.Time
	last    time.Time
	packets uint64
	bytes   uint64
	markers uint64
	seq     seqState
	// Probation: a heuristic stream is shown only after two packets in
	// sequence (RFC 3550 A.1 MIN_SEQUENTIAL).
	confirmed bool

	// tshark-compatible timing (ui/tap-rtp-analysis.c).
	lastArrival int64 // ns, of the last packet in RTP-time order
	seqTS       int64 // extended timestamp of that packet
	extTS       int64 // extended timestamp of the previous packet
	rawTS       uint32
	prevPT      uint8
	jitter      float64 // ms
	maxJitter   float64
	meanJitter  float64
	maxDelta    float64 // ms
	clockPT     int16   // payload type clockRate was resolved for, -1 none
	clockGen    uint64  // endpoint generation it was resolved at
	clockRate   int
	eventPT     bool
	// srtpKeyed caches keying() != "" with the clock: both change only with
	// the endpoint's generation, and the endpoint's SDP lies in cache
	// lines a packet otherwise never touches (the flag sits in padding:
	// the stream's size, and so its charge, is as before).
	srtpKeyed bool
	epochs    uint64 // timing epochs: 1, and one more each restarted clock

	pts        [maxPTs]ptCount
	ptOverflow uint64

	dtmf dtmfState
	iv   intervals
	// srtp reads the payloads of a stream whose SDP said SRTP; nil for
	// RTP and until its first packet.
	srtp *srtpState
	// weighed is the shape s was last charged for (weightOf).
	weighed uint64
}

// clockFor resolves pt's clock rate from the signalled formats, caching
// the answer until the payload type or the SDP changes.
func (s *stream) clockFor(pt uint8) (rate int, event bool) {
	gen := uint64(0)
	if s.ep != nil {
		gen = s.ep.gen
	}
	if int16(pt) == s.clockPT && gen == s.clockGen {
		return s.clockRate, s.eventPT
	}
	s.clockPT, s.clockGen = int16(pt), gen
	s.clockRate, s.eventPT = resolveClock(s.ep, pt)
	s.srtpKeyed = s.keying() != ""
	return s.clockRate, s.eventPT
}

func (s *stream) countPT(pt uint8) {
	for i := range s.pts {
		switch {
		case s.pts[i].packets > 0 && s.pts[i].pt == pt:
			s.pts[i].packets++
			return
		case s.pts[i].packets == 0:
			s.pts[i] = ptCount{pt: pt, packets: 1}
			return
		}
	}
	s.ptOverflow++
}

// add accounts one packet arriving at t (ns since the epoch); it
// reports whether the packet began a new timing epoch.
func (s *stream) add(t int64, h *Header, size int, ivLen int64) (restarted bool) {
	s.iv.roll(t, ivLen, &s.seq)
	dup, ahead := s.seq.add(h.Seq)
	s.packets++
	s.bytes += uint64(size)
	if h.Marker {
		s.markers++
	}
	s.countPT(h.PT)
	clock, event := s.clockFor(h.PT)
	if !s.confirmed && s.packets >= 2 && !dup && s.seq.max-s.seq.base >= 1 {
		s.confirmed = true
	}

	if s.packets == 1 {
		s.lastArrival, s.seqTS, s.extTS, s.rawTS, s.prevPT = t, int64(h.TS), int64(h.TS), h.TS, h.PT
		s.epochs = 1
		s.iv.add(0, 0, false, false)
		if event {
			s.dtmf.add(t, h)
		}
		return false
	}
	ext := s.extTS + int64(int32(h.TS-s.rawTS))
	s.extTS, s.rawTS = ext, h.TS
	cn := h.PT == ptCN || h.PT == ptCNOld
	followCN := s.prevPT == ptCN || s.prevPT == ptCNOld
	s.prevPT = h.PT

	delta := float64(t-s.lastArrival) / 1e6
	// The ms the timestamps advanced, once for the jump test and the
	// jitter: an integer and a float division per packet fewer.
	var nominal float64
	if clock > 0 {
		nominal = float64(ext-s.seqTS) / float64(clock/1000)
	}
	jumped := s.clockJumped(ext, delta, clock, nominal)
	// A clock that jumped on the packet that carries the sequence on is
	// the sender's restart: a new epoch, timed from this packet as a new
	// stream would be; one that jumped on a late packet is a straggler
	// from before it.
	restarted = jumped && ahead
	inOrder := restarted || !jumped && s.seqTS <= ext
	switch {
	case restarted:
		s.epochs++
		s.jitter = 0
	case clock > 0 && !jumped:
		d := math.Abs(delta - nominal)
		s.jitter = (15*s.jitter + d) / 16
	}
	// Max delta goes on by arrival across a restart; jitter starts again.
	regular := !h.Marker && !cn && !followCN && inOrder
	timed := regular && clock > 0 && !restarted
	if regular {
		s.maxDelta = max(s.maxDelta, delta)
	}
	if timed {
		s.maxJitter = max(s.maxJitter, s.jitter)
		n := float64(s.packets - 1)
		s.meanJitter = (s.meanJitter*(n-1) + s.jitter) / n
	}
	if inOrder {
		s.lastArrival, s.seqTS = t, ext
	}
	s.iv.add(s.jitter, delta, regular && clock > 0, timed)
	if event {
		s.dtmf.add(t, h)
	}
	return restarted
}

// clockJumped reports whether ext is further from the last in-order
// timestamp than a running clock can put it: more than
// maxClockStepBack behind it, or more than maxClockLead ahead of the
// arrival delta (ms); nominal is ext's lead over it in ms at clock.
func (s *stream) clockJumped(ext int64, delta float64, clock int, nominal float64) bool {
	if back := s.seqTS - ext; back > 0 {
		rate := clock
		if rate == 0 {
			rate = fastestClock
		}
		return back > int64(maxClockStepBack/time.Millisecond)*int64(rate)/1000
	}
	if clock == 0 {
		return false // a lead in unknown units cannot be judged
	}
	return nominal-delta > float64(maxClockLead/time.Millisecond)
}
