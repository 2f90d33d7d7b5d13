// Package g722 decodes ITU-T G.722 (7 kHz audio in 64 kbit/s) to 16 kHz
// 16-bit linear PCM: mode 1, the 64 kbit/s mode every RTP payload type 9
// stream uses (RFC 3551 §4.5.2), one byte per pair of output samples.
//
// The decoder follows the functional blocks of the G.722 decoder (the
// lower and higher sub-band ADPCM decoders, their adaptive predictors,
// blocks 4L/4H, and the receive QMF) in the spec's fixed-point
// arithmetic, so that a stream decodes the same on every box. Each
// block's name in the spec (INVQBL, LOGSCL, UPPOL2, …) is given beside
// the code that does it.
package g722

// The spec's tables (inverse quantizers, log-scale multipliers, the
// scale factor's mantissa, the QMF coefficients), at its integer scales.
var (
	// qm6 is the lower-band inverse quantizer's output per 6-bit code
	// (INVQBL, mode 1), indexed by the code itself.
	qm6 = [64]int32{
		-136, -136, -136, -136, -24808, -21904, -19008, -16704,
		-14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856,
		-7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576,
		-3168, -2776, -2400, -2032, -1688, -1360, -1040, -728,
		24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192,
		10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456,
		4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032,
		1688, 1360, 1040, 728, 432, 136, -432, -136,
	}
	// qm4 is the inverse quantizer of the code's four high bits, which
	// alone drive the lower band's adaptation (INVQAL), so an encoder
	// and a decoder at any bit rate adapt alike.
	qm4 = [16]int32{
		0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
		20456, 12896, 8968, 6288, 4240, 2584, 1200, 0,
	}
	// wl and rl42 are the lower band's log-scale factor multipliers
	// (LOGSCL), by the 4-bit code's magnitude class.
	wl   = [8]int32{-60, -30, 58, 172, 334, 538, 1198, 3042}
	rl42 = [16]int{0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0}
	// qm2, wh and rh2 are the higher band's (INVQAH, LOGSCH).
	qm2 = [4]int32{-7408, -1616, 7408, 1616}
	wh  = [3]int32{0, -214, 798}
	rh2 = [4]int{2, 1, 2, 1}
	// ilb is 2^(i/32) at 2^11: the mantissa of the linear scale factor
	// (SCALEL, SCALEH).
	ilb = [32]int32{
		2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383,
		2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834,
		2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371,
		3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
	}
	// qmf holds the receive QMF's even coefficients h0, h2 … h22 (units of
	// 2^-13); the odd ones are the same in reverse order (h(23-i) = h(i)).
	qmf = [12]int32{3, -11, 12, 32, -210, 951, 3876, -805, 362, -156, 53, -11}
)

// Scale-factor bounds, initial values and leak factors (LOGSCL, LOGSCH,
// UPPOL1, UPPOL2, UPZERO, LIMIT).
const (
	nblMax     = 18432
	nbhMax     = 22528
	detlInit   = 32
	dethInit   = 8
	leak       = 32512 // log-scale leakage, 127/128 at 2^15
	poleLimit2 = 12288 // |a2| bound (UPPOL2)
	poleSum    = 15360 // |a1| <= poleSum - a2 (UPPOL1)
	zeroLeak   = 32640 // 255/256 at 2^15 (UPZERO, UPPOL1)
	outMin     = -16384
	outMax     = 16383
)

// SamplesPerByte is how many 16 kHz samples one code byte gives.
const SamplesPerByte = 2

// band is one sub-band's ADPCM state: the adaptive predictor of
// blocks 4L/4H and the scale factor.
type band struct {
	s, sp, sz int32    // SL/SH: the prediction; SPL/SPH, SZL/SZH: its pole and zero parts
	r         [3]int32 // reconstructed signal RLT, delays 0..2
	p         [3]int32 // partially reconstructed PLT, delays 0..2
	a         [3]int32 // pole coefficients AL1, AL2 (index 1, 2)
	b         [7]int32 // zero coefficients BL1..BL6
	d         [7]int32 // quantized difference DLT, delays 0..6
	nb        int32    // log scale factor NBL/NBH
	det       int32    // linear scale factor DETL/DETH
}

// Decoder decodes one G.722 stream; the zero value is not ready, use
// NewDecoder (or Reset).
type Decoder struct {
	low, high band
	xd, xs    [12]int32 // the receive QMF's delay lines, newest first
}

// NewDecoder returns a decoder in the spec's reset state.
func NewDecoder() *Decoder {
	d := &Decoder{}
	d.Reset()
	return d
}

// Reset puts the decoder in the spec's initial state.
func (d *Decoder) Reset() {
	*d = Decoder{}
	d.low.det = detlInit
	d.high.det = dethInit
}

// Decode appends the 16 kHz samples of code bytes to dst, two per byte.
func (d *Decoder) Decode(dst []int16, src []byte) []int16 {
	for _, c := range src {
		rl := d.lower(int(c & 0x3F))
		rh := d.higher(int(c >> 6))
		x0, x1 := d.receiveQMF(rl, rh)
		dst = append(dst, x0, x1)
	}
	return dst
}

