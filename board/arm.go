package board

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioutil"
)

const (
	// ArmPoll bounds each WaitForEdge. It must be finite: gpioioctl reads
	// -1 as a deadline in the past (DESIGN.md §8). It is also how late the
	// watcher notices a cancelled context.
	ArmPoll = 200 * time.Millisecond
	// ArmSettle is how long a level must hold after an edge before it
	// counts: a key switch bounces for a few milliseconds.
	ArmSettle = 20 * time.Millisecond
)

// ArmSwitch is the transmit-arm input. Armed reads the line itself, so it
// is never staler than the pin; Watch counts changes and drives the armed
// LED. It satisfies services/transmit's ArmSwitch.
type ArmSwitch struct {
	pin       gpio.PinIO
	activeLow bool

	changes atomic.Uint64
	waits   atomic.Uint64 // WaitForEdge calls, so a test can see a spinning loop
}

// ArmOptions configure an ArmSwitch.
type ArmOptions struct {
	ActiveHigh bool      // default active low: grounded means armed
	Pull       gpio.Pull // gpio.PullUp suits an active-low switch to ground
}

// NewArmSwitch configures p as an input with edge detection on both edges
// and a settle filter.
func NewArmSwitch(p gpio.PinIO, o ArmOptions) (*ArmSwitch, error) {
	d, err := gpioutil.Debounce(p, ArmSettle, 0, gpio.BothEdges)
	if err != nil {
		return nil, fmt.Errorf("arm input %s: %w", p, err)
	}
	// Debounce configured the line without a bias; apply the profile's.
	if err := d.In(o.Pull, gpio.BothEdges); err != nil {
		return nil, fmt.Errorf("arm input %s: %w", p, err)
	}
	return &ArmSwitch{pin: d, activeLow: !o.ActiveHigh}, nil
}

// Armed reports whether the switch is on now.
func (a *ArmSwitch) Armed() bool {
	return (a.pin.Read() == gpio.Low) == a.activeLow
}

// Changes is how many armed/disarmed transitions Watch has seen.
func (a *ArmSwitch) Changes() uint64 { return a.changes.Load() }

// Watch waits for edges until ctx ends, calling changed (if not nil) with
// the new state after each transition and once at the start.
func (a *ArmSwitch) Watch(ctx context.Context, changed func(armed bool)) {
	last := a.Armed()
	if changed != nil {
		changed(last)
	}
	for ctx.Err() == nil {
		a.waits.Add(1)
		// An edge wakes the loop early; a timeout re-reads too, so an edge
		// lost between read and wait is late by at most ArmPoll.
		a.pin.WaitForEdge(ArmPoll)
		if now := a.Armed(); now != last {
			last = now
			a.changes.Add(1)
			if changed != nil {
				changed(now)
			}
		}
	}
}
