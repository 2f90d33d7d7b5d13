package board

import (
	"context"
	"time"

	"periph.io/x/conn/v3/gpio"
)

// activityBlink is the activity LED's period: slow enough to see, fast
// enough that a burst of frames shows as a flicker.
const activityBlink = 100 * time.Millisecond

// LED is an output line that is on when driven high. A nil *LED (the board
// has no such line) accepts every call and does nothing.
type LED struct {
	pin gpio.PinOut
}

// NewLED wraps p and turns it off.
func NewLED(p gpio.PinOut) (*LED, error) {
	l := &LED{pin: p}
	return l, l.Set(false)
}

// Set turns the LED on or off.
func (l *LED) Set(on bool) error {
	if l == nil {
		return nil
	}
	lvl := gpio.Low
	if on {
		lvl = gpio.High
	}
	return l.pin.Out(lvl)
}

// Blink toggles l each period in which count changed, and leaves it off
// when nothing moves, until ctx ends.
func (l *LED) Blink(ctx context.Context, count func() uint64) {
	if l == nil {
		return
	}
	t := time.NewTicker(activityBlink)
	defer t.Stop()
	last, on := count(), false
	for {
		select {
		case <-ctx.Done():
			_ = l.Set(false)
			return
		case <-t.C:
		}
		n := count()
		on = n != last && !on
		last = n
		_ = l.Set(on)
	}
}