// lower is the lower sub-band decoder (mode 1: all six bits for the
// output, the four high ones for adaptation).
func (d *Decoder) lower(il int) int32 {
	b := &d.low
	// INVQAL: the 4-bit difference that drives adaptation.
	dlt := b.det * qm4[il>>2] >> 15
	// INVQBL: the 6-bit difference that the output gets.
	dl := b.det * qm6[il] >> 15
	// RECONS (output path) and LIMIT.
	rl := clamp(b.s+dl, outMin, outMax)
	// LOGSCL and SCALEL.
	b.nb = clamp(b.nb*leak>>15+wl[rl42[il>>2]], 0, nblMax)
	b.det = scale(b.nb, 8)
	b.adapt(dlt)
	return rl
}

// higher is the higher sub-band decoder.
func (d *Decoder) higher(ih int) int32 {
	b := &d.high
	// INVQAH.
	dh := b.det * qm2[ih] >> 15
	rh := clamp(b.s+dh, outMin, outMax)
	// LOGSCH and SCALEH.
	b.nb = clamp(b.nb*leak>>15+wh[rh2[ih]], 0, nbhMax)
	b.det = scale(b.nb, 10)
	b.adapt(dh)
	return rh
}

// scale is SCALEL/SCALEH: the linear scale factor of log scale factor
// nb, 2^(nb/2048) through ilb, shifted by the band's offset.
func scale(nb int32, offset int32) int32 {
	m := ilb[nb>>6&31]
	sh := offset - nb>>11
	if sh < 0 {
		m <<= -sh
	} else {
		m >>= sh
	}
	return m << 2
}

// adapt is block 4 (4L/4H) for one quantized difference dq: it updates
// the pole and zero coefficients from the signs of the partial
// reconstruction and of the difference, shifts the delay lines and forms
// the next prediction.
func (b *band) adapt(dq int32) {
	// RECONS and PARREC.
	r := sat(b.s + dq)
	p := sat(b.sz + dq)
	neg := func(v int32) bool { return v < 0 } // the sign bit: zero counts as positive

	// UPPOL2: the second pole, leaked, nudged by sign agreement.
	w := sat(b.a[1] * 4)
	if neg(p) == neg(b.p[1]) {
		w = -w
	}
	w >>= 7
	if neg(p) == neg(b.p[2]) {
		w += 128
	} else {
		w -= 128
	}
	a2 := clamp(w+b.a[2]*leak>>15, -poleLimit2, poleLimit2)

	// UPPOL1: the first pole, bounded by the second for stability.
	w = int32(-192)
	if neg(p) == neg(b.p[1]) {
		w = 192
	}
	a1 := sat(w + b.a[1]*zeroLeak>>15)
	lim := poleSum - a2
	a1 = clamp(a1, -lim, lim)

	// UPZERO: each zero moves towards sign agreement of dq with its delay.
	var bn [7]int32
	for i := 1; i <= 6; i++ {
		w = 0
		if dq != 0 {
			w = 128
			if neg(dq) != neg(b.d[i]) {
				w = -128
			}
		}
		bn[i] = sat(w + b.b[i]*zeroLeak>>15)
	}

	// DELAYA: shift every delay line by one sample.
	for i := 6; i > 1; i-- {
		b.d[i] = b.d[i-1]
	}
	b.d[1] = dq
	b.b = bn
	b.p[2], b.p[1] = b.p[1], p
	b.r[2], b.r[1] = b.r[1], r
	b.a[1], b.a[2] = a1, a2

	// FILTEP: the pole section's prediction.
	sp := b.a[1]*sat(b.r[1]*2)>>15 + b.a[2]*sat(b.r[2]*2)>>15
	b.sp = sat(sp)
	// FILTEZ: the zero section's.
	var sz int32
	for i := 6; i >= 1; i-- {
		sz += b.b[i] * sat(b.d[i]*2) >> 15
	}
	b.sz = sat(sz)
	// PREDIC.
	b.s = sat(b.sp + b.sz)
}

// receiveQMF is the spec's receive quadrature mirror filter: the two bands'
// sum and difference through the 24-tap filter give two output samples.
// The spec's output is 14-bit (2·Σ at 2^-13, a shift of 12); this scales
// it to 16 bits the way deployed VoIP decoders do (one bit of the two, a
// shift of 11), so a stream from an ordinary encoder plays at its level.
func (d *Decoder) receiveQMF(rl, rh int32) (int16, int16) {
	copy(d.xd[1:], d.xd[:11])
	copy(d.xs[1:], d.xs[:11])
	d.xd[0] = rl - rh
	d.xs[0] = rl + rh
	var even, odd int32
	for i := range 12 {
		even += qmf[i] * d.xd[i]   // h(2i)·xd(j-i)
		odd += qmf[11-i] * d.xs[i] // h(2i+1)·xs(j-i), h(2i+1) = h(22-2i)
	}
	return int16(sat(even >> 11)), int16(sat(odd >> 11))
}

func sat(v int32) int32 { return clamp(v, -32768, 32767) }

func clamp(v, lo, hi int32) int32 {
	return min(max(v, lo), hi)
}
