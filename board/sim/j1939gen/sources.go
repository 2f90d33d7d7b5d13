package j1939gen

import (
	"math/rand/v2"
	"time"
)

// never is the due time of a source with nothing left to send.
const never = time.Duration(1<<63 - 1)

// source is one ECU's stream of frames.
type source interface {
	due() time.Duration           // when the next frame is queued, or never
	id() uint32                   // its identifier, which arbitration compares
	take(at time.Duration) []byte // its data, sent at at; moves on
}

// once sends one frame at 0: an address claim.
type once struct {
	canID uint32
	data  []byte
	sent  bool
}

func (s *once) due() time.Duration {
	if s.sent {
		return never
	}
	return 0
}
func (s *once) id() uint32                { return s.canID }
func (s *once) take(time.Duration) []byte { s.sent = true; return s.data }

// periodic queues a frame every period, each with a fresh jitter on top of
// the nominal time so the jitter never accumulates.
type periodic struct {
	canID  uint32
	period time.Duration
	slot   time.Duration // nominal time of the next frame
	jitter time.Duration
	r      *rand.Rand
	build  func(at time.Duration) []byte
}

const (
	// claimSettle is how long an ECU waits after its address claim
	// before other traffic (J1939-81).
	claimSettle = 250 * time.Millisecond
	// maxPhase bounds the random offset of an ECU's first frame, so slow
	// messages still appear early in a short run.
	maxPhase = time.Second
	// maxJitter is the scheduling jitter of an ECU's periodic frames.
	maxJitter = 300 * time.Microsecond
)

// newPeriodic starts after settle (the claim settling time at power-up,
// else 0) plus a random phase.
func newPeriodic(r *rand.Rand, id uint32, period, settle time.Duration, build func(time.Duration) []byte) *periodic {
	s := &periodic{canID: id, period: period, r: r, build: build}
	s.slot = settle + micros(r, min(period, maxPhase))
	s.jitter = micros(r, maxJitter)
	return s
}

// micros draws whole microseconds in [0, d).
func micros(r *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(r.Int64N(int64(d/time.Microsecond))) * time.Microsecond
}

func (s *periodic) due() time.Duration { return s.slot + s.jitter }
func (s *periodic) id() uint32         { return s.canID }
func (s *periodic) take(at time.Duration) []byte {
	s.slot += s.period
	s.jitter = micros(s.r, maxJitter)
	return s.build(at)
}

// bam broadcasts msg as pgn with the J1939-21 broadcast announce message:
// a TP.CM, then TP.DT packets gap apart, the whole again every period.
type bam struct {
	cm, dt  uint32 // identifiers
	pgn     uint32
	msg     []byte
	period  time.Duration
	gap     time.Duration
	next    time.Duration // nominal time of the next TP.CM
	sentCM  time.Duration // when the current TP.CM went out
	seq     int           // 0: TP.CM next, else the next TP.DT
	packets int
}

func (s *bam) due() time.Duration {
	if s.seq == 0 {
		return s.next
	}
	return s.sentCM + time.Duration(s.seq)*s.gap
}

func (s *bam) id() uint32 {
	if s.seq == 0 {
		return s.cm
	}
	return s.dt
}

func (s *bam) take(at time.Duration) []byte {
	if s.seq == 0 {
		s.sentCM, s.seq = at, 1
		return bamCM(len(s.msg), s.pgn)
	}
	b := bamDT(s.msg, s.seq)
	if s.seq++; s.seq > s.packets {
		s.seq, s.next = 0, s.next+s.period
	}
	return b
}
