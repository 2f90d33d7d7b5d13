package sipgen

import (
	"fmt"
	"time"
)

// Options select what Generate produces. The zero Seed is a valid seed.
type Options struct {
	Seed     int64
	Start    time.Time     // timestamp of the first packet
	Duration time.Duration // traffic spans [Start, Start+Duration); must be positive
	Calls    int           // number of calls started within Duration (0 => DefaultCallsPerMinute)
	// Impair degrades every RTP stream, drawn from the seed; the zero
	// value leaves the output byte-identical to an unimpaired run.
	Impair Impairment
	// SignallingOnly leaves the RTP out: the SIP of many calls in a small
	// file (the memory benchmarks' dialog-heavy captures). The SDP still
	// offers media, and every SIP packet is what the full run would send.
	SignallingOnly bool
}

// Impairment is network damage applied to RTP at send time.
type Impairment struct {
	LossPct  float64 // each packet is dropped with this probability (percent)
	JitterMs float64 // each packet is delayed by a uniform 0..JitterMs extra
}

func (i Impairment) enabled() bool { return i.LossPct > 0 || i.JitterMs > 0 }

// Packet is one Ethernet frame (LINKTYPE_ETHERNET) with its capture time.
// Data is owned by the receiver.
type Packet struct {
	Time time.Time
	Data []byte
}

const (
	// DefaultCallsPerMinute sets the call count when Options.Calls is 0: a
	// small office in its busy hour, 1 to 2 MB of pcapng a minute.
	DefaultCallsPerMinute = 6

	// MinCallSlot is the least share of Duration each call may get: one
	// second after its start plus a full setup, a short talk and teardown.
	MinCallSlot = 2 * time.Second
)

// calls is the number of calls o asks for, the default applied.
func (o Options) calls() int {
	if o.Calls > 0 {
		return o.Calls
	}
	return max(int(o.Duration*DefaultCallsPerMinute/time.Minute), 1)
}

// check reports options Generate cannot honour.
func (o Options) check() error {
	if o.Duration <= 0 {
		return fmt.Errorf("sipgen: duration %v must be positive", o.Duration)
	}
	if o.Impair.LossPct < 0 || o.Impair.LossPct >= 100 || o.Impair.JitterMs < 0 {
		return fmt.Errorf("sipgen: impairment %+v: loss must be in [0,100), jitter not negative", o.Impair)
	}
	if o.Calls < 0 {
		return fmt.Errorf("sipgen: calls %d must not be negative", o.Calls)
	}
	if slot := o.Duration / time.Duration(o.calls()); slot < MinCallSlot {
		return fmt.Errorf("sipgen: %d calls in %v leave %v each, need at least %v",
			o.calls(), o.Duration, slot, MinCallSlot)
	}
	return nil
}
