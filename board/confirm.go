package board

import (
	"context"
	"fmt"
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
	sctx, stop := context.WithCancel(ctx)
	shown := make(chan struct{})
	go func() { defer close(shown); c.led.Show(sctx, steps, true) }()
	at, err := c.in.AwaitPress(ctx, armed)
	stop()
	<-shown
	return at, err
}
