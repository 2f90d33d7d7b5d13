package sim

import (
	"context"
	"errors"
	"time"

	"github.com/gopacket/gopacket/layers"

	"fieldtap/drivers/capture"
)

// passDuration is the span of traffic generated per pass. At real-time
// speed a port plays pass after pass; at max speed it plays one pass and
// ends.
const passDuration = 60 * time.Second

// generator produces pass number pass (0, 1, …) of one run's traffic,
// starting at start.
type generator func(seed, pass int64, start time.Time, d time.Duration, emit func(t time.Time, data []byte) error) error

// Port is one simulated capture port.
type Port struct {
	name   string
	kind   capture.Kind
	origin string
	link   layers.LinkType
	gen    generator
	speed  float64 // factor of real time; 0 means as fast as the analysers take it
	seed   int64
	now    func() time.Time

	counters capture.Counters
}

var _ capture.Source = (*Port)(nil)

func (p *Port) Name() string         { return p.name }
func (p *Port) Kind() capture.Kind   { return p.kind }
func (p *Port) Origin() string       { return p.origin }
func (p *Port) Live() bool           { return p.speed > 0 }
func (p *Port) Stats() capture.Stats { return p.counters.Snapshot() }

// Run plays generated traffic until ctx ends (paced) or one pass is done
// (max speed). Paced frames that the analysers cannot take are dropped and
// counted, as on a live port; at max speed nothing is dropped.
func (p *Port) Run(ctx context.Context, out *capture.Handoff) error {
	start := p.now()
	wallStart := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	emit := func(t time.Time, data []byte) error {
		f := capture.Frame{Time: t, Link: p.link, Data: data}
		if p.speed == 0 {
			return out.Put(ctx, f)
		}
		due := wallStart.Add(time.Duration(float64(t.Sub(start)) / p.speed))
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		}
		out.Offer(f)
		return ctx.Err()
	}
	for pass := int64(0); ; pass++ {
		err := p.gen(p.seed, pass, start.Add(time.Duration(pass)*passDuration), passDuration, emit)
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			p.counters.Error("generator")
			p.counters.Exhaust(err.Error())
			return err
		}
		if p.speed == 0 {
			p.counters.Exhaust("")
			return nil
		}
	}
}
