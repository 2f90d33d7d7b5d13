package j1708gen

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"fieldtap/board/sim/internal/drive"
	"fieldtap/drivers/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func collect(t *testing.T, o Options) []Message {
	t.Helper()
	var ms []Message
	if err := Generate(o, func(m Message) error { ms = append(ms, m); return nil }); err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return ms
}

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 3, Start: t0, Duration: time.Minute}
	log := func() []byte {
		var b bytes.Buffer
		if err := WriteLog(&b, o, o.Start); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := log()
	if !bytes.Equal(a, log()) {
		t.Fatal("same options gave different logs")
	}
	o.Seed++
	if bytes.Equal(a, log()) {
		t.Fatal("a different seed gave the same log")
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if err := Generate(Options{Start: t0, Duration: d}, func(Message) error { return nil }); err == nil {
			t.Errorf("Generate with duration %v: no error", d)
		}
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Generate(Options{Start: t0, Duration: time.Minute}, func(Message) error {
		if n++; n == 4 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 4 {
		t.Fatalf("Generate returned %v after %d messages; want %v after 4", err, n, stop)
	}
}

// wireTime is how long m holds the bus, with the idle gap that ends it.
func wireTime(m Message) time.Duration {
	return time.Duration(len(m.Data)*bitsPerByte+idleBits) * time.Second / baud
}

// TestMessages checks framing on the wire and J1587 structure of every
// message, in runs of several lengths.
func TestMessages(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{name: "minute", o: Options{Seed: 1, Start: t0, Duration: time.Minute}},
		{name: "short", o: Options{Seed: 2, Start: t0.Add(time.Hour), Duration: 300 * time.Millisecond}},
		{name: "ten minutes", o: Options{Seed: 3, Start: t0, Duration: 10 * time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms := collect(t, tc.o)
			if len(ms) == 0 || !ms[0].Time.Equal(tc.o.Start) {
				t.Fatalf("first of %d messages not at Start", len(ms))
			}
			end := tc.o.Start.Add(tc.o.Duration)
			for i, m := range ms {
				var sum byte
				for _, b := range m.Data {
					sum += b
				}
				if sum != 0 || len(m.Data) < wire.MinJ1708Message || len(m.Data) > wire.MaxJ1708Message {
					t.Fatalf("message %d % X: %d bytes summing to %d", i, m.Data, len(m.Data), sum)
				}
				if _, err := parseJ1587(m.Data); err != nil {
					t.Fatalf("message %d % X: %v", i, m.Data, err)
				}
				if !m.Time.Before(end) {
					t.Fatalf("message %d at %v, not before %v", i, m.Time, end)
				}
				if i > 0 && m.Time.Sub(ms[i-1].Time) < wireTime(ms[i-1]) {
					t.Fatalf("message %d at %v overlaps message %d at %v", i, m.Time, i-1, ms[i-1].Time)
				}
			}
		})
	}
}

// parseJ1587 splits a checksum-valid message into PID → data, with the
// J1587 length rules: PIDs 0-127 one byte, 128-191 two, 192-253 a length
// byte, 254 the rest. Every byte must be consumed.
func parseJ1587(msg []byte) (map[int][]byte, error) {
	const pidExtension = 255
	params := map[int][]byte{}
	b := msg[1 : len(msg)-1]
	for len(b) > 0 {
		pid := int(b[0])
		var n, skip int
		switch {
		case pid == pidExtension:
			return nil, fmt.Errorf("page 2 PID not generated here")
		case pid < 128:
			n, skip = 1, 1
		case pid < 192:
			n, skip = 2, 1
		case pid < 254:
			if len(b) < 2 {
				return nil, fmt.Errorf("PID %d without length", pid)
			}
			n, skip = int(b[1]), 2
		default:
			n, skip = len(b)-1, 1
		}
		if len(b) < skip+n {
			return nil, fmt.Errorf("PID %d wants %d bytes, %d left", pid, n, len(b)-skip)
		}
		params[pid] = b[skip : skip+n]
		b = b[skip+n:]
	}
	return params, nil
}

// TestParameters decodes each parameter with its J1587 scaling and checks
// rates, ranges and the request/answer pair.
func TestParameters(t *testing.T) {
	const run = 2 * time.Minute
	ms := collect(t, Options{Seed: 5, Start: t0, Duration: run})
	count := map[string]int{}
	var lastDistance uint32
	var asked time.Time
	for i, m := range ms {
		p, _ := parseJ1587(m.Data)
		mid := m.Data[0]
		for pid, v := range p {
			count[fmt.Sprint(mid, "/", pid)]++
			switch {
			case mid == EngineMID && pid == pidRoadSpeed:
				const maxHalfMPH = 2 * 56 // 90 km/h
				if v[0] > maxHalfMPH {
					t.Fatalf("message %d: road speed %.1f mph", i, float64(v[0])/2)
				}
				if len(p) == 1 { // the answer to a request, not a broadcast
					const wait = 20 * time.Millisecond // a few messages' worth of bus
					if gap := m.Time.Sub(asked); asked.IsZero() || gap > wait {
						t.Fatalf("message %d % X answers a request %v later (asked at %v)", i, m.Data, gap, asked)
					}
					asked = time.Time{}
				}
			case mid == EngineMID && pid == pidEngineSpeed:
				const redline = 2100
				if rpm := int(v[0]) | int(v[1])<<8; rpm/4 < drive.IdleRPM || rpm/4 > redline {
					t.Fatalf("message %d: engine at %.2f rpm", i, float64(rpm)/4)
				}
			case mid == EngineMID && pid == pidCoolant && v[0] != coolantF:
				t.Fatalf("message %d: coolant %d °F, want %d", i, v[0], coolantF)
			case mid == EngineMID && pid == pidBattery:
				if mv := (int(v[0]) | int(v[1])<<8) * 50; mv < 12_000 || mv > 14_500 {
					t.Fatalf("message %d: battery %d mV", i, mv)
				}
			case mid == EngineMID && pid == pidDistance:
				d := uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24
				if len(v) != distanceLen || d < lastDistance {
					t.Fatalf("message %d: distance % X after %d", i, v, lastDistance)
				}
				lastDistance = d
			case mid == EngineMID && pid == pidDiagnostics:
				// PID, code (count included, active, PID type, standard
				// page, FMI), count.
				if len(v) != 3 || v[0] != FaultPID || v[1] != 0x80|FaultFMI || v[2] != FaultOccurrences {
					t.Fatalf("message %d: engine codes % X, want PID %d FMI %d ×%d", i, v, FaultPID, FaultFMI, FaultOccurrences)
				}
			case mid == BrakesMID && pid == pidDiagnostics && len(v) != 0:
				t.Fatalf("message %d: brake codes % X, want none", i, v)
			case mid == BrakesMID && pid == pidRequest:
				if v[0] != pidRoadSpeed || v[1] != EngineMID {
					t.Fatalf("message %d: request % X", i, v)
				}
				asked = m.Time
			}
		}
	}
	secs := int(run / time.Second)
	want := map[string]int{
		"128/84": 10*secs + secs/5, "128/190": 10 * secs, "128/91": 10 * secs, "128/92": 10 * secs,
		"128/110": secs, "128/168": secs, "128/194": secs, "128/245": secs / 10,
		"136/128": secs / 5, "136/194": secs / 10,
	}
	for k, n := range want {
		if got := count[k]; got < n-1 || got > n+1 {
			t.Errorf("MID/PID %s: %d in %v, want %d ± 1", k, got, run, n)
		}
	}
	if len(count) != len(want) {
		t.Errorf("MID/PIDs %v, want exactly %v", count, want)
	}
}
