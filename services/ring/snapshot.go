package ring

import (
	"math"
	"time"
)

// Snapshot is an immutable view of a ring at one revision. It is cheap to
// copy and safe to read from any goroutine while the ring keeps changing.
type Snapshot[T any] struct {
	chunks  []*chunk[T]
	first   uint64
	end     uint64
	rev     uint64
	timesTo uint64 // items before it have their time kept (KeepTimes)
}

// Len is the number of items in the view.
func (s Snapshot[T]) Len() int { return int(s.end - s.first) }

// Revision is the ring's revision when the view was taken.
func (s Snapshot[T]) Revision() uint64 { return s.rev }

// FirstSeq is the sequence number of the oldest item in the view; EndSeq is
// one past the newest. FirstSeq == EndSeq for an empty view.
func (s Snapshot[T]) FirstSeq() uint64 { return s.first }

// EndSeq is one past the newest sequence number in the view.
func (s Snapshot[T]) EndSeq() uint64 { return s.end }

// Get returns the item with sequence number seq and whether the view holds it.
func (s Snapshot[T]) Get(seq uint64) (T, bool) {
	if seq < s.first || seq >= s.end {
		var zero T
		return zero, false
	}
	return s.at(seq), true
}

func (s Snapshot[T]) at(seq uint64) T { return *s.ptr(seq) }

func (s Snapshot[T]) ptr(seq uint64) *T {
	base := s.first / chunkSize
	return &s.chunks[seq/chunkSize-base].items[seq%chunkSize]
}

// Ptr returns the item with sequence number seq in place, without copying
// it, or nil when the view does not hold it. An item is written once, by
// Append, before any view can see it: the pointer stays valid and its
// value never changes, but it must not be written through.
func (s Snapshot[T]) Ptr(seq uint64) *T {
	if seq < s.first || seq >= s.end {
		return nil
	}
	return s.ptr(seq)
}

// RangePtr is Range handing each item in place, as Ptr does.
func (s Snapshot[T]) RangePtr(from uint64, fn func(seq uint64, v *T) bool) {
	from = max(from, s.first)
	for seq := from; seq < s.end; seq++ {
		if !fn(seq, s.ptr(seq)) {
			return
		}
	}
}

// RangePtrBetween is RangePtr over the items whose time (TimeOf) is in
// since to until (until excluded; a zero bound is none), told from the
// time kept beside each (KeepTimes) without reading the item: a window of
// a large ring reads its own items only. Items may be handed over whose
// time is outside (an item whose time was not kept: a ring without
// KeepTimes, or items from a time outside UnixNano's range on; a bound
// outside that range), so fn tests each by its own time.
func (s Snapshot[T]) RangePtrBetween(from uint64, since, until time.Time, fn func(seq uint64, v *T) bool) {
	// The bounds as kept times compare: noTime (the zero time) is below
	// every bound but none.
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch {
	case since.IsZero() || since.Before(nanoFloor):
	case since.After(nanoCeil):
		lo = math.MaxInt64
	default:
		lo = since.UnixNano()
	}
	bounded := !until.IsZero() && !until.After(nanoCeil)
	switch {
	case !bounded:
	case until.Before(nanoFloor):
		hi = noTime + 1 // the zero time alone is before it
	default:
		hi = until.UnixNano()
	}
	from = max(from, s.first)
	base := s.first / chunkSize
	for seq := from; seq < s.end; seq++ {
		if seq < s.timesTo {
			if ns := s.chunks[seq/chunkSize-base].times[seq%chunkSize]; ns < lo || bounded && ns >= hi {
				continue
			}
		}
		if !fn(seq, s.ptr(seq)) {
			return
		}
	}
}

// Range calls fn for each item with sequence number ≥ from, oldest first,
// until fn returns false.
func (s Snapshot[T]) Range(from uint64, fn func(seq uint64, v T) bool) {
	from = max(from, s.first)
	for seq := from; seq < s.end; seq++ {
		if !fn(seq, s.at(seq)) {
			return
		}
	}
}

// RangeReverse calls fn for each item with sequence number < before, newest
// first, until fn returns false.
func (s Snapshot[T]) RangeReverse(before uint64, fn func(seq uint64, v T) bool) {
	before = min(before, s.end)
	for seq := before; seq > s.first; seq-- {
		if !fn(seq-1, s.at(seq-1)) {
			return
		}
	}
}
