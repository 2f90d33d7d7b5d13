package config

import (
	"fmt"
	"time"

	"fieldtap/services/rtp"
)

// Bounds of media.interval. Under a second an interval holds a few dozen
// packets, too few for its loss percentage to mean anything; past ten
// minutes the per-interval figures hide what they exist to show (a short
// burst), and the stream keeps rtp.DefaultMaxIntervals of them.
const (
	MinMediaInterval = time.Second
	MaxMediaInterval = 10 * time.Minute
)

// DefaultMediaInterval is the per-interval figures' length (issue #4).
var DefaultMediaInterval = rtp.DefaultInterval.String()

// Media configures RTP analysis (docs/media.md).
type Media struct {
	// HeuristicRTP also tracks RTP no SDP signalled. Off by default: on a
	// busy port it also catches anything whose first byte looks like RTP.
	HeuristicRTP bool `toml:"heuristic_rtp"`
	// Interval is the length of the per-interval figures, as a Go
	// duration ("5s", "1m").
	Interval string `toml:"interval"`
}

// IntervalDuration parses Interval and checks its bounds.
func (m Media) IntervalDuration() (time.Duration, error) {
	d, err := time.ParseDuration(m.Interval)
	if err != nil {
		return 0, fmt.Errorf("media.interval %q: want a duration such as 5s", m.Interval)
	}
	if d < MinMediaInterval || d > MaxMediaInterval {
		return 0, fmt.Errorf("media.interval %q: want %v to %v", m.Interval, MinMediaInterval, MaxMediaInterval)
	}
	return d, nil
}

func (m Media) validate() []error {
	if _, err := m.IntervalDuration(); err != nil {
		return []error{err}
	}
	return nil
}
