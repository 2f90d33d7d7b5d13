package sim

import (
	"context"
	"fieldtap/drivers/wire"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func drain(h *capture.Handoff) (n int, first, last time.Time) {
	for f := range capturetest.Frames(h) {
		if n == 0 {
			first = f.Time
		}
		last = f.Time
		n++
	}
	return
}

// At max speed each port plays one pass losslessly and then says so.
func TestMaxSpeedPlaysOnePassAndEnds(t *testing.T) {
	for _, src := range Ports(Options{Speed: 0, Seed: DefaultSeed, Now: func() time.Time { return t0 }}) {
		t.Run(src.Name(), func(t *testing.T) {
			var c capture.Counters
			h := capture.NewHandoff(64, &c)
			done := make(chan error, 1)
			go func() { done <- src.Run(context.Background(), h); h.Close() }()
			n, first, last := drain(h)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st, hs := src.Stats(), c.Snapshot()
			if n == 0 || hs.Frames != uint64(n) || len(hs.Drops) != 0 {
				t.Errorf("delivered %d, counted %d, drops %v", n, hs.Frames, hs.Drops)
			}
			if !st.Exhausted || st.StoppedEarly != "" || src.Live() {
				t.Errorf("stats %+v live %v: want a finite, cleanly exhausted port", st, src.Live())
			}
			if first.Before(t0) || !last.Before(t0.Add(passDuration)) {
				t.Errorf("frames span %v..%v, want inside one pass from %v", first, last, t0)
			}
		})
	}
}

// A paced port whose analysers do not keep up drops and counts, never blocks.
func TestPacedPortCountsHandoffDrops(t *testing.T) {
	src := Ports(Options{Speed: 1000, Seed: DefaultSeed})[1] // can0: hundreds of frames per simulated second
	var c capture.Counters
	h := capture.NewHandoff(1, &c) // nobody reads it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, h) }()
	deadline := time.Now().Add(time.Minute) // a give-up bound, not a timing assertion
	for c.Snapshot().Drops[capture.DropHandoffFull] == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no drop counted while nobody read the queue")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := c.Snapshot(); s.Frames != 1 {
		t.Errorf("frames = %d, want exactly the one the queue held", s.Frames)
	}
	if !src.Live() {
		t.Error("a paced sim port is live")
	}
}

func TestSameSeedSameTraffic(t *testing.T) {
	run := func() []byte {
		src := Ports(Options{Speed: 0, Seed: 7, Now: func() time.Time { return t0 }})[2]
		var c capture.Counters
		h := capture.NewHandoff(1<<16, &c)
		if err := src.Run(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		h.Close()
		var all []byte
		for f := range capturetest.Frames(h) {
			all = append(all, f.Data...)
		}
		return all
	}
	a, b := run(), run()
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("two runs with one seed differ (%d vs %d bytes)", len(a), len(b))
	}
}

// The sim truck keeps its NAMEs across passes: later passes send no
// address claim (ECUs claim at power-up), and Workshop adds the service
// tool's diagnostic ids.
func TestTruckPasses(t *testing.T) {
	count := func(workshop bool, pass int64) (claims, diag int) {
		gen := j1939Pass(workshop)
		err := gen(DefaultSeed, pass, t0, passDuration, func(_ time.Time, b []byte) error {
			id, _, err := wire.DecodeCAN(b)
			if err != nil {
				return err
			}
			switch id >> 8 & 0xFF00 {
			case 0xEE00:
				claims++
			case 0xDA00:
				diag++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return claims, diag
	}
	if c, d := count(false, 0); c != 4 || d != 0 {
		t.Errorf("pass 0: %d claims, %d diagnostic frames; want 4 and 0", c, d)
	}
	if c, _ := count(false, 1); c != 0 {
		t.Errorf("pass 1: %d claims, want none", c)
	}
	if c, d := count(true, 0); c != 5 || d == 0 {
		t.Errorf("workshop pass 0: %d claims (the tool's too), %d diagnostic frames", c, d)
	}
}
