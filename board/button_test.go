package board

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"fieldtap/services/transmit"
)

var _ transmit.Button = (*ConfirmButton)(nil)

func TestConfirmButtonContractGPIOTest(t *testing.T) {
	for _, lvl := range []gpio.Level{gpio.Low, gpio.High} {
		t.Run(lvl.String(), func(t *testing.T) {
			testConfirmButton(t, &gpiotest.Pin{N: "confirm", L: lvl, EdgesChan: make(chan gpio.Level, 1)})
		})
	}
}

// TestButtonContractCatchesInstantWait: the gpioioctl -1 trap spins the
// wait loop, and the contract's count sees it.
func TestButtonContractCatchesInstantWait(t *testing.T) {
	b, err := NewButton(instantPin{&gpiotest.Pin{N: "trap", EdgesChan: make(chan gpio.Level, 1)}}, ButtonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ButtonPoll)
	defer cancel()
	b.AwaitPress(ctx, nil)
	if b.waits.Load() < 100 {
		t.Errorf("only %d waits on an instant pin; the contract's spin check would not see it", b.waits.Load())
	}
}

// awaitAsync runs AwaitPress in the background.
func awaitAsync(b *Button, ctx context.Context) chan error {
	done := make(chan error, 1)
	go func() { _, err := b.AwaitPress(ctx, nil); done <- err }()
	return done
}

// TestButtonPressIsFresh: a press is the button going down after the wait
// began; a button already held down must come up first.
func TestButtonPressIsFresh(t *testing.T) {
	for _, tc := range []struct {
		name       string
		activeHigh bool
		pull       gpio.Pull
		up, down   gpio.Level
	}{
		{name: "active low, pulled up", pull: gpio.PullUp, up: gpio.High, down: gpio.Low},
		{name: "active high, pulled down", activeHigh: true, pull: gpio.PullDown, up: gpio.Low, down: gpio.High},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &gpiotest.Pin{N: "confirm", L: tc.up, EdgesChan: make(chan gpio.Level, 4)}
			b, err := NewButton(p, ButtonOptions{ActiveHigh: tc.activeHigh, Pull: tc.pull})
			if err != nil {
				t.Fatal(err)
			}
			done := awaitAsync(b, context.Background())
			p.EdgesChan <- tc.down
			if err := <-done; err != nil || b.Presses() != 1 {
				t.Fatalf("press: %v, %d presses", err, b.Presses())
			}
			// Still held: a new wait does not count it.
			ctx, cancel := context.WithCancel(context.Background())
			held := awaitAsync(b, ctx)
			waitFor(t, func() bool { return b.waits.Load() >= 3 })
			select {
			case err := <-held:
				t.Fatalf("a held button confirmed: %v", err)
			default:
			}
			// Released, then pressed again: that counts.
			p.EdgesChan <- tc.up
			p.EdgesChan <- tc.down
			if err := <-held; err != nil || b.Presses() != 2 {
				t.Fatalf("release and press: %v, %d presses", err, b.Presses())
			}
			cancel()
		})
	}
}

// recPin records every level the LED was set to.
type recPin struct {
	*gpiotest.Pin
	mu     sync.Mutex
	levels []gpio.Level
}

func (p *recPin) Out(l gpio.Level) error {
	p.mu.Lock()
	p.levels = append(p.levels, l)
	p.mu.Unlock()
	return p.Pin.Out(l)
}

func (p *recPin) got() []gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.levels)
}

