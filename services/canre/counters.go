package canre

import (
	"math"
	"slices"
)

// Counter search bounds.
const (
	// CounterMethod names the test: a little-endian field of 2..8 bits
	// whose value steps +1 modulo 2^n between consecutive frames.
	CounterMethod = "increment_mod_2^n"
	// MinCounterScore is the share of steps that must be +1: a counter
	// skips when a frame is lost, nothing else does this often.
	MinCounterScore = 0.9
	minCounterBits  = 2
	maxCounterBits  = 8
	// MaxCounters bounds the candidates listed, best first.
	MaxCounters = 16
	scoreDigits = 1e6
)

// CounterCandidate is a bit field that counts frames.
type CounterCandidate struct {
	Field Field
	// Score is the share of consecutive frames whose field stepped +1
	// modulo 2^Length; Wraps how often it went from its top to 0.
	Score    float64
	Wraps    int
	Distinct int
	// Skips are steps that were neither +1 nor a repeat: lost frames, or
	// a field that is not a counter at all.
	Skips int
}

// Counters is the rolling-counter search of one id.
type Counters struct {
	Method     string
	Frames     int
	Candidates []CounterCandidate
	Truncated  bool
}

// FindCounters tries every little-endian field of 2..8 bits inside the
// bytes every frame has. A field is a counter when at least
// MinCounterScore of its steps are +1 modulo 2^n and, once the frames
// outnumber its values, it wrapped at least once (a wider field holding a
// narrow counter never wraps at its own top). Of the counters that share a
// start bit only the widest is kept: its low bits count too.
func FindCounters(s *Series) Counters {
	out := Counters{Method: CounterMethod, Frames: s.Len(), Candidates: []CounterCandidate{}}
	var found []CounterCandidate
	vals := make([]int64, s.Len())
	for start := range 8 * s.DLC {
		for n := minCounterBits; n <= maxCounterBits && start+n <= 8*s.DLC; n++ {
			f := Field{StartBit: start, Length: n}
			for i := range s.Data {
				vals[i] = s.raw(i, f)
			}
			c, ok := counter(vals, n)
			if ok {
				c.Field = f
				found = append(found, c)
			}
		}
	}
	for _, c := range found {
		if !slices.ContainsFunc(found, func(o CounterCandidate) bool {
			return o.Field.StartBit == c.Field.StartBit && o.Field.Length > c.Field.Length
		}) {
			out.Candidates = append(out.Candidates, c)
		}
	}
	slices.SortStableFunc(out.Candidates, func(a, b CounterCandidate) int {
		switch {
		case a.Score != b.Score:
			return cmpFloat(b.Score, a.Score)
		case a.Field.Length != b.Field.Length:
			return b.Field.Length - a.Field.Length
		}
		return a.Field.StartBit - b.Field.StartBit
	})
	if len(out.Candidates) > MaxCounters {
		out.Candidates, out.Truncated = out.Candidates[:MaxCounters], true
	}
	return out
}

func counter(vals []int64, n int) (CounterCandidate, bool) {
	mod := int64(1) << n
	var c CounterCandidate
	var seen [1 << maxCounterBits]bool
	steps := 0
	for i, v := range vals {
		if !seen[v] {
			seen[v] = true
			c.Distinct++
		}
		if i == 0 {
			continue
		}
		prev := vals[i-1]
		switch {
		case v == (prev+1)%mod:
			steps++
			if prev == mod-1 {
				c.Wraps++
			}
		case v != prev:
			c.Skips++
		}
	}
	if c.Distinct < 2 {
		return c, false
	}
	c.Score = math.Round(float64(steps)/float64(len(vals)-1)*scoreDigits) / scoreDigits
	return c, float64(steps)/float64(len(vals)-1) >= MinCounterScore && (c.Wraps > 0 || int64(len(vals)) <= mod)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
