package board

import (
	"context"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
)

// testArmSwitch is the contract every arm-input pin must keep, fake or
// real. It drives nothing, so it runs on gpiotest here and on a kernel
// GPIO line in hwtest; a fake and a real pin that disagree (gpioioctl
// returning at once where gpiotest waits, DESIGN.md §8) fail it.
// The line must hold still while it runs.
func testArmSwitch(t *testing.T, p gpio.PinIO) {
	t.Helper()
	for _, o := range []ArmOptions{{}, {ActiveHigh: true}} {
		a, err := NewArmSwitch(p, ArmOptions{ActiveHigh: o.ActiveHigh, Pull: gpio.PullNoChange})
		if err != nil {
			t.Fatal(err)
		}
		lvl := p.Read()
		if want := (lvl == gpio.Low) != o.ActiveHigh; a.Armed() != want {
			t.Errorf("active high %v, line %v: Armed() = %v", o.ActiveHigh, lvl, a.Armed())
		}
	}
	a, err := NewArmSwitch(p, ArmOptions{Pull: gpio.PullNoChange})
	if err != nil {
		t.Fatal(err)
	}

	// A finite wait with no edge lasts about its timeout. Returning at
	// once would turn the watcher into a busy loop.
	start := time.Now()
	if p.WaitForEdge(ArmPoll) {
		t.Fatal("edge while the line should hold still")
	}
	if el := time.Since(start); el < ArmPoll/2 {
		t.Errorf("WaitForEdge(%v) returned after %v: the watcher would spin", ArmPoll, el)
	}

	// Watch returns once its context ends, waits about once per poll, and
	// sees no change on a still line. How late it returns on a loaded
	// machine is not asserted; a spinning loop shows in the wait count.
	const polls = 4
	ctx, cancel := context.WithTimeout(context.Background(), polls*ArmPoll)
	defer cancel()
	var calls int
	a.Watch(ctx, func(bool) { calls++ })
	if w := a.waits.Load(); w > polls+2 {
		t.Errorf("%d waits in %d polls: the loop spins", w, polls)
	}
	if calls != 1 || a.Changes() != 0 {
		t.Errorf("on a still line: %d callbacks (want the initial 1), %d changes", calls, a.Changes())
	}
}
