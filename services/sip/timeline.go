package sip

import (
	"fmt"
	"time"
)

// TimeBucket counts the dialogs created in [Start, Start+width).
type TimeBucket struct {
	Start     time.Time
	Dialogs   int
	Invites   int // call attempts started in the bucket (Dialog.Attempts)
	Answered  int // of those, answered with a 2xx
	Failed    int // of those, failed with final_code >= 400, cancelled ones apart; a dialog without an INVITE counts in its creation bucket
	Cancelled int // of those, cancelled by the caller (CANCEL, then 487)
}

// Timeline buckets the dialogs match accepts by creation time, and their
// call attempts by their start (an attempt outside since–until is left
// out; without until the range reaches the last attempt). Buckets are
// aligned to the Unix epoch (a multiple of width since 1970-01-01T00:00Z),
// empty ones are kept, and the range runs from since (or the first match)
// to until (or the last match). More than maxBuckets is an error.
func Timeline(ds []*Dialog, match func(*Dialog) bool, width time.Duration, since, until time.Time, maxBuckets int) ([]TimeBucket, error) {
	if width <= 0 {
		return nil, fmt.Errorf("bucket width %v: want a positive duration", width)
	}
	var hit []*Dialog
	lo, hi := since, until
	for _, d := range ds {
		if (!since.IsZero() && d.Created.Before(since)) || (!until.IsZero() && !d.Created.Before(until)) || !match(d) {
			continue
		}
		hit = append(hit, d)
		if since.IsZero() && (lo.IsZero() || d.Created.Before(lo)) {
			lo = d.Created
		}
		if until.IsZero() && d.Created.After(hi) {
			hi = d.Created
		}
		if as := d.Attempts(); until.IsZero() && len(as) > 0 && as[len(as)-1].Start.After(hi) {
			hi = as[len(as)-1].Start
		}
	}
	if lo.IsZero() || hi.IsZero() {
		return []TimeBucket{}, nil
	}
	first := alignDown(lo, width)
	n := int(alignDown(hi, width).Sub(first)/width) + 1
	if !until.IsZero() && alignDown(until, width).Equal(until) {
		n-- // until is exclusive
	}
	if n > maxBuckets {
		return nil, fmt.Errorf("%d buckets of %v: more than %d", n, width, maxBuckets)
	}
	out := make([]TimeBucket, max(n, 0))
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * width)
	}
	last := first.Add(time.Duration(len(out)) * width)
	for _, d := range hit {
		out[int(d.Created.Sub(first)/width)].Dialogs++
		as := d.Attempts()
		if len(as) == 0 {
			if d.FinalCode >= 400 {
				out[int(d.Created.Sub(first)/width)].Failed++
			}
			continue
		}
		for _, a := range as {
			if a.Start.Before(first) || !a.Start.Before(last) {
				continue
			}
			b := &out[int(a.Start.Sub(first)/width)]
			b.Invites++
			if a.FinalCode >= 200 && a.FinalCode < 300 {
				b.Answered++
			}
			switch {
			case a.State == StateCancelled:
				b.Cancelled++
			case a.FinalCode >= 400:
				b.Failed++
			}
		}
	}
	return out, nil
}

// alignDown returns the start of t's bucket: floor division of the time
// since the epoch, so buckets before 1970 align too.
func alignDown(t time.Time, w time.Duration) time.Time {
	ns := t.UnixNano()
	q := ns / int64(w)
	if ns%int64(w) < 0 {
		q--
	}
	return time.Unix(0, q*int64(w)).UTC()
}
