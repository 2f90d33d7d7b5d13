package recorder

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// Pin bounds: pins protect segments from the quota, so they are few and
// may hold at most half of it; the rest of the ring keeps turning.
const (
	MaxPins           = 64
	maxPinnedFraction = 2 // pinned bytes ≤ quota / maxPinnedFraction
	maxPinsBytes      = 1 << 20
	// MaxPinSpan bounds one pin's time range.
	MaxPinSpan = 24 * time.Hour
	// maxPinReason bounds the box's note on a pin.
	maxPinReason = 256
)

// Pin keeps every segment holding frames in [From, To] out of the
// quota's reach until it is removed.
type Pin struct {
	ID      string    `json:"id"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Reason  string    `json:"reason"` // the box's note: "evidence ev-…", "operator"
	Created time.Time `json:"created"`
}

// ErrPinRefused is wrapped by Pin when a bound would be passed.
var ErrPinRefused = errors.New("recorder: pin refused")

type pinFile struct {
	Pins []Pin `json:"pins"`
}

func (p Pin) covers(x *Index) bool { return x.overlaps(p.From, p.To.Add(time.Nanosecond)) }

func newPinID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return "pin-" + hex.EncodeToString(b[:])
}

// Pin protects the segments holding frames in [from, to] (those written
// later too) from deletion by the quota. It is refused past MaxPins, for
// a span over MaxPinSpan, or when the segments it would protect now hold
// more than half the quota.
func (r *Recorder) Pin(from, to time.Time, reason string) (Pin, error) {
	if !to.After(from) || to.Sub(from) > MaxPinSpan {
		return Pin{}, fmt.Errorf("%w: span %v to %v: want a positive span of at most %v", ErrPinRefused, from, to, MaxPinSpan)
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if len(r.pins.Pins) >= MaxPins {
		return Pin{}, fmt.Errorf("%w: %d pins already (at most %d): remove one first", ErrPinRefused, len(r.pins.Pins), MaxPins)
	}
	p := Pin{ID: newPinID(), From: from.UTC(), To: to.UTC(), Reason: reason[:min(len(reason), maxPinReason)], Created: r.opt.Now().UTC()}
	pinned := r.pinnedBytesWith(p)
	if limit := r.opt.QuotaBytes / maxPinnedFraction; pinned > limit {
		return Pin{}, fmt.Errorf("%w: pinned segments would hold %d bytes, over half the quota (%d)", ErrPinRefused, pinned, limit)
	}
	r.pins.Pins = append(r.pins.Pins, p)
	if err := writeJSON(filepath.Join(r.opt.Dir, pinsFile), r.pins); err != nil {
		r.pins.Pins = r.pins.Pins[:len(r.pins.Pins)-1]
		return Pin{}, fmt.Errorf("recorder: save pins: %w", err)
	}
	return p, nil
}

// Unpin removes the pin with id; the quota may then delete its segments.
func (r *Recorder) Unpin(id string) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	i := slices.IndexFunc(r.pins.Pins, func(p Pin) bool { return p.ID == id })
	if i < 0 {
		return fmt.Errorf("recorder: no pin %q", id)
	}
	old := slices.Clone(r.pins.Pins)
	r.pins.Pins = slices.Delete(r.pins.Pins, i, i+1)
	if err := writeJSON(filepath.Join(r.opt.Dir, pinsFile), r.pins); err != nil {
		r.pins.Pins = old
		return fmt.Errorf("recorder: save pins: %w", err)
	}
	return nil
}

// Pins returns the current pins, oldest first.
func (r *Recorder) Pins() []Pin {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return slices.Clone(r.pins.Pins)
}

// pinned reports whether any pin covers x; the caller holds wmu.
func (r *Recorder) pinned(x *Index) bool {
	return slices.ContainsFunc(r.pins.Pins, func(p Pin) bool { return p.covers(x) })
}

// pinnedBytesWith is the bytes of closed segments covered by the current
// pins and extra; the caller holds wmu.
func (r *Recorder) pinnedBytesWith(extra Pin) int64 {
	var n int64
	for _, s := range r.closed {
		if r.pinned(s) || extra.covers(s) {
			n += s.Bytes
		}
	}
	return n
}
