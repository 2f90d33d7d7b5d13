package canre

import "math"

// EntropyMethod names the measure: Shannon entropy of each bit (0..1 bit)
// and each byte (0..8 bits) over the frames' values, with flip counts
// between consecutive frames.
const EntropyMethod = "shannon_entropy_over_frames"

// BitStat is one bit of the payload.
type BitStat struct {
	Bit     int // DBC numbering: byte·8 + bit, bit 0 the LSB
	Ones    float64
	Entropy float64
	Flips   int
	// FlipRate is flips per consecutive pair of frames.
	FlipRate float64
}

// ByteStat is one byte of the payload.
type ByteStat struct {
	Byte     int
	Entropy  float64
	Distinct int
	Min      int
	Max      int
	Changes  int // consecutive frames where it differs
}

// Entropy is the per-bit and per-byte variability of one id.
type Entropy struct {
	Method string
	Frames int
	Bytes  []ByteStat
	Bits   []BitStat
}

// EntropyOf measures the bytes every frame has.
func EntropyOf(s *Series) Entropy {
	n := float64(s.Len())
	out := Entropy{Method: EntropyMethod, Frames: s.Len(), Bytes: []ByteStat{}, Bits: []BitStat{}}
	for k := range s.DLC {
		var hist [256]int
		st := ByteStat{Byte: k, Min: 255}
		for i := range s.Data {
			v := s.Data[i][k]
			hist[v]++
			st.Min, st.Max = min(st.Min, int(v)), max(st.Max, int(v))
			if i > 0 && v != s.Data[i-1][k] {
				st.Changes++
			}
		}
		h := 0.0
		for _, c := range hist {
			if c > 0 {
				st.Distinct++
				p := float64(c) / n
				h -= p * math.Log2(p)
			}
		}
		st.Entropy = round(h)
		out.Bytes = append(out.Bytes, st)
	}
	for b := range 8 * s.DLC {
		ones, flips := 0, 0
		for i := range s.Data {
			v := bit(&s.Data[i], b)
			ones += int(v)
			if i > 0 && v != bit(&s.Data[i-1], b) {
				flips++
			}
		}
		p := float64(ones) / n
		h := 0.0
		if p > 0 && p < 1 {
			h = -(p*math.Log2(p) + (1-p)*math.Log2(1-p))
		}
		out.Bits = append(out.Bits, BitStat{Bit: b, Ones: round(p), Entropy: round(h), Flips: flips, FlipRate: round(float64(flips) / (n - 1))})
	}
	return out
}
