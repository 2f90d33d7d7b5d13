package board

import (
	"context"
	"errors"
	"testing"

	"periph.io/x/conn/v3/gpio"
)

// testConfirmButton is the contract every confirm-button pin keeps, fake
// or real, as testArmSwitch is for the arm input: on a line that holds
// still, a wait for a press waits about once per poll, returns when its
// context ends, and reports no press. It runs on gpiotest here and on a
// kernel GPIO line in hwtest.
func testConfirmButton(t *testing.T, p gpio.PinIO) {
	t.Helper()
	b, err := NewButton(p, ButtonOptions{ActiveHigh: p.Read() == gpio.Low, Pull: gpio.PullNoChange})
	if err != nil {
		t.Fatal(err)
	}
	if b.Pressed() {
		t.Fatalf("line %v reads pressed with the opposite sense", p.Read())
	}
	const polls = 4
	ctx, cancel := context.WithTimeout(context.Background(), polls*ButtonPoll)
	defer cancel()
	at, err := b.AwaitPress(ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !at.IsZero() || b.Presses() != 0 {
		t.Errorf("on a still line: press at %v, err %v, %d presses; want none and the deadline", at, err, b.Presses())
	}
	if w := b.waits.Load(); w > polls+2 {
		t.Errorf("%d waits in %d polls: the loop spins", w, polls)
	}
}
