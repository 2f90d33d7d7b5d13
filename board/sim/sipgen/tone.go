package sipgen

// sine16 is one period of a sine in 16 steps, scaled to sineScale. A table
// rather than math.Sin keeps the audio identical on every GOARCH.
var sine16 = [16]int32{
	0, 6270, 11585, 15137, 16384, 15137, 11585, 6270,
	0, -6270, -11585, -15137, -16384, -15137, -11585, -6270,
}

const (
	sineScale = 16384
	// toneStepMax picks 500 Hz (step 1) or 1 kHz (step 2): periods that
	// divide one 160-sample frame, so a single frame repeats seamlessly.
	toneStepMax = 2
	// Tone amplitudes in 16-bit linear PCM, about -24 to -12 dBFS: speech level.
	toneAmpMin = 2000
	toneAmpMax = 8000

	ulawBias = 0x84  // G.711 μ-law bias
	ulawClip = 32635 // largest magnitude before the bias would overflow
)

// toneFrame is one 20 ms PCMU frame of a sine with the given step and
// amplitude.
func toneFrame(step int, amp int32) []byte {
	f := make([]byte, samples)
	for i := range f {
		f[i] = ulaw(sine16[(i*step)%len(sine16)] * amp / sineScale)
	}
	return f
}

// ulaw encodes one linear sample as G.711 μ-law.
func ulaw(x int32) byte {
	var sign byte
	if x < 0 {
		x, sign = -x, 0x80
	}
	x = min(x, ulawClip) + ulawBias
	exp := byte(7)
	for mask := int32(0x4000); x&mask == 0 && exp > 0; mask >>= 1 {
		exp--
	}
	mant := byte(x>>(exp+3)) & 0x0f
	return ^(sign | exp<<4 | mant)
}
