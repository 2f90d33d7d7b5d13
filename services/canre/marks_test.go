package canre

import (
	"errors"
	"testing"
	"time"
)

// pressedSeries is a simulated ECU's id: a frame every 100 ms for a
// minute, byte 0 a rolling counter (changes in every frame), byte 1 bit
// 5 (DBC bit 13) toggled at each press, byte 2 constant.
func pressedSeries(presses []time.Time) *Series {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Series{IDHex: "123", DLC: 3}
	state := byte(0)
	next := 0
	for i := range 600 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		for next < len(presses) && !presses[next].After(at) {
			state ^= 1 << 5
			next++
		}
		s.Times = append(s.Times, at)
		s.Data = append(s.Data, [8]byte{byte(i), state, 0x42})
	}
	s.words()
	return s
}

func TestRankByMarksFindsThePressedBit(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var presses []time.Time
	for i := range 6 {
		presses = append(presses, t0.Add(time.Duration(5+9*i)*time.Second+30*time.Millisecond))
	}
	s := pressedSeries(presses)
	r, err := RankByMarks(s, presses, DefaultNear)
	if err != nil {
		t.Fatal(err)
	}
	if r.Marks != 6 || r.Method != MarksMethod || r.BitsTotal != 24 {
		t.Fatalf("ranking %+v", r)
	}
	top := r.Bits[0]
	if top.Index != 13 || top.NearShare != 1 || top.ElseShare != 0 || top.Lift != 1 {
		t.Errorf("top bit %+v, want bit 13 with near 1, elsewhere 0", top)
	}
	// The counter's low bit changes everywhere: near every mark and in
	// every stretch, so the marks do not explain it.
	for _, b := range r.Bits {
		if b.Index == 0 && (b.NearShare != 1 || b.ElseShare != 1 || b.Lift != 0) {
			t.Errorf("counter bit 0 %+v, want near 1, elsewhere 1, lift 0", b)
		}
	}
	if r.Bytes[0].Index != 1 || r.Bytes[0].Lift != 1 {
		t.Errorf("top byte %+v, want byte 1", r.Bytes[0])
	}
	if r.Stretches == 0 {
		t.Error("no stretch away from the marks")
	}
}

func TestRankByMarksRefuses(t *testing.T) {
	s := pressedSeries(nil)
	if _, err := RankByMarks(s, []time.Time{s.Times[0].Add(-time.Hour)}, DefaultNear); !errors.Is(err, ErrNoMarks) {
		t.Errorf("mark outside the span: %v, want ErrNoMarks", err)
	}
	if _, err := RankByMarks(s, []time.Time{s.Times[10]}, 2*MaxNear); err == nil {
		t.Error("near over MaxNear accepted")
	}
}
