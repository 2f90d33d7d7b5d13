package board

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"fieldtap/services/transmit"
)

var _ transmit.ArmSwitch = (*ArmSwitch)(nil)

func TestArmSwitchContractGPIOTest(t *testing.T) {
	for _, lvl := range []gpio.Level{gpio.Low, gpio.High} {
		t.Run(lvl.String(), func(t *testing.T) {
			testArmSwitch(t, &gpiotest.Pin{N: "arm", L: lvl, EdgesChan: make(chan gpio.Level, 1)})
		})
	}
}

// instantPin is gpioioctl's -1 trap at every timeout: WaitForEdge gives up
// at once. The contract must reject it.
type instantPin struct{ *gpiotest.Pin }

func (instantPin) WaitForEdge(time.Duration) bool { return false }

func TestArmSwitchContractCatchesInstantWait(t *testing.T) {
	p := instantPin{&gpiotest.Pin{N: "trap", EdgesChan: make(chan gpio.Level, 1)}}
	start := time.Now()
	if p.WaitForEdge(ArmPoll) || time.Since(start) >= ArmPoll/2 {
		t.Fatal("the trap pin is not a trap")
	}
	a, err := NewArmSwitch(p, ArmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ArmPoll)
	defer cancel()
	a.Watch(ctx, nil)
	if a.waits.Load() < 100 {
		t.Errorf("only %d waits on an instant pin; the contract's spin check would not see it", a.waits.Load())
	}
}

// Edges on a fake line change the state, count, and reach the callback;
// the switch is active low unless the profile says otherwise.
func TestArmSwitchFollowsEdges(t *testing.T) {
	for _, tc := range []struct {
		name       string
		activeHigh bool
		pull       gpio.Pull
		idle, on   gpio.Level
	}{
		{name: "active low, pulled up", pull: gpio.PullUp, idle: gpio.High, on: gpio.Low},
		{name: "active high, pulled down", activeHigh: true, pull: gpio.PullDown, idle: gpio.Low, on: gpio.High},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &gpiotest.Pin{N: "arm", EdgesChan: make(chan gpio.Level, 4)}
			a, err := NewArmSwitch(p, ArmOptions{ActiveHigh: tc.activeHigh, Pull: tc.pull})
			if err != nil {
				t.Fatal(err)
			}
			if a.Armed() {
				t.Fatal("armed at rest")
			}
			var armed atomic.Bool
			var calls atomic.Int32
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { a.Watch(ctx, func(v bool) { armed.Store(v); calls.Add(1) }); close(done) }()
			waitFor(t, func() bool { return calls.Load() == 1 })
			p.EdgesChan <- tc.on
			waitFor(t, func() bool { return armed.Load() && a.Armed() })
			p.EdgesChan <- tc.idle
			waitFor(t, func() bool { return !armed.Load() && a.Changes() == 2 })
			cancel()
			<-done
		})
	}
}

func TestLEDBlinksOnActivity(t *testing.T) {
	p := &gpiotest.Pin{N: "led", L: gpio.High}
	l, err := NewLED(p)
	if err != nil || p.Read() != gpio.Low {
		t.Fatalf("NewLED: %v, level %v: want off", err, p.Read())
	}
	var n atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Blink(ctx, n.Load); close(done) }()
	var sawOn bool
	deadline := time.Now().Add(10 * activityBlink)
	for !sawOn && time.Now().Before(deadline) {
		n.Add(1)
		time.Sleep(activityBlink / 4)
		sawOn = p.Read() == gpio.High
	}
	cancel()
	<-done
	if !sawOn || p.Read() != gpio.Low {
		t.Errorf("activity LED: lit %v, final %v: want lit while frames move and off at stop", sawOn, p.Read())
	}
	var none *LED
	if none.Set(true) != nil {
		t.Error("a missing LED accepts calls")
	}
}

// waitFor polls cond; the bound is a give-up, not a timing assertion.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}
