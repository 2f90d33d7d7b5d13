package canre

import (
	"math"
	"slices"
)

// SignalMethod names the boundary rule, READ's (Marchetti and Stabili,
// "READ: Reverse Engineering of Automotive Data Frames", IEEE TIFS 2019):
// walking a signal from its least to its most significant bit the bit-flip
// rate never rises by an order of magnitude; where it does, a new signal
// starts. Bits that never flip belong to no signal.
const SignalMethod = "bit_flip_rate_magnitude_boundaries (READ)"

// MaxSignalCandidates bounds the candidates listed per byte order.
const MaxSignalCandidates = 64

// SignalCandidate is a run of bits that behaves as one value.
type SignalCandidate struct {
	Field Field
	// Kind: flag (one bit), counter (a rolling counter FindCounters
	// found at the same place), or value.
	Kind     string
	Distinct int
	Min      int64
	Max      int64
	// LSBFlipRate and MSBFlipRate are the flip rates of its ends.
	LSBFlipRate float64
	MSBFlipRate float64
	// CoChange is the share of the MSB's flips in which the bit below it
	// flipped too: near 1 when the bits change together (carries of one
	// integer), nil for a one-bit field or an MSB that never flips.
	CoChange *float64
}

// Signals are the candidates of both byte-order readings.
type Signals struct {
	Method       string
	Frames       int
	LittleEndian []SignalCandidate
	BigEndian    []SignalCandidate
	Truncated    bool
}

// FindSignals splits the bytes every frame has into signal candidates,
// once reading them little-endian (Intel) and once big-endian (Motorola);
// which reading holds is for the analyst (or a correlation) to decide.
func FindSignals(s *Series) Signals {
	counters := FindCounters(s)
	flips := make([]int, 8*s.DLC)
	for i := 1; i < s.Len(); i++ {
		for b := range flips {
			if bit(&s.Data[i], b) != bit(&s.Data[i-1], b) {
				flips[b]++
			}
		}
	}
	out := Signals{Method: SignalMethod, Frames: s.Len()}
	var cut bool
	out.LittleEndian, cut = split(s, flips, false, counters)
	out.Truncated = cut
	out.BigEndian, cut = split(s, flips, true, counters)
	out.Truncated = out.Truncated || cut
	return out
}

// split walks the bits from each signal's LSB to its MSB: DBC bits 0, 1, …
// for little-endian; for big-endian the last bit of the payload backwards
// in MSB-first order (byte n−1 bit 0 up to byte 0 bit 7).
func split(s *Series, flips []int, big bool, counters Counters) ([]SignalCandidate, bool) {
	n := len(flips)
	order := make([]int, n) // order[i] is the DBC bit at walk step i
	for i := range order {
		if big {
			order[i] = flipOrder(n - 1 - i) // MSB-first positions, walked from the end
		} else {
			order[i] = i
		}
	}
	pairs := float64(s.Len() - 1)
	mag := func(b int) float64 { return math.Floor(math.Log10(float64(flips[b]) / pairs)) }
	out := []SignalCandidate{}
	cut := false
	for i := 0; i < n; {
		if flips[order[i]] == 0 {
			i++
			continue
		}
		// A run longer than MaxFieldBits goes on as a second candidate:
		// no field reads more (Field.check).
		j := i + 1
		for j < n && j-i < MaxFieldBits && flips[order[j]] > 0 && mag(order[j]) <= mag(order[j-1]) {
			j++
		}
		// Bits order[i] (LSB) .. order[j-1] (MSB) form one candidate.
		f := Field{Length: j - i, BigEndian: big, StartBit: order[i]}
		if big {
			f.StartBit = order[j-1] // Motorola names the MSB
		}
		if len(out) == MaxSignalCandidates {
			cut = true
			break
		}
		out = append(out, candidate(s, f, flips, order[i], order[j-1], counters))
		i = j
	}
	return out, cut
}

func candidate(s *Series, f Field, flips []int, lsb, msb int, counters Counters) SignalCandidate {
	pairs := float64(s.Len() - 1)
	c := SignalCandidate{Field: f, Kind: "value", LSBFlipRate: round(float64(flips[lsb]) / pairs), MSBFlipRate: round(float64(flips[msb]) / pairs)}
	seen := map[int64]bool{}
	for i := range s.Data {
		v := s.raw(i, f)
		if i == 0 || v < c.Min {
			c.Min = v
		}
		if i == 0 || v > c.Max {
			c.Max = v
		}
		if len(seen) <= MaxFrames {
			seen[v] = true
		}
	}
	c.Distinct = len(seen)
	switch {
	case f.Length == 1:
		c.Kind = "flag"
	case !f.BigEndian && slices.ContainsFunc(counters.Candidates, func(k CounterCandidate) bool { return k.Field == f }):
		c.Kind = "counter"
	}
	if f.Length > 1 && flips[msb] > 0 {
		below := msb - 1 // the next less significant bit, LSB-first
		if f.BigEndian {
			below = flipOrder(flipOrder(msb) + 1) // MSB-first: one position on
		}
		both := 0
		for i := 1; i < s.Len(); i++ {
			if bit(&s.Data[i], msb) != bit(&s.Data[i-1], msb) && bit(&s.Data[i], below) != bit(&s.Data[i-1], below) {
				both++
			}
		}
		v := round(float64(both) / float64(flips[msb]))
		c.CoChange = &v
	}
	return c
}

// flipOrder converts between a DBC bit number and its MSB-first linear
// position (byte·8 + 7 − bit); it is its own inverse.
func flipOrder(b int) int { return b/8*8 + 7 - b%8 }
