package canre

import (
	"math"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/services/ring"
	"fieldtap/tools/refdata"
)

// The reference numbers in this file come from testdata/re_count.py
// (stdlib python3, its own log reader, field extraction, CRCs, entropy
// and zero-order-hold correlation), run once as each comment shows, e.g.
//
//	python3 services/canre/testdata/re_count.py ../shared/testdata/can/j1939atk_normal.log --scan

func series(t *testing.T, file string, id uint32) *Series {
	t.Helper()
	p, _ := canbustest.Load(t, refdata.File(t, "can", file), "can0")
	s, err := Frames(p.Frames(), id|wire.CANEFF, Window{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCountersReference(t *testing.T) {
	tests := []struct {
		file  string
		id    uint32
		frame int
		want  []CounterCandidate // field, score, wraps
	}{
		// css_j1939_FCBF0606.log --scan: 1CEBFF00 64 counters [(0, 2, 1.0, 16), (16, 2, 0.968254, 15)]
		// (TP.DT packet numbers 1..4, and a byte of the payload that follows them)
		{file: "css_j1939_FCBF0606.log", id: 0x1CEBFF00, frame: 64, want: []CounterCandidate{
			{Field: Field{StartBit: 0, Length: 2}, Score: 1, Wraps: 16},
			{Field: Field{StartBit: 16, Length: 2}, Score: 0.968254, Wraps: 15},
		}},
		// j1939atk_normal.log --scan: 18FD7B00 30 counters [(16, 8, 1.0, 0)]
		{file: "j1939atk_normal.log", id: 0x18FD7B00, frame: 30, want: []CounterCandidate{{Field: Field{StartBit: 16, Length: 8}, Score: 1}}},
		// cytr_candump-2021-10-14_234124.log --scan: 18EBFF00 348 counters [(0, 3, 0.907781, 27)]
		{file: "cytr_candump-2021-10-14_234124.log", id: 0x18EBFF00, frame: 348, want: []CounterCandidate{{Field: Field{StartBit: 0, Length: 3}, Score: 0.907781, Wraps: 27}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s := series(t, tc.file, tc.id)
			c := FindCounters(s)
			if c.Frames != tc.frame || len(c.Candidates) != len(tc.want) || c.Method != CounterMethod {
				t.Fatalf("%d frames, candidates %+v", c.Frames, c.Candidates)
			}
			for i, w := range tc.want {
				g := c.Candidates[i]
				if g.Field != w.Field || g.Score != w.Score || g.Wraps != w.Wraps {
					t.Errorf("candidate %d = %+v, want %+v", i, g, w)
				}
			}
			if ck := FindChecksums(s); len(ck.Candidates) != 0 {
				t.Errorf("checksums %+v: the script finds none", ck.Candidates)
			}
		})
	}
}

func TestEntropyReference(t *testing.T) {
	// j1939atk_normal.log 0CF00203 (ETC1): frames=3000;
	// byte entropies 0.660691 7.882347 4.404601 0 0 7.852862 3.848429 0,
	// distinct 3 256 29 1 1 254 21 1; bit flips below.
	s := series(t, "j1939atk_normal.log", 0x0CF00203)
	e := EntropyOf(s)
	entropy := []float64{0.660691, 7.882347, 4.404601, 0, 0, 7.852862, 3.848429, 0}
	distinct := []int{3, 256, 29, 1, 1, 254, 21, 1}
	for k, b := range e.Bytes {
		if math.Abs(b.Entropy-entropy[k]) > 1e-6 || b.Distinct != distinct[k] {
			t.Errorf("byte %d = %+v, want entropy %v distinct %d", k, b, entropy[k], distinct[k])
		}
	}
	flips := map[int]int{2: 1, 4: 4, 8: 726, 9: 757, 10: 757, 11: 748, 12: 779, 13: 779, 14: 657, 15: 447, 16: 241, 17: 103, 18: 44,
		19: 19, 20: 11, 21: 5, 40: 777, 41: 735, 42: 760, 43: 735, 44: 739, 45: 811, 46: 693, 47: 514, 48: 287, 49: 137, 50: 54, 51: 25, 52: 14}
	for _, b := range e.Bits {
		if b.Flips != flips[b.Bit] {
			t.Errorf("bit %d flips %d, want %d", b.Bit, b.Flips, flips[b.Bit])
		}
	}
	// READ on the same flips: output shaft speed runs from bit 8 to 21
	// (its two top bits never move), input shaft speed from 40 to 52.
	sig := FindSignals(s)
	want := map[Field]bool{{StartBit: 8, Length: 14}: true, {StartBit: 40, Length: 13}: true, {StartBit: 2, Length: 1}: true, {StartBit: 4, Length: 1}: true}
	for _, c := range sig.LittleEndian {
		if !want[c.Field] {
			t.Errorf("unexpected little-endian candidate %+v", c)
		}
		delete(want, c.Field)
	}
	if len(want) != 0 {
		t.Errorf("missing candidates %v (got %+v)", want, sig.LittleEndian)
	}
}

func TestCorrelationReference(t *testing.T) {
	// j1939atk_normal.log --corr 0CF00203 8 16 18FEF100 8 16:
	//   pairs=2999 r=0.998459 slope=1.167159 intercept=-172.927673
	// (ETC1 output shaft speed against CCVS1 wheel-based speed, raw).
	p, _ := canbustest.Load(t, refdata.File(t, "can", "j1939atk_normal.log"), "can0")
	etc1, err := Frames(p.Frames(), 0x0CF00203|wire.CANEFF, Window{})
	if err != nil {
		t.Fatal(err)
	}
	ccvs, err := Frames(p.Frames(), 0x18FEF100|wire.CANEFF, Window{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReferenceFromField(ccvs, Field{StartBit: 8, Length: 16})
	if err != nil {
		t.Fatal(err)
	}
	speed := Field{StartBit: 8, Length: 16}
	c, err := Correlate(etc1, []Field{speed}, ref)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Results[0]
	if r.Pairs != 2999 || *r.R != 0.998459 || math.Abs(*r.Slope-1.167159) > 5e-7 || math.Abs(*r.Intercept+172.927673) > 5e-7 {
		t.Errorf("correlation %+v r %v slope %v intercept %v", r, *r.R, *r.Slope, *r.Intercept)
	}
	// Against the decoded SPN 84 from the same window, the default
	// candidates rank the output shaft speed (READ's bits 8..21, or the
	// word at bit 8) first.
	ref84, err := ReferenceFromSPN(p.Frames(), Window{}, 84, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err = Correlate(etc1, nil, ref84)
	if err != nil {
		t.Fatal(err)
	}
	top := c.Results[0]
	if top.Field.StartBit != 8 || top.Field.BigEndian || *top.R < 0.998 || c.Method != CorrelationMethod || c.Tested < 10 {
		t.Errorf("top of %d: %+v", c.Tested, top)
	}
}

// A synthetic id with known contents: a 4-bit counter in bits 0..3, a
// 12-bit ramp at bits 8..19, a big-endian 16-bit ramp in bytes 4..5 and a
// CRC-8 (SAE J1850) of bytes 0..6 in byte 7.
func TestKnownLayout(t *testing.T) {
	cs, _ := canbus.New(ring.Limits{})
	port, _ := cs.Port("can0", 0)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 400
	for i := range n {
		var d [8]byte
		d[0] = byte(i & 0x0F)
		ramp := 100 + 3*i
		d[1], d[2] = byte(ramp), byte(ramp>>8)&0x0F
		d[3] = 0x55
		be := 1000 + 7*i
		d[4], d[5] = byte(be>>8), byte(be)
		d[6] = 0xFF
		d[7] = crc8(d[:7], 0x1D, 0xFF, 0xFF)
		port.Add(t0.Add(time.Duration(i)*10*time.Millisecond), 0x123, d[:])
	}
	s, err := Frames(port.Frames(), 0x123, Window{})
	if err != nil {
		t.Fatal(err)
	}
	c := FindCounters(s)
	if len(c.Candidates) == 0 || c.Candidates[0].Field != (Field{StartBit: 0, Length: 4}) || c.Candidates[0].Score != 1 || c.Candidates[0].Wraps != n/16-1 {
		t.Errorf("counters %+v", c.Candidates)
	}
	ck := FindChecksums(s)
	if len(ck.Candidates) != 1 || ck.Candidates[0] != (ChecksumCandidate{Byte: 7, Algorithm: AlgCRC8J1850, Score: 1, Matches: n}) {
		t.Errorf("checksums %+v", ck.Candidates)
	}
	sig := FindSignals(s)
	found := map[Field]string{}
	for _, c := range sig.LittleEndian {
		found[c.Field] = c.Kind
	}
	if found[Field{StartBit: 0, Length: 4}] != "counter" {
		t.Errorf("little-endian candidates %+v", sig.LittleEndian)
	}
	var be bool
	for _, c := range sig.BigEndian {
		// 1000 + 7·399 = 3793 needs 12 bits: MSB bit 3 of byte 4 (DBC 35).
		if c.Field.StartBit == 35 && c.Field.Length == 12 && c.Field.BigEndian && c.CoChange != nil {
			be = true
		}
	}
	if !be {
		t.Errorf("big-endian candidates %+v", sig.BigEndian)
	}
	if _, err := Frames(port.Frames(), 0x124, Window{}); err == nil {
		t.Error("an id with no frames gave a series")
	}
	if _, err := Correlate(s, []Field{{StartBit: 60, Length: 8}}, Reference{}); err == nil {
		t.Error("a field outside the payload was accepted")
	}
}

// TestLongRunSplitsAtTheWidestField: when all 40 bits of a 5-byte payload
// flip together, READ sees one run; a field reads at most MaxFieldBits,
// so the run becomes a 32-bit and an 8-bit candidate in each byte order.
func TestLongRunSplitsAtTheWidestField(t *testing.T) {
	cs, _ := canbus.New(ring.Limits{})
	port, _ := cs.Port("can0", 0)
	t0 := time.Unix(0, 0)
	for i := range 20 {
		d := make([]byte, 5)
		if i%2 == 1 {
			copy(d, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
		}
		port.Add(t0.Add(time.Duration(i)*time.Millisecond), 0x100, d)
	}
	s, err := Frames(port.Frames(), 0x100, Window{})
	if err != nil {
		t.Fatal(err)
	}
	sig := FindSignals(s)
	for name, cs := range map[string][]SignalCandidate{"little-endian": sig.LittleEndian, "big-endian": sig.BigEndian} {
		var lengths []int
		for _, c := range cs {
			if err := c.Field.check(s.DLC); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			lengths = append(lengths, c.Field.Length)
		}
		if len(lengths) != 2 || lengths[0] != MaxFieldBits || lengths[1] != 8 {
			t.Errorf("%s candidate lengths %v, want [%d 8]", name, lengths, MaxFieldBits)
		}
	}
}
