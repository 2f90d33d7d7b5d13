package drive

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestDrive(t *testing.T) {
	tests := []struct {
		name string
		seed uint64
		dur  time.Duration
	}{
		{name: "minute", seed: 1, dur: time.Minute},
		{name: "hour", seed: 2, dur: time.Hour},
		{name: "blink", seed: 3, dur: time.Millisecond},
	}
	const step = 10 * time.Millisecond
	// smoothstep peaks at 1.5 times the mean slope Accel; the two samples
	// each round down once.
	maxDelta := int64(3*Accel/2*int64(step)/int64(time.Second)) + 2
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(rand.New(rand.NewPCG(tc.seed, 0)), tc.dur)
			prev := d.At(0)
			if prev.Speed != 0 || prev.Engine != IdleRPM*RPMRes || prev.Gear != 1 {
				t.Fatalf("at 0: %+v, want standing in first gear at idle", prev)
			}
			stopped, cruised := false, false
			for at := step; at < tc.dur; at += step {
				s := d.At(at)
				if s.Speed < 0 || s.Speed > CruiseMax || max(s.Speed-prev.Speed, prev.Speed-s.Speed) > maxDelta {
					t.Fatalf("at %v: speed %d after %d, want 0 to %d in steps ≤ %d", at, s.Speed, prev.Speed, CruiseMax, maxDelta)
				}
				if s.Engine < IdleRPM*RPMRes || s.Gear < prev.Gear-1 || s.Gear > prev.Gear+1 {
					t.Fatalf("at %v: %+v after %+v", at, s, prev)
				}
				if want := max(IdleRPM*RPMRes, s.Output*s.Ratio/RatioRes); s.Engine != want {
					t.Fatalf("at %v: engine %d, gear and propshaft give %d", at, s.Engine, want)
				}
				stopped = stopped || (s.Speed == 0 && at > time.Minute)
				cruised = cruised || s.Speed >= CruiseMin
				prev = s
			}
			if tc.dur >= time.Hour && (!stopped || !cruised) {
				t.Fatalf("an hour's trip: stopped again %v, cruised %v; want both", stopped, cruised)
			}
		})
	}
}

func TestSameSeedSameDrive(t *testing.T) {
	a := New(rand.New(rand.NewPCG(7, 7)), time.Hour)
	b := New(rand.New(rand.NewPCG(7, 7)), time.Hour)
	for at := time.Duration(0); at < time.Hour; at += time.Second {
		if a.At(at) != b.At(at) {
			t.Fatalf("at %v: %+v and %+v", at, a.At(at), b.At(at))
		}
	}
}
