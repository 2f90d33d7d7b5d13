package sim

import (
	"time"

	"fieldtap/board/sim/j1708gen"
	"fieldtap/board/sim/j1939gen"
	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// DefaultSeed makes every sim run show the same traffic.
const DefaultSeed = 1

// Options tune the simulated board.
type Options struct {
	Speed float64 // factor of real time; 0 = max
	Seed  int64
	// Now gives the capture time of the first frame; nil means time.Now.
	Now func() time.Time
	// Workshop has a service tool on can0 every pass: a UDS session with
	// the engine, a DM2 read and a DM11 clear (j1939gen.Options.Workshop).
	Workshop bool
}

// Ports returns the board's three ports. can0 has a transmit side (a
// simulated writer with the engine ECU of package simecu behind it).
func Ports(o Options) []capture.Source {
	if o.Now == nil {
		o.Now = time.Now
	}
	port := func(name string, kind capture.Kind, origin string, link wire.LinkType, g generator) *Port {
		return &Port{name: name, kind: kind, origin: origin, link: link, gen: g, speed: o.Speed, seed: o.Seed, now: o.Now}
	}
	can0 := port("can0", capture.KindCAN, "sim:j1939", wire.LinkCANSocketCAN, j1939Pass(o.Workshop))
	can0.tx = newTxSide()
	return []capture.Source{
		port("span0", capture.KindEthernet, "sim:sip", wire.LinkEthernet, sipPass),
		can0,
		port("j1708", capture.KindJ1708, "sim:j1708", wire.LinkJ1708, j1708Pass),
	}
}

// Each pass of SIP and J1708 traffic is generated from the next seed, so
// call ids and the like never repeat.
func sipPass(seed, pass int64, start time.Time, d time.Duration, emit func(time.Time, []byte) error) error {
	return sipgen.Generate(sipgen.Options{Seed: seed + pass, Start: start, Duration: d}, func(p sipgen.Packet) error {
		return emit(p.Time, p.Data)
	})
}

// j1939Pass plays pass of one truck: the seed stays, so the ECUs keep
// their NAMEs for the whole run and claim only at its start.
func j1939Pass(workshop bool) generator {
	return func(seed, pass int64, start time.Time, d time.Duration, emit func(time.Time, []byte) error) error {
		o := j1939gen.Options{Seed: seed, Pass: pass, Start: start, Duration: d, Workshop: workshop}
		return j1939gen.Generate(o, func(f j1939gen.Frame) error {
			id := f.ID
			if f.Extended {
				id |= wire.CANEFF
			}
			b, err := wire.EncodeCAN(id, f.Data)
			if err != nil {
				return err
			}
			return emit(f.Time, b)
		})
	}
}

func j1708Pass(seed, pass int64, start time.Time, d time.Duration, emit func(time.Time, []byte) error) error {
	return j1708gen.Generate(j1708gen.Options{Seed: seed + pass, Start: start, Duration: d}, func(m j1708gen.Message) error {
		return emit(m.Time, m.Data)
	})
}
