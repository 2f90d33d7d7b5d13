package sim

import (
	"context"
	"errors"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
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
	link   wire.LinkType
	gen    generator
	speed  float64 // factor of real time; 0 means as fast as the analysers take it
	seed   int64
	now    func() time.Time
	tx     *txSide // the CAN port's writer and ECU; nil on the others

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
// counted, as on a live port; at max speed nothing is dropped. While a
// paced CAN port plays, what is written on it and the ECU's answers join
// the generated frames at their simulated time.
func (p *Port) Run(ctx context.Context, out *capture.Handoff) error {
	start := p.now()
	wallStart := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	simAt := func(w time.Time) time.Time { return start.Add(time.Duration(float64(w.Sub(wallStart)) * p.speed)) }
	wallAt := func(t time.Time) time.Time { return wallStart.Add(time.Duration(float64(t.Sub(start)) / p.speed)) }
	var wake chan struct{} // nil: no writes to wait for
	if p.tx != nil && p.speed > 0 {
		p.tx.play(func() time.Time { return simAt(time.Now()) })
		defer p.tx.play(nil)
		wake = p.tx.wake
	}
	// written puts the written and answered frames due by t on the bus
	// and says when the next one is due.
	written := func(t time.Time) time.Time {
		if wake == nil {
			return time.Time{}
		}
		fs, next := p.tx.take(t)
		for _, f := range fs {
			b, err := wire.EncodeCAN(f.id, f.data) // WriteFrame checked it
			if err == nil {
				out.Offer(capture.Frame{Time: f.at, Link: p.link, Data: b})
			}
			p.tx.heard(f)
		}
		return next
	}
	emit := func(t time.Time, data []byte) error {
		f := capture.Frame{Time: t, Link: p.link, Data: data}
		if p.speed == 0 {
			return out.Put(ctx, f)
		}
		for {
			now := time.Now()
			next := written(minTime(t, simAt(now)))
			wait := wallAt(t).Sub(now)
			if wait <= 0 {
				break
			}
			if !next.IsZero() && next.Before(t) {
				wait = max(min(wait, wallAt(next).Sub(now)), 0)
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			case <-wake:
				timer.Stop()
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

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
