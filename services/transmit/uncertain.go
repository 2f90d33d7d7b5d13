package transmit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// A writer error may say the frame may be on the bus although the
// writer could not confirm it: an slcan adapter that did not acknowledge
// it in time, a J1708 echo that stopped short. Such an error has
// MayHaveSent; one that can still learn the frame's fate (the slcan
// driver keeps listening for the adapter's reply, writing nothing else)
// has LateReply too. Declared here, met by the drivers' error types.
type (
	mayHaveSent interface{ MayHaveSent() bool }
	lateReplier interface {
		// LateReply waits, bounded by the driver, for the answer that
		// came after the writer gave up: acked, or a refusal at a
		// non-zero at, or nothing (zero at).
		LateReply(ctx context.Context) (acked bool, at time.Time)
	}
)

// Late replies, as Uncertain.LateReply spells them.
const (
	LateAck     = "ack"     // the adapter took the frame after all: it most likely went out
	LateRefused = "refused" // the adapter refused it (BELL): it did not go out
	LateNone    = "none"    // no answer came while the box listened
)

// Uncertain is the frame a run stopped at because the writer could not
// say whether it went out: frames before it were sent, frames after it
// were not, and it may have gone out.
type Uncertain struct {
	Frame  int    // 1-based, in the plan
	Reason string // the writer's words
	// LateReply is LateAck, LateRefused or LateNone; "" when the writer
	// cannot tell (a J1708 echo).
	LateReply string
	// LateAfter is when the late reply came, after the frame was handed
	// to the writer; 0 for none.
	LateAfter time.Duration
}

// uncertainOf is the Uncertain of frame (1-based) when err says it may
// have gone out, after waiting for its late reply; nil otherwise.
// handed is when the frame was handed to the writer.
func uncertainOf(ctx context.Context, err error, frame int, handed time.Time) *Uncertain {
	var m mayHaveSent
	if !errors.As(err, &m) || !m.MayHaveSent() {
		return nil
	}
	u := &Uncertain{Frame: frame, Reason: err.Error()}
	var l lateReplier
	if !errors.As(err, &l) {
		return u
	}
	acked, at := l.LateReply(ctx)
	switch {
	case acked:
		u.LateReply = LateAck
	case !at.IsZero():
		u.LateReply = LateRefused
	default:
		u.LateReply = LateNone
	}
	if !at.IsZero() {
		u.LateAfter = at.Sub(handed)
	}
	return u
}

// LateMs is LateAfter in milliseconds to the microsecond, or nil.
func (u *Uncertain) LateMs() *float64 {
	if u.LateAfter <= 0 {
		return nil
	}
	ms := math.Round(float64(u.LateAfter)/float64(time.Microsecond)) / 1000
	return &ms
}

// Text says it for a person: what went out, what may have, what did not,
// and what to do before sending again.
func (u *Uncertain) Text(sent, total int) string {
	t := fmt.Sprintf("frame %d of %d may have gone out: %s", u.Frame, total, u.Reason)
	switch u.LateReply {
	case LateAck:
		t += fmt.Sprintf("; the adapter acknowledged it %v after it was handed over, so it most likely went out", u.LateAfter.Round(time.Millisecond))
	case LateRefused:
		t += fmt.Sprintf("; the adapter refused it (BELL) %v after it was handed over, so it did not go out", u.LateAfter.Round(time.Millisecond))
	case LateNone:
		t += "; no later answer came while the box listened"
	}
	if sent > 0 {
		t += fmt.Sprintf("; the %d frame(s) before it were sent", sent)
	}
	if after := total - u.Frame; after > 0 {
		t += fmt.Sprintf("; the plan stopped there: the %d frame(s) after it were not sent", after)
	}
	return t + ". Check its effect on the bus before sending again."
}
