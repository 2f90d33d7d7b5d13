package sipgen

import "math/rand/v2"

// Generate plans the calls of o and hands every packet to emit in
// nondecreasing time order, the first at o.Start and all before
// o.Start+o.Duration. It stops at and returns the first error from emit.
func Generate(o Options, emit func(Packet) error) error {
	if err := o.check(); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(uint64(o.Seed), pcgStream))
	var streams []stream
	for ci, c := range plan(o, r, newNetwork(r)) {
		streams = append(streams, &sipStream{c: c})
		if o.SignallingOnly {
			continue
		}
		for mi, m := range c.media {
			if o.Impair.enabled() {
				m.impair(o.Impair, o.Seed, uint64(ci)<<1|uint64(mi))
			}
			streams = append(streams, m)
		}
	}
	q := newQueue(streams)
	for {
		at, d, ok := q.next()
		if !ok {
			return nil
		}
		data, err := frame(d)
		if err != nil {
			return err
		}
		if err := emit(Packet{Time: o.Start.Add(at), Data: data}); err != nil {
			return err
		}
	}
}

// pcgStream is the PCG stream constant; fixed so the seed alone decides.
const pcgStream = 0x5349_5067_656e // "SIPgen"
