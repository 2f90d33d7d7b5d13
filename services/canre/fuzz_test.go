package canre

import (
	"bytes"
	"testing"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// FuzzAnalyses runs every helper over arbitrary payloads of one id: none
// may panic, and each keeps its bounds.
func FuzzAnalyses(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 1, 1, 2, 3, 4, 5, 6, 7, 2, 1, 2, 3, 4, 5, 6, 8})
	f.Add([]byte{0xFF, 0, 0x80, 1, 0x7F, 2, 0, 3, 0xFE, 4, 0, 5, 0x10, 6, 0, 7, 0xFF, 8})
	// Five bytes flipping all together: one READ run wider than a field.
	f.Add(bytes.Repeat([]byte{5, 0, 0, 0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, _ := canbus.New(ring.Limits{Items: 1024, Bytes: 1024 * 64})
		port, _ := cs.Port("can0", 0)
		t0 := time.Unix(0, 0)
		for i := 0; len(b) > 0; i++ {
			n := min(int(b[0])%9, len(b)-1)
			port.Add(t0.Add(time.Duration(i)*time.Millisecond), 0x7E8, b[1:1+n])
			b = b[1+n:]
		}
		s, err := Frames(port.Frames(), 0x7E8, Window{})
		if err != nil {
			return
		}
		if c := FindCounters(s); len(c.Candidates) > MaxCounters {
			t.Fatalf("%d counters", len(c.Candidates))
		}
		if c := FindChecksums(s); len(c.Candidates) > MaxChecksums {
			t.Fatalf("%d checksums", len(c.Candidates))
		}
		e := EntropyOf(s)
		for _, x := range e.Bits {
			if x.Entropy < 0 || x.Entropy > 1 {
				t.Fatalf("bit entropy %v", x.Entropy)
			}
		}
		sig := FindSignals(s)
		for _, c := range append(sig.LittleEndian, sig.BigEndian...) {
			if c.Field.check(s.DLC) != nil {
				t.Fatalf("candidate %+v outside the %d-byte payload", c, s.DLC)
			}
			for _, signed := range []bool{false, true} {
				f := c.Field
				f.Signed = signed
				for i := range s.Data {
					if got, want := s.raw(i, f), extract(f, &s.Data[i]); got != want {
						t.Fatalf("field %+v of %X: %d, bit by bit %d", f, s.Data[i], got, want)
					}
				}
			}
		}
		ref, err := ReferenceFromField(s, Field{StartBit: 0, Length: min(8, 8*s.DLC)})
		if s.DLC == 0 {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if c, err := Correlate(s, nil, ref); err != nil || len(c.Results) > MaxCorrelations {
			t.Fatalf("correlate: %v, %d results", err, len(c.Results))
		}
	})
}

// extract reads a field bit by bit, the slow way Series.raw must agree with.
func extract(f Field, d *[8]byte) int64 {
	var u uint64
	if f.BigEndian {
		lin := f.StartBit/8*8 + 7 - f.StartBit%8
		for i := lin; i < lin+f.Length; i++ {
			u = u<<1 | uint64(d[i>>3]>>(7-i&7)&1)
		}
	} else {
		for i := f.StartBit + f.Length - 1; i >= f.StartBit; i-- {
			u = u<<1 | uint64(d[i>>3]>>(i&7)&1)
		}
	}
	if f.Signed && f.Length < 64 && u>>(f.Length-1)&1 == 1 {
		return int64(u) - 1<<f.Length
	}
	return int64(u)
}
