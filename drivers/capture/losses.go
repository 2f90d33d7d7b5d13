package capture

import "time"

// maxLosses bounds one port's loss log: a second of losses per cause is
// one entry, so this covers minutes of continuous loss and hours of
// bursts; older entries are folded into one, whose time is the newest it
// holds, so a window that reaches back that far is still told of them.
const maxLosses = 256

// Loss is n frames lost for one cause in the second that starts At, by
// the port's capture clock (the time of the last frame it delivered: a
// live port's clock is the wall clock, a file's is the file's).
type Loss struct {
	At    time.Time
	Cause string
	N     uint64
}

// lossLog is a port's losses over time, for answers that cover a window.
type lossLog struct {
	entries []Loss
	// kernel is the last cumulative value SetDrop saw per cause, so its
	// increase is logged as a loss when it happens.
	kernel map[string]uint64
}

// add logs n losses for cause at t (truncated to the second), merging
// with the newest entry of the same second and cause.
func (l *lossLog) add(t time.Time, cause string, n uint64) {
	if n == 0 {
		return
	}
	t = t.Truncate(time.Second)
	for i := len(l.entries) - 1; i >= 0 && l.entries[i].At.Equal(t); i-- {
		if l.entries[i].Cause == cause {
			l.entries[i].N += n
			return
		}
	}
	if len(l.entries) == maxLosses {
		// Fold the two oldest: the older one's losses are kept, at the
		// later time, so no window is told of fewer than it lost.
		l.entries[1].N += l.entries[0].N
		if l.entries[1].Cause != l.entries[0].Cause {
			l.entries[1].Cause = "mixed"
		}
		l.entries = append(l.entries[:0], l.entries[1:]...)
	}
	l.entries = append(l.entries, Loss{At: t, Cause: cause, N: n})
}
