package hwtest

import (
	"slices"
	"testing"
	"time"

	fb "fieldtap/board"
)

// ledRun is the status LED lit or dark for a stretch, as the host sampled it.
type ledRun struct {
	on bool
	d  time.Duration
}

// Thresholds halfway between the pattern's darks (fb.BlinkSteps), so a
// stretched or shortened dark under TCG still reads as what it was.
const (
	groupDark  = (fb.BlinkOff + fb.GroupGap) / 2
	repeatDark = (fb.GroupGap + fb.RepeatGap) / 2
)

// decodeBlinks reads one whole code from sampled runs: after a dark of at
// least repeatDark, groups of lit runs apart by darks of at least
// groupDark, until the next repeat dark (the last run may be one still
// going on). ok is false until a whole code has been seen.
func decodeBlinks(runs []ledRun) (code []int, ok bool) {
	start := -1
	for i, r := range runs {
		if !r.on && r.d >= repeatDark {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	n := 0
	for _, r := range runs[start:] {
		switch {
		case r.on:
			n++
		case r.d >= repeatDark:
			if n > 0 {
				code = append(code, n)
			}
			return code, len(code) > 0
		case r.d >= groupDark:
			code = append(code, n)
			n = 0
		}
	}
	return nil, false
}

// runsOf turns pattern steps into the runs a sampler would see, merging
// neighbours of one level.
func runsOf(steps []fb.Step, stretch float64) []ledRun {
	var runs []ledRun
	for _, s := range steps {
		d := time.Duration(float64(s.For) * stretch)
		if n := len(runs); n > 0 && runs[n-1].on == s.On {
			runs[n-1].d += d
			continue
		}
		runs = append(runs, ledRun{on: s.On, d: d})
	}
	return runs
}

// TestDecodeBlinks checks the host's reader against board's writer: two
// cycles joined mid-way, at the pattern's pace and stretched by a slow
// emulator, read back as the code.
func TestDecodeBlinks(t *testing.T) {
	for _, code := range [][]int{{2, 4, 1}, {1, 1, 1}, {4, 4, 4}, {3}} {
		steps, err := fb.BlinkSteps(code)
		if err != nil {
			t.Fatal(err)
		}
		for _, stretch := range []float64{1, 1.3, 0.8} {
			cycle := runsOf(steps, stretch)
			// The sampler starts mid-cycle: drop the first two runs.
			runs := append(slices.Clone(cycle[2:]), cycle...)
			got, ok := decodeBlinks(runs)
			if !ok || !slices.Equal(got, code) {
				t.Errorf("code %v stretched %.1f: read %v, %v", code, stretch, got, ok)
			}
			if _, ok := decodeBlinks(runs[:len(runs)-1]); ok && len(cycle) > 2 {
				t.Errorf("code %v: a cycle cut before its repeat dark read as whole", code)
			}
		}
	}
}
