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

	pts        [maxPTs]ptCount
	ptOverflow uint64

	dtmf dtmfState
	iv   intervals
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

// add accounts one packet arriving at t (ns since the epoch).
func (s *stream) add(t int64, h *Header, size int, ivLen int64) {
	s.iv.roll(t, ivLen, &s.seq)
	dup := s.seq.add(h.Seq)
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
		s.iv.add(0, 0, false)
		if event {
			s.dtmf.add(t, h)
		}
		return
	}
	ext := s.extTS + int64(int32(h.TS-s.rawTS))
	s.extTS, s.rawTS = ext, h.TS
	inOrder := s.seqTS <= ext
	cn := h.PT == ptCN || h.PT == ptCNOld
	followCN := s.prevPT == ptCN || s.prevPT == ptCNOld
	s.prevPT = h.PT

	delta := float64(t-s.lastArrival) / 1e6
	if clock > 0 {
		nominal := float64(ext-s.seqTS) / float64(clock/1000)
		d := math.Abs(delta - nominal)
		s.jitter = (15*s.jitter + d) / 16
	}
	regular := !h.Marker && !cn && !followCN && inOrder
	if regular {
		s.maxDelta = max(s.maxDelta, delta)
		if clock > 0 {
			s.maxJitter = max(s.maxJitter, s.jitter)
			n := float64(s.packets - 1)
			s.meanJitter = (s.meanJitter*(n-1) + s.jitter) / n
		}
	}
	if inOrder {
		s.lastArrival, s.seqTS = t, ext
	}
	s.iv.add(s.jitter, delta, regular && clock > 0)
	if event {
		s.dtmf.add(t, h)
	}
}
