package j1939gen

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	idMask = 1<<29 - 1
	// busSlack bounds how late arbitration can push a frame: a handful of
	// frame times behind the frames queued with it.
	busSlack = 3 * time.Millisecond
)

func collect(t *testing.T, o Options) []Frame {
	t.Helper()
	var fs []Frame
	if err := Generate(o, func(f Frame) error { fs = append(fs, f); return nil }); err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return fs
}

func candump(t *testing.T, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCandump(&b, o); err != nil {
		t.Fatalf("WriteCandump: %v", err)
	}
	return b.Bytes()
}

func pgnOf(id uint32) uint32 {
	pgn := id >> 8 & 0x3FFFF
	if pgn>>8&0xFF < pduFormatSpecific {
		pgn &^= 0xFF
	}
	return pgn
}

func saOf(id uint32) byte { return byte(id) }

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 3, Start: t0, Duration: 20 * time.Second}
	a := candump(t, o)
	if !bytes.Equal(a, candump(t, o)) {
		t.Fatal("same options gave different logs")
	}
	o.Seed++
	if bytes.Equal(a, candump(t, o)) {
		t.Fatal("a different seed gave the same log")
	}
}

func TestFrames(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{name: "minute", o: Options{Start: t0, Duration: time.Minute}},
		{name: "claims only", o: Options{Seed: 1, Start: t0, Duration: claimSettle}},
		{name: "odd start", o: Options{Seed: 2, Start: t0.Add(1234567 * time.Nanosecond), Duration: 7 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := collect(t, tc.o)
			end := tc.o.Start.Add(tc.o.Duration)
			if len(fs) == 0 || !fs[0].Time.Equal(tc.o.Start) {
				t.Fatalf("first of %d frames not at Start %v", len(fs), tc.o.Start)
			}
			for i, f := range fs {
				if !f.Extended || f.ID&^idMask != 0 || len(f.Data) > 8 {
					t.Fatalf("frame %d: extended %v id %#x len %d", i, f.Extended, f.ID, len(f.Data))
				}
				if !f.Time.Before(end) || f.Time.Sub(tc.o.Start)%time.Microsecond != 0 {
					t.Fatalf("frame %d at %v: outside [Start, %v) or not whole µs from Start", i, f.Time, end)
				}
				if i > 0 && !f.Time.After(fs[i-1].Time) {
					t.Fatalf("frame %d at %v, not after frame %d at %v", i, f.Time, i-1, fs[i-1].Time)
				}
			}
		})
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if err := Generate(Options{Start: t0, Duration: d}, func(Frame) error { return nil }); err == nil {
			t.Errorf("Generate with duration %v: no error", d)
		}
	}
	if err := WriteCandump(&bytes.Buffer{}, Options{Start: time.Unix(-1, 0), Duration: time.Second}); err == nil {
		t.Error("WriteCandump before 1970: no error")
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Generate(Options{Start: t0, Duration: time.Minute}, func(Frame) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Fatalf("Generate returned %v after %d frames; want %v after 5", err, n, stop)
	}
}

// TestSchedule checks each message's identifier, count and spacing over a
// minute: nominal period, plus jitter and arbitration delay.
func TestSchedule(t *testing.T) {
	const run = time.Minute
	fs := collect(t, Options{Seed: 9, Start: t0, Duration: run})
	byID := map[uint32][]time.Time{}
	for _, f := range fs {
		byID[f.ID] = append(byID[f.ID], f.Time)
	}
	tests := []struct {
		name   string
		id     uint32
		period time.Duration
	}{
		{name: "EEC1", id: 0x0CF00400, period: 10 * time.Millisecond},
		{name: "CCVS", id: 0x18FEF100, period: 100 * time.Millisecond},
		{name: "ET1", id: 0x18FEEE00, period: time.Second},
		{name: "DM1", id: 0x18FECA00, period: time.Second},
		{name: "ETC1", id: 0x0CF00203, period: 10 * time.Millisecond},
		{name: "ETC2", id: 0x18F00503, period: 100 * time.Millisecond},
		{name: "EBC1", id: 0x18F0010B, period: 100 * time.Millisecond},
		{name: "AMB", id: 0x18FEF521, period: time.Second},
		{name: "TP.CM", id: 0x1CECFF00, period: vinEvery},
	}
	total := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := byID[tc.id]
			want := int((run - claimSettle) / tc.period)
			if len(ts) < want-1 || len(ts) > want+1 {
				t.Fatalf("%d frames with id %08X, want %d ± 1", len(ts), tc.id, want)
			}
			lo, hi := tc.period-maxJitter-busSlack, tc.period+maxJitter+busSlack
			for i := 1; i < len(ts); i++ {
				if gap := ts[i].Sub(ts[i-1]); gap < lo || gap > hi {
					t.Fatalf("frames %d and %d %v apart, want %v to %v", i-1, i, gap, lo, hi)
				}
			}
		})
		total += len(byID[tc.id])
	}
	claims, dts := 4, 3*len(byID[0x1CECFF00])
	if total+claims+dts != len(fs) {
		t.Errorf("%d frames, of which %d are accounted for", len(fs), total+claims+dts)
	}
	const minRate, maxRate = 100, 500 // a realistic light truck bus, per second
	if rate := len(fs) / int(run/time.Second); rate < minRate || rate > maxRate {
		t.Errorf("%d frames per second, want %d to %d", rate, minRate, maxRate)
	}
}

func TestAddressClaims(t *testing.T) {
	fs := collect(t, Options{Seed: 4, Start: t0, Duration: 2 * time.Second})
	wantFunction := map[byte]uint64{EngineAddress: 0, TransmissionAddress: 3, BrakesAddress: 9, BodyAddress: 26}
	claimed := map[byte]time.Time{}
	for i, f := range fs {
		sa := saOf(f.ID)
		if pgnOf(f.ID) == pgnAddressClaim {
			if f.ID>>idPriorityShift != prioInfo || f.ID>>8&0xFF != globalAddress || len(f.Data) != 8 {
				t.Fatalf("frame %d: claim %08X % X", i, f.ID, f.Data)
			}
			n := uint64(0)
			for j := 7; j >= 0; j-- {
				n = n<<8 | uint64(f.Data[j])
			}
			function, industry, vsys := n>>40&0xFF, n>>60&0x7, n>>49&0x7F
			if function != wantFunction[sa] || industry != 1 || vsys != 1 {
				t.Errorf("SA %#02x: NAME function %d industry group %d vehicle system %d; want %d, 1, 1",
					sa, function, industry, vsys, wantFunction[sa])
			}
			claimed[sa] = f.Time
			continue
		}
		at, ok := claimed[sa]
		if !ok || f.Time.Sub(at) < claimSettle {
			t.Fatalf("frame %d from SA %#02x at %v: claimed %v at %v", i, sa, f.Time, ok, at)
		}
	}
	if len(claimed) != len(wantFunction) {
		t.Fatalf("claims from %v, want %v", claimed, wantFunction)
	}
}
