package canre

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"
)

// MarksMethod names the measure: for each bit and byte, the share of
// marks near which it changed against the share of equally long stretches
// away from every mark in which it changed; ranked by the difference.
const MarksMethod = "change_near_marks_vs_elsewhere"

// Marks bounds.
const (
	// DefaultNear is how close to a mark a change counts as near it: a
	// person presses within about a second of what they mark.
	DefaultNear = time.Second
	// MaxNear bounds Near: past a minute, "near a mark" is most of a run.
	MaxNear = time.Minute
	// MaxMarkBits is how many bits an answer lists, strongest first.
	MaxMarkBits = 32
)

// ErrNoMarks is returned when no mark falls within the series' span.
var ErrNoMarks = errors.New("no mark within the frames' span")

// MarkStat is one bit (or byte) ranked against the marks.
type MarkStat struct {
	Index int // DBC bit numbering (byte·8 + bit), or the byte
	// NearMarks is how many marks it changed near; NearShare that over
	// every mark.
	NearMarks int
	NearShare float64
	// ElseShare is the share of the stretches away from marks (each as
	// long as a mark's window) in which it changed: its base rate.
	ElseShare float64
	// Lift is NearShare - ElseShare: 1 for a bit that changes at every
	// mark and nowhere else, 0 or less for one the marks do not explain.
	Lift float64
}

// MarkRanking is the bits and bytes of one id ranked against marks.
type MarkRanking struct {
	Method string
	// Marks are the marks within the frames' span, Stretches the
	// stretches away from them that give the base rate.
	Marks     int
	NearMS    int64
	Stretches int
	Bits      []MarkStat // strongest first, at most MaxMarkBits
	BitsTotal int
	Bytes     []MarkStat // strongest first, every byte
}

// RankByMarks ranks the bits and bytes of s by how they change within
// near of each mark compared with elsewhere. A change is between two
// consecutive frames and happens at the later one's time. Marks outside
// the frames' span are not counted.
func RankByMarks(s *Series, marks []time.Time, near time.Duration) (MarkRanking, error) {
	if near <= 0 || near > MaxNear {
		return MarkRanking{}, errors.New("near must be above 0 and at most a minute")
	}
	first, last := s.Times[0], s.Times[len(s.Times)-1]
	var in []time.Time
	for _, m := range marks {
		if !m.Before(first) && !m.After(last) {
			in = append(in, m)
		}
	}
	if len(in) == 0 {
		return MarkRanking{}, ErrNoMarks
	}
	slices.SortFunc(in, func(a, b time.Time) int { return a.Compare(b) })
	nearMark := func(t time.Time) bool {
		i, _ := slices.BinarySearchFunc(in, t.Add(-near), func(m, x time.Time) int { return m.Compare(x) })
		return i < len(in) && !in[i].After(t.Add(near))
	}
	// Stretches tile the span in windows of 2·near; one that touches a
	// mark's window is neither near nor elsewhere.
	width := 2 * near
	stretch := func(t time.Time) int { return int(t.Sub(first) / width) }
	nStretch := stretch(last) + 1
	away := make([]bool, nStretch)
	for i := range away {
		from := first.Add(time.Duration(i) * width)
		lo, _ := slices.BinarySearchFunc(in, from.Add(-near), func(m, x time.Time) int { return m.Compare(x) })
		away[i] = lo == len(in) || !in[lo].Before(from.Add(width+near))
	}
	stretches := 0
	for _, a := range away {
		if a {
			stretches++
		}
	}
	nBits := 8 * s.DLC
	nearBit := make([][]bool, nBits) // [bit][mark]
	for b := range nearBit {
		nearBit[b] = make([]bool, len(in))
	}
	elseBit := make([]map[int]bool, nBits)
	for b := range elseBit {
		elseBit[b] = map[int]bool{}
	}
	for i := 1; i < len(s.Times); i++ {
		t := s.Times[i]
		var changed []int
		for k := range s.DLC {
			x := s.Data[i][k] ^ s.Data[i-1][k]
			for j := range 8 {
				if x&(1<<j) != 0 {
					changed = append(changed, 8*k+j)
				}
			}
		}
		if len(changed) == 0 {
			continue
		}
		if nearMark(t) {
			for m, at := range in {
				if t.Sub(at).Abs() <= near {
					for _, b := range changed {
						nearBit[b][m] = true
					}
				}
			}
		}
		if st := stretch(t); away[st] {
			for _, b := range changed {
				elseBit[b][st] = true
			}
		}
	}
	out := MarkRanking{Method: MarksMethod, Marks: len(in), NearMS: near.Milliseconds(), Stretches: stretches, BitsTotal: nBits}
	stat := func(idx int, nearBy []bool, elsewhere int) MarkStat {
		n := 0
		for _, v := range nearBy {
			if v {
				n++
			}
		}
		st := MarkStat{Index: idx, NearMarks: n, NearShare: share(n, len(in)), ElseShare: share(elsewhere, stretches)}
		st.Lift = math.Round((st.NearShare-st.ElseShare)*1000) / 1000
		return st
	}
	for b := range nBits {
		out.Bits = append(out.Bits, stat(b, nearBit[b], len(elseBit[b])))
	}
	for k := range s.DLC {
		nearBy := make([]bool, len(in))
		elsewhere := map[int]bool{}
		for j := range 8 {
			for m, v := range nearBit[8*k+j] {
				nearBy[m] = nearBy[m] || v
			}
			for st := range elseBit[8*k+j] {
				elsewhere[st] = true
			}
		}
		out.Bytes = append(out.Bytes, stat(k, nearBy, len(elsewhere)))
	}
	strongest := func(a, b MarkStat) int { return cmp.Or(cmp.Compare(b.Lift, a.Lift), cmp.Compare(a.Index, b.Index)) }
	slices.SortFunc(out.Bits, strongest)
	slices.SortFunc(out.Bytes, strongest)
	out.Bits = out.Bits[:min(len(out.Bits), MaxMarkBits)]
	return out, nil
}

// share is n of total to three decimals; 0 of none.
func share(n, total int) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(total)*1000) / 1000
}
