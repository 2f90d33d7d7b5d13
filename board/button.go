package board

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioutil"
)

// ButtonPoll bounds each WaitForEdge of the confirm button, for the same
// reason as ArmPoll: gpioioctl reads -1 as a deadline in the past
// (DESIGN.md §8). It is also how late a wait notices its context ended.
const ButtonPoll = ArmPoll

// Button is the confirm button: a momentary push button on a GPIO line
// beside the key switch. It has the arm input's finite-timeout loop and
// settle filter.
type Button struct {
	pin       gpio.PinIO
	activeLow bool

	presses atomic.Uint64
	waits   atomic.Uint64 // WaitForEdge calls, so a test can see a spinning loop
}

// ButtonOptions configure a Button.
type ButtonOptions struct {
	ActiveHigh bool      // default active low: a button to ground
	Pull       gpio.Pull // gpio.PullUp suits an active-low button to ground
}

// NewButton configures p as an input with edge detection on both edges
// and the ArmSettle filter.
func NewButton(p gpio.PinIO, o ButtonOptions) (*Button, error) {
	d, err := gpioutil.Debounce(p, ArmSettle, 0, gpio.BothEdges)
	if err != nil {
		return nil, fmt.Errorf("confirm input %s: %w", p, err)
	}
	if err := d.In(o.Pull, gpio.BothEdges); err != nil {
		return nil, fmt.Errorf("confirm input %s: %w", p, err)
	}
	return &Button{pin: d, activeLow: !o.ActiveHigh}, nil
}

// Pressed reports whether the button is down now.
func (b *Button) Pressed() bool {
	return (b.pin.Read() == gpio.Low) == b.activeLow
}

// Presses counts the presses AwaitPress has returned.
func (b *Button) Presses() uint64 { return b.presses.Load() }

// AwaitPress waits for a fresh press: the button going from up to down
// after the call began. A button already down when the call begins must
// come up first, so one held, stuck or taped down confirms nothing. It
// calls armed (when not nil) once the starting level is read: a press
// from then on is seen. It returns the time the press was seen, or ctx's
// error.
func (b *Button) AwaitPress(ctx context.Context, armed func()) (time.Time, error) {
	down := b.Pressed()
	if armed != nil {
		armed()
	}
	for {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		b.waits.Add(1)
		// Edges queued before the call (old presses) wake the loop, but
		// only the level read now counts, so they are drained harmlessly.
		b.pin.WaitForEdge(ButtonPoll)
		now := b.Pressed()
		if now && !down {
			b.presses.Add(1)
			return time.Now(), nil
		}
		down = now
	}
}
