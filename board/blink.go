package board

import (
	"context"
	"fmt"
	"time"
)

// The confirm code on the status LED: each number of the code is a group
// of that many short blinks, groups are apart by a longer dark, and the
// code repeats after a longer dark still. A person counts it at a glance;
// hwtest reads it back from the emulated board's GPIO register.
const (
	BlinkOn   = 250 * time.Millisecond  // lit per blink
	BlinkOff  = 250 * time.Millisecond  // dark between blinks of a group
	GroupGap  = 1000 * time.Millisecond // dark between groups
	RepeatGap = 2000 * time.Millisecond // dark before the code repeats
	// maxBlinks bounds one group, so a code is always readable.
	maxBlinks = 9
)

// Step is one stretch of the pattern: the LED lit or dark for a while.
type Step struct {
	On  bool
	For time.Duration
}

// BlinkSteps is one cycle of the pattern for code, ending with the
// RepeatGap. Every number must be 1 to maxBlinks.
func BlinkSteps(code []int) ([]Step, error) {
	if len(code) == 0 {
		return nil, fmt.Errorf("blink code is empty")
	}
	var steps []Step
	for i, n := range code {
		if n < 1 || n > maxBlinks {
			return nil, fmt.Errorf("blink code %v: %d is outside 1..%d", code, n, maxBlinks)
		}
		for j := range n {
			steps = append(steps, Step{On: true, For: BlinkOn})
			gap := BlinkOff
			switch {
			case j < n-1:
			case i < len(code)-1:
				gap = GroupGap
			default:
				gap = RepeatGap
			}
			steps = append(steps, Step{On: false, For: gap})
		}
	}
	return steps, nil
}

// Show plays steps on l over and over until ctx ends, then sets l back to
// on (on is the LED's resting state). A nil LED shows nothing and waits.
func (l *LED) Show(ctx context.Context, steps []Step, on bool) {
	defer l.Set(on)
	if len(steps) == 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		for _, s := range steps {
			_ = l.Set(s.On)
			t.Reset(s.For)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}
