package audio

import "time"

// Mix puts left's tracks on the left channel and right's on the right of
// one interleaved stereo track at rate, each placed by its capture start
// relative to the earliest track's, at most maxFrames frames (a frame is
// one sample per channel). Tracks at another rate are resampled by
// linear interpolation; where two tracks of one side overlap their
// samples add, clipped. It returns the samples, the mix's start, and
// whether maxFrames cut it.
func Mix(left, right []*Track, rate, maxFrames int) (stereo []int16, start time.Time, cut bool) {
	for _, t := range append(append([]*Track{}, left...), right...) {
		if len(t.Samples) > 0 && (start.IsZero() || t.Start.Before(start)) {
			start = t.Start
		}
	}
	frames := 0
	for _, t := range append(append([]*Track{}, left...), right...) {
		if len(t.Samples) == 0 {
			continue
		}
		end := offsetFrames(t.Start.Sub(start), rate) + resampledLen(len(t.Samples), t.Rate, rate)
		frames = max(frames, end)
	}
	if frames > maxFrames {
		frames, cut = maxFrames, true
	}
	acc := make([]int32, 2*frames)
	for ch, side := range [2][]*Track{left, right} {
		for _, t := range side {
			if len(t.Samples) == 0 {
				continue
			}
			off := offsetFrames(t.Start.Sub(start), rate)
			n := resampledLen(len(t.Samples), t.Rate, rate)
			for i := 0; i < n && off+i < frames; i++ {
				acc[2*(off+i)+ch] += int32(sampleAt(t.Samples, t.Rate, rate, i))
			}
		}
	}
	stereo = make([]int16, len(acc))
	for i, v := range acc {
		stereo[i] = int16(min(max(v, -32768), 32767))
	}
	return stereo, start, cut
}

func offsetFrames(d time.Duration, rate int) int {
	return int(d * time.Duration(rate) / time.Second)
}

func resampledLen(n, from, to int) int { return n * to / from }

// sampleAt is output sample i of s (at rate from) at rate to, by linear
// interpolation between the two nearest input samples.
func sampleAt(s []int16, from, to, i int) int16 {
	if from == to {
		return s[i]
	}
	num := i * from // position in input samples is num/to
	j, frac := num/to, num%to
	if j+1 >= len(s) {
		return s[min(j, len(s)-1)]
	}
	return int16((int(s[j])*(to-frac) + int(s[j+1])*frac) / to)
}
