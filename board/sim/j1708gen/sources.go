package j1708gen

import (
	"math/rand/v2"
	"time"
)

// never is the due time of a source with nothing queued.
const never = time.Duration(1<<63 - 1)

// source is one ECU's stream of messages.
type source interface {
	due() time.Duration           // when the next message is queued, or never
	take(at time.Duration) []byte // the message, sent at at; moves on
}

const (
	// maxPhase bounds the offset of a source's first message, so slow
	// messages still appear early in a short run.
	maxPhase = time.Second
	// maxJitter is an ECU's scheduling jitter; J1708 ECUs are not precise.
	maxJitter = 2 * time.Millisecond
)

// periodic queues a message every period from first; later messages get a
// fresh jitter on the nominal slot, so jitter never accumulates.
type periodic struct {
	period time.Duration
	slot   time.Duration // nominal time of the next message
	jitter time.Duration
	r      *rand.Rand
	build  func(at time.Duration) []byte
}

func newPeriodic(r *rand.Rand, first, period time.Duration, build func(time.Duration) []byte) *periodic {
	return &periodic{period: period, slot: first, r: r, build: build}
}

// phase draws a first-message offset for period in whole microseconds.
func phase(r *rand.Rand, period time.Duration) time.Duration {
	return micros(r, min(period, maxPhase))
}

func micros(r *rand.Rand, d time.Duration) time.Duration {
	return time.Duration(r.Int64N(int64(d/time.Microsecond))) * time.Microsecond
}

func (s *periodic) due() time.Duration { return s.slot + s.jitter }
func (s *periodic) take(at time.Duration) []byte {
	s.slot += s.period
	s.jitter = micros(s.r, maxJitter)
	return s.build(at)
}

// reply sends one message delay after each request it is armed by.
type reply struct {
	delay time.Duration
	at    time.Duration
	build func(at time.Duration) []byte
}

func (s *reply) arm(request time.Duration) { s.at = request + s.delay }
func (s *reply) due() time.Duration        { return s.at }
func (s *reply) take(at time.Duration) []byte {
	s.at = never
	return s.build(at)
}

// odometer integrates the drive's speed, so total distance grows with it.
type odometer struct {
	speed  func(at time.Duration) int64 // 1/256 km/h
	at     time.Duration                // integrated up to here
	tenths int64                        // 0.1 mi
	rest   int64                        // below one tenth, in speedUnit·µs
}

const (
	odometerStep = 100 * time.Millisecond // integration step
	// tenthMile is 0.1 mi (160.9344 m) in (1/256 km/h)·µs, which are
	// 1/921 600 000 m.
	tenthMile    = 148_315_142_400
	odometerMin  = 1_000_000 // 100 000.0 mi: seeded start of the odometer
	odometerSpan = 3_000_000
)

// read advances the odometer to t.
func (o *odometer) read(t time.Duration) int64 {
	for o.at < t {
		step := min(odometerStep, t-o.at)
		o.rest += o.speed(o.at) * int64(step/time.Microsecond)
		o.at += step
		o.tenths += o.rest / tenthMile
		o.rest %= tenthMile
	}
	return o.tenths
}