// TestBlinkSteps: the code 2-4-1 is 2, 4 and 1 blinks, groups apart by
// GroupGap, the cycle closed by RepeatGap.
func TestBlinkSteps(t *testing.T) {
	steps, err := BlinkSteps([]int{2, 4, 1})
	if err != nil {
		t.Fatal(err)
	}
	var groups []int
	n := 0
	for i, s := range steps {
		if s.On {
			if s.For != BlinkOn {
				t.Errorf("step %d lit %v", i, s.For)
			}
			n++
			continue
		}
		switch s.For {
		case BlinkOff:
		case GroupGap, RepeatGap:
			groups = append(groups, n)
			n = 0
			if (s.For == RepeatGap) != (i == len(steps)-1) {
				t.Errorf("step %d: %v", i, s.For)
			}
		default:
			t.Errorf("step %d dark %v", i, s.For)
		}
	}
	if !slices.Equal(groups, []int{2, 4, 1}) {
		t.Errorf("groups %v from %+v", groups, steps)
	}
	for _, bad := range [][]int{nil, {0}, {maxBlinks + 1}} {
		if _, err := BlinkSteps(bad); err == nil {
			t.Errorf("code %v accepted", bad)
		}
	}
}

// TestConfirmButtonShowsTheCode: while it waits, the status LED plays the
// code's steps, and it is back on after the press.
func TestConfirmButtonShowsTheCode(t *testing.T) {
	led := &recPin{Pin: &gpiotest.Pin{N: "status"}}
	l, _ := NewLED(led)
	in := &gpiotest.Pin{N: "confirm", L: gpio.High, EdgesChan: make(chan gpio.Level, 2)}
	b, _ := NewButton(in, ButtonOptions{Pull: gpio.PullUp})
	c := NewConfirmButton(b, l)
	// The pattern's levels, whatever its timing: lit, dark, per blink.
	want := []gpio.Level{gpio.Low} // NewLED turns it off
	for range 2 + 1 {
		want = append(want, gpio.High, gpio.Low)
	}
	done := make(chan error, 1)
	go func() { _, err := c.AwaitPress(context.Background(), []int{2, 1}, nil); done <- err }()
	waitFor(t, func() bool { return len(led.got()) >= len(want) })
	in.EdgesChan <- gpio.Low
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := led.got()
	if !slices.Equal(got[:len(want)], want) || got[len(got)-1] != gpio.High {
		t.Errorf("LED levels %v, want %v first and on at the end", got, want)
	}
	if _, err := c.AwaitPress(context.Background(), []int{0}, nil); err == nil {
		t.Error("an unshowable code was waited for")
	}
}

// TestFileButton: the sim board's press file. A press written before the
// wait does not count; one during it does.
func TestFileButton(t *testing.T) {
	path := filepath.Join(t.TempDir(), "confirm")
	if err := PressFile(path); err != nil { // an old press
		t.Fatal(err)
	}
	fb := &FileButton{Path: path}
	ctx, cancel := context.WithTimeout(context.Background(), 3*ButtonPoll)
	defer cancel()
	if _, err := fb.AwaitPress(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an old press counted: %v", err)
	}
	c := NewFileConfirm(path, nil)
	done := make(chan error, 1)
	go func() { _, err := c.AwaitPress(context.Background(), []int{1, 2, 3}, nil); done <- err }()
	// Press until it is seen: a press before the wait read its baseline
	// is (rightly) not counted, and each press is a new line.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := PressFile(path); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(ButtonPoll):
			if time.Now().After(deadline) {
				t.Fatal("no press during the wait was seen")
			}
			continue
		}
		break
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("press file %v %v", fi, err)
	}
	if err := PressFile(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("a press into a missing directory succeeded")
	}
}

// TestOpenLinesConfirm: a profile's confirm input opens as a Button with
// its sense, beside the arm switch.
func TestOpenLinesConfirm(t *testing.T) {
	chip := &SimChip{}
	ls, err := OpenLines(GPIO{ArmInput: "sim:4", ConfirmInput: "sim:3", ConfirmActiveHigh: true, ConfirmPull: "none"}, chip)
	if err != nil || ls.Arm == nil || ls.Confirm == nil {
		t.Fatalf("lines %+v, %v", ls, err)
	}
	pin := chip.Pin(Line{Chip: "sim", Offset: 3})
	done := awaitAsync(ls.Confirm, context.Background())
	pin.EdgesChan <- gpio.High
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLines(GPIO{ConfirmInput: "sim:3", ConfirmPull: "sideways"}, chip); err == nil {
		t.Error("a bad confirm_pull opened")
	}
}
