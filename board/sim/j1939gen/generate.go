package j1939gen

import (
	"math/rand/v2"
	"time"

	"fieldtap/board/sim/internal/drive"
)

const (
	bitrate = 250_000 // J1939-11
	// frameBits is an extended data frame without its data field: SOF,
	// 29-bit id with SRR/IDE/RTR, control, CRC, ACK, EOF and interframe
	// space. Stuff bits are ignored.
	frameBits = 67
	// pcgStream is the PCG stream constant; fixed so the seed alone decides.
	pcgStream = 0x4a31_3933_39 // "J1939"

	ambientMin = -10 // °C range of the seeded ambient temperature
	ambientMax = 30

	vinEvery = 5 * time.Second
	tpGap    = 50 * time.Millisecond // between BAM packets (J1939-21: 50-200 ms)
)

// frameTime is how long a frame with n data bytes holds the bus.
func frameTime(n int) time.Duration {
	return time.Duration(frameBits+8*n) * time.Second / bitrate
}

// ecu is one controller: address and NAME function (J1939 Appendix B).
type ecu struct {
	sa       byte
	function byte
}

var ecus = [...]ecu{
	{EngineAddress, 0},       // engine
	{TransmissionAddress, 3}, // transmission
	{BrakesAddress, 9},       // brakes - system controller
	{BodyAddress, 26},        // body controller
}

// truck lists every source of o's bus.
func truck(o Options, r *rand.Rand) []source {
	d := drive.New(r, o.Duration)
	ambient := int64(ambientMin + r.IntN(ambientMax-ambientMin+1))
	n := drawNames(o.Seed)
	powerUp := o.Pass == 0
	settle := time.Duration(0) // ECUs wait after their claims at power-up only
	var srcs []source
	if powerUp {
		settle = claimSettle
		for i, e := range ecus {
			id := canID(prioInfo, pgnAddressClaim, e.sa, globalAddress)
			srcs = append(srcs, &once{canID: id, data: name(n.ecu[i], e.function)})
		}
	}
	clearAt := never
	if o.Workshop {
		s, at := workshop(n, powerUp)
		srcs, clearAt = append(srcs, s), at
	}
	if o.ClaimConflict && powerUp {
		srcs = append(srcs, conflict(n))
	}
	every := func(period time.Duration, prio, pgn uint32, sa byte, build func(at time.Duration, s drive.State) []byte) {
		srcs = append(srcs, newPeriodic(r, canID(prio, pgn, sa, globalAddress), period, settle,
			func(at time.Duration) []byte { return build(at, d.At(at)) }))
	}
	state := func(b func(drive.State) []byte) func(time.Duration, drive.State) []byte {
		return func(_ time.Duration, s drive.State) []byte { return b(s) }
	}
	fixed := func(b func() []byte) func(time.Duration, drive.State) []byte {
		return func(time.Duration, drive.State) []byte { return b() }
	}
	every(10*time.Millisecond, prioControl, pgnEEC1, EngineAddress, state(eec1))
	every(100*time.Millisecond, prioInfo, pgnCCVS, EngineAddress, state(ccvs))
	every(time.Second, prioInfo, pgnET1, EngineAddress, fixed(et1))
	every(time.Second, prioInfo, pgnDM1, EngineAddress, func(at time.Duration, _ drive.State) []byte { return dm1(at, clearAt) })
	every(10*time.Millisecond, prioControl, pgnETC1, TransmissionAddress, state(etc1))
	every(100*time.Millisecond, prioInfo, pgnETC2, TransmissionAddress, state(etc2))
	every(100*time.Millisecond, prioInfo, pgnEBC1, BrakesAddress, state(ebc1))
	every(time.Second, prioInfo, pgnAMB, BodyAddress, fixed(func() []byte { return amb(ambient) }))
	vin := append([]byte(VIN), vinTerm)
	srcs = append(srcs, &bam{
		cm:  canID(prioTransport, pgnTPCM, EngineAddress, globalAddress),
		dt:  canID(prioTransport, pgnTPDT, EngineAddress, globalAddress),
		pgn: pgnVI, msg: vin, period: vinEvery, gap: tpGap,
		next:    settle + micros(r, maxPhase),
		packets: (len(vin) + tpBytes - 1) / tpBytes,
	})
	return srcs
}

// Generate hands every frame of o's bus to emit in strictly increasing time
// order, the first (the engine's address claim) at o.Start and all before
// o.Start+o.Duration. It stops at and returns the first error from emit.
func Generate(o Options, emit func(Frame) error) error {
	if err := o.check(); err != nil {
		return err
	}
	srcs := truck(o, rand.New(rand.NewPCG(uint64(o.Seed+o.Pass), pcgStream)))
	var free time.Duration // when the bus is idle again
	for {
		at := free
		if first := earliest(srcs); first > at {
			at = first
		}
		if at >= o.Duration {
			return nil
		}
		s := arbitrate(srcs, at)
		id := s.id()
		data := s.take(at)
		if err := emit(Frame{Time: o.Start.Add(at), ID: id, Extended: true, Data: data}); err != nil {
			return err
		}
		free = at + frameTime(len(data))
	}
}

func earliest(srcs []source) time.Duration {
	first := never
	for _, s := range srcs {
		first = min(first, s.due())
	}
	return first
}

// arbitrate picks, among the sources queued by at, the one with the lowest
// identifier: it wins CAN arbitration. No two sources share an identifier.
func arbitrate(srcs []source, at time.Duration) source {
	var win source
	for _, s := range srcs {
		if s.due() <= at && (win == nil || s.id() < win.id()) {
			win = s
		}
	}
	return win
}
