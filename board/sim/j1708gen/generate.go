package j1708gen

import (
	"math/rand/v2"
	"time"

	"fieldtap/board/sim/internal/drive"
)

const (
	baud        = 9600
	bitsPerByte = 10 // start, eight data bits, stop
	// idleBits ends a message (J1708: at least 10 bit times of idle); a
	// node of priority p then waits accessBits·p more before it sends.
	idleBits   = 10
	accessBits = 2
	// priorityNormal is J1587's lowest priority, which broadcasts and
	// requests use; every message here has it.
	priorityNormal = 8
	// pcgStream is the PCG stream constant; fixed so the seed alone decides.
	pcgStream = 0x4a_3137_3038 // "J1708"

	fast            = 100 * time.Millisecond
	slow            = time.Second
	distanceEvery   = 10 * time.Second
	requestEvery    = 5 * time.Second
	brakeCodesEvery = 10 * time.Second
	replyDelay      = 5 * time.Millisecond // the engine answers a request at once
	batteryMin      = 272                  // 13.6 V at 0.05 V/bit
	batterySpan     = 13                   // up to 14.2 V
)

// bitTime converts bits on the wire to time.
func bitTime(bits int) time.Duration { return time.Duration(bits) * time.Second / baud }

// queued is a source with the MID that wins arbitration for it.
type queued struct {
	mid byte
	s   source
}

// bus lists every source of o's bus; the engine's speeds come first, at 0.
func bus(o Options, r *rand.Rand) []queued {
	d := drive.New(r, o.Duration)
	battery := batteryMin + r.IntN(batterySpan)
	odo := &odometer{speed: func(at time.Duration) int64 { return d.At(at).Speed },
		tenths: odometerMin + r.Int64N(odometerSpan)}
	state := func(f func(drive.State) []byte) func(time.Duration) []byte {
		return func(at time.Duration) []byte { return f(d.At(at)) }
	}
	fixed := func(f func() []byte) func(time.Duration) []byte {
		return func(time.Duration) []byte { return f() }
	}
	answer := &reply{delay: replyDelay, at: never, build: state(speedReply)}
	ask := func(at time.Duration) []byte { answer.arm(at); return speedRequest() }
	return []queued{
		{EngineMID, newPeriodic(r, 0, fast, state(speeds))},
		{EngineMID, newPeriodic(r, phase(r, fast), fast, state(pedals))},
		{EngineMID, newPeriodic(r, phase(r, slow), slow, fixed(func() []byte { return temperatures(battery) }))},
		{EngineMID, newPeriodic(r, phase(r, slow), slow, fixed(engineCodes))},
		{EngineMID, newPeriodic(r, phase(r, distanceEvery), distanceEvery, func(at time.Duration) []byte { return distance(odo.read(at)) })},
		{EngineMID, answer},
		{BrakesMID, newPeriodic(r, phase(r, requestEvery), requestEvery, ask)},
		{BrakesMID, newPeriodic(r, phase(r, brakeCodesEvery), brakeCodesEvery, fixed(brakeCodes))},
	}
}

// Generate hands every message of o's bus to emit in strictly increasing
// time order, the first at o.Start and all before o.Start+o.Duration. It
// stops at and returns the first error from emit.
func Generate(o Options, emit func(Message) error) error {
	if err := o.check(); err != nil {
		return err
	}
	srcs := bus(o, rand.New(rand.NewPCG(uint64(o.Seed), pcgStream)))
	var ready time.Duration // when the bus lets the next sender start
	for {
		first := never
		for _, q := range srcs {
			first = min(first, q.s.due())
		}
		at := max(first, ready)
		if at >= o.Duration {
			return nil
		}
		q := arbitrate(srcs, at)
		data := q.s.take(at)
		if err := emit(Message{Time: o.Start.Add(at), Data: data}); err != nil {
			return err
		}
		ready = at + bitTime(bitsPerByte*len(data)+idleBits+accessBits*priorityNormal)
	}
}

// arbitrate picks, among the sources queued by at, the lowest MID: its
// zero bits win the bus. Within one MID the ECU keeps its own order.
func arbitrate(srcs []queued, at time.Duration) queued {
	win := -1
	for i, q := range srcs {
		if q.s.due() <= at && (win < 0 || q.mid < srcs[win].mid) {
			win = i
		}
	}
	return srcs[win]
}
