package board

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// presser is where a press comes from: the GPIO Button, or the sim
// board's press file.
type presser interface {
	AwaitPress(ctx context.Context, armed func()) (time.Time, error)
}

// ConfirmButton is the confirm button and the status LED that shows which
// plan waits for it. It satisfies services/transmit's Button.
type ConfirmButton struct {
	in  presser
	led *LED // nil: the board has no status LED, and the code is only printed

	// pin is held by whoever reads the input: a plan's wait, or the idle
	// watcher between plans. mu guards confirming and idleStop: a plan's
	// wait counts itself in and stops the idle watcher's wait, so a press
	// goes to the plan that waits for it and never also becomes a mark.
	pin        sync.Mutex
	mu         sync.Mutex
	confirming int
	idleStop   context.CancelFunc
}

// NewConfirmButton pairs a GPIO button with the status LED.
func NewConfirmButton(b *Button, status *LED) *ConfirmButton {
	return &ConfirmButton{in: b, led: status}
}

// NewFileConfirm is the sim board's confirm button: a press is a change of
// the file at path (PressFile makes one), shown on the sim status LED.
func NewFileConfirm(path string, status *LED) *ConfirmButton {
	return &ConfirmButton{in: &FileButton{Path: path}, led: status}
}

// AwaitPress blinks code on the status LED and waits for a fresh press,
// until ctx ends, calling armed (when not nil) once presses count; the
// LED is back on (its resting state) when it returns.
func (c *ConfirmButton) AwaitPress(ctx context.Context, code []int, armed func()) (time.Time, error) {
	steps, err := BlinkSteps(code)
	if err != nil {
		return time.Time{}, fmt.Errorf("confirm button: %w", err)
	}
	c.mu.Lock()
	c.confirming++
	if c.idleStop != nil {
		c.idleStop()
	}
	c.mu.Unlock()
	c.pin.Lock()
	defer func() {
		c.pin.Unlock()
		c.mu.Lock()
		c.confirming--
		c.mu.Unlock()
	}()
	sctx, stop := context.WithCancel(ctx)
	shown := make(chan struct{})
	go func() { defer close(shown); c.led.Show(sctx, steps, true) }()
	at, err := c.in.AwaitPress(ctx, armed)
	stop()
	<-shown
	return at, err
}

// WatchIdle calls press with the time of every press made while no plan
// waits for the button, until ctx ends; a plan's wait starts only after
// press returns, so press must be quick. Such a press confirms nothing; it
// marks a moment (services/marks). A plan's wait takes the input over at
// once and hands it back when it ends; a press made in the instant the
// input changes hands is nobody's.
func (c *ConfirmButton) WatchIdle(ctx context.Context, press func(time.Time)) {
	t := time.NewTicker(ButtonPoll)
	defer t.Stop()
	for ctx.Err() == nil {
		wctx, ok := c.idleTurn(ctx)
		if !ok {
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			continue
		}
		at, err := c.in.AwaitPress(wctx, nil)
		if err == nil {
			press(at)
		}
		c.mu.Lock()
		c.idleStop()
		c.idleStop = nil
		c.mu.Unlock()
		c.pin.Unlock()
	}
}

// idleTurn takes the input for the idle watcher unless a plan's wait has
// it or wants it; the context it returns ends when one does.
func (c *ConfirmButton) idleTurn(ctx context.Context) (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.confirming > 0 || !c.pin.TryLock() {
		return nil, false
	}
	wctx, stop := context.WithCancel(ctx)
	c.idleStop = stop
	return wctx, true
}
