package g722

import (
	"math"
	"testing"
)

// What these tests check, honestly: no ITU test vector or G.722 encoder
// is at hand (sox cannot encode G.722), so the decoder is checked
//   - against the spec's own definitions where they are formulas (ilb is
//     2^(i/32) at 2^11; the QMF's even and odd halves each sum to 2^12, so
//     the pair has unit gain);
//   - by round trip: the test encodes tones with the spec's transmit QMF
//     and, per band sample, the code whose reconstruction (this decoder's
//     own INVQBL/INVQAH from its state) is nearest the band signal; a fresh
//     decoder then decodes the bytes and the output must match the input
//     tone within a stated SNR after the filter pair's delay. That catches
//     a broken predictor, scale adaptation or QMF, not a small deviation
//     from the reference's bit-exact output.

func TestTablesFollowTheirFormulas(t *testing.T) {
	for i, v := range ilb {
		want := 2048 * math.Pow(2, float64(i)/32)
		if math.Abs(float64(v)-want) > 4.5 {
			t.Errorf("ilb[%d] = %d, want about %.1f", i, v, want)
		}
	}
	var even, odd int32
	for i := range qmf {
		even += qmf[i]
		odd += qmf[11-i]
	}
	if even != 4096 || odd != 4096 {
		t.Errorf("QMF halves sum to %d and %d, want 4096 each (unit gain)", even, odd)
	}
	for i := range 64 {
		if (qm6[i] < 0) != (qm4[i>>2] < 0) && qm4[i>>2] != 0 {
			t.Errorf("code %d: 6-bit level %d and 4-bit level %d differ in sign", i, qm6[i], qm4[i>>2])
		}
	}
}

// encode is the test's encoder: the spec's transmit QMF at the
// 16-bit scale deployed encoders use, and per band sample the code whose
// reconstruction is nearest.
func encode(x []int16) []byte {
	var hist [24]int32
	d := NewDecoder()
	out := make([]byte, 0, len(x)/2)
	for n := 0; n+1 < len(x); n += 2 {
		copy(hist[2:], hist[:22])
		hist[1], hist[0] = int32(x[n]), int32(x[n+1])
		var xa, xb int32
		for i := range 12 {
			xa += qmf[i] * hist[2*i]      // h(2i)·x(2n-2i)
			xb += qmf[11-i] * hist[2*i+1] // h(2i+1)·x(2n-2i-1)
		}
		xl, xh := (xa+xb)>>14, (xa-xb)>>14
		il := nearest(64, func(c int) int32 { return clamp(d.low.s+d.low.det*qm6[c]>>15, outMin, outMax) }, xl)
		ih := nearest(4, func(c int) int32 { return clamp(d.high.s+d.high.det*qm2[c]>>15, outMin, outMax) }, xh)
		d.lower(il)
		d.higher(ih)
		out = append(out, byte(ih<<6|il))
	}
	return out
}

func nearest(n int, rec func(int) int32, target int32) int {
	best, bestErr := 0, int64(math.MaxInt64)
	for c := range n {
		if e := abs64(int64(rec(c)) - int64(target)); e < bestErr {
			best, bestErr = c, e
		}
	}
	return best
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func tone(hz, amp float64, n int) []int16 {
	x := make([]int16, n)
	for i := range x {
		x[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/16000))
	}
	return x
}

// snr compares y (delayed by lag) with x over the middle of the signal.
func snr(x, y []int16, lag int) float64 {
	var sig, noise float64
	for i := 2000; i+lag < len(y) && i < len(x)-100; i++ {
		s, e := float64(x[i]), float64(y[i+lag])-float64(x[i])
		sig += s * s
		noise += e * e
	}
	return 10 * math.Log10(sig/max(noise, 1e-9))
}

// pairDelay is the transmit and receive QMFs' delay together: two
// 24-tap filters, less the sample the band split and merge share.
const pairDelay = 22

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		hz, amp, minSNR float64
	}{
		{400, 8000, 20}, {1000, 12000, 20}, {3000, 4000, 15}, {5500, 3000, 8}, // 5.5 kHz is in the higher band, 2-bit ADPCM
	} {
		x := tone(c.hz, c.amp, 16000)
		code := encode(x)
		if len(code) != len(x)/2 {
			t.Fatalf("%v Hz: %d bytes for %d samples", c.hz, len(code), len(x))
		}
		y := NewDecoder().Decode(nil, code)
		if len(y) != len(x) {
			t.Fatalf("%v Hz: %d samples from %d bytes", c.hz, len(y), len(code))
		}
		best, bestLag := math.Inf(-1), 0
		for lag := range 48 {
			if s := snr(x, y, lag); s > best {
				best, bestLag = s, lag
			}
		}
		got := snr(x, y, pairDelay)
		t.Logf("%v Hz at %v: SNR %.1f dB at the pair's delay (best %.1f dB at %d)", c.hz, c.amp, got, best, bestLag)
		if got < c.minSNR {
			t.Errorf("%v Hz: round-trip SNR %.1f dB, want at least %v", c.hz, got, c.minSNR)
		}
	}
}

// Silence stays silence: the all-zero difference codes of both bands
// (low 0x3F/0x3E are ±136 steps; the smallest high code alternates)
// must not grow without bound.
func TestIdleIsBounded(t *testing.T) {
	idle := make([]byte, 8000)
	for i := range idle {
		idle[i] = 0xFF // low code 63, high 3: the smallest levels
		if i%2 == 1 {
			idle[i] = 0x7E // low 62, high 1: their opposites
		}
	}
	y := NewDecoder().Decode(nil, idle)
	for i, v := range y[1000:] {
		if v > 2000 || v < -2000 {
			t.Fatalf("idle codes decode to %d at sample %d", v, i+1000)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xFF, 0x7E, 0x00, 0x3F})
	f.Add(encode(tone(1000, 30000, 400)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := len(NewDecoder().Decode(nil, b)); n != 2*len(b) {
			t.Fatalf("%d samples from %d bytes", n, len(b))
		}
	})
}
