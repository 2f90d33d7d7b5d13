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
// to until (or the last match). The width is the first of widths (in
// increasing order) whose buckets number at most maxBuckets, and is
// returned; when none fits, the error names the last.
func Timeline(ds []*Dialog, match func(*Dialog) bool, widths []time.Duration, since, until time.Time, maxBuckets int) ([]TimeBucket, time.Duration, error) {
	// One pass over the dialogs notes what the buckets count, in the
	// order the buckets are filled after: at 100,000 dialogs reading each
	// twice, its attempts worked out twice, was most of the call.
	sel := newMarkSpan(since, until)
	sel.marks = make([]mark, 0, 2*len(ds)) // a dialog and, for most, one attempt
	var as []Attempt                       // each dialog's attempts in turn, in one array
	for i, d := range ds {
		if i%warmBlock == 0 {
			warmAttempts(ds[i:min(i+warmBlock, len(ds))])
		}
		if !sel.holds(d.Created.UnixNano()) || match != nil && !match(d) {
			continue
		}
		n := len(sel.marks)
		sel.marks, as = appendMarks(sel.marks, d, as[:0])
		sel.widen(sel.marks[n:])
	}
	return sel.buckets(widths, maxBuckets)
}

// checkWidths holds a timeline's widths to positive, increasing ones.
func checkWidths(widths []time.Duration) error {
	if len(widths) == 0 {
		return fmt.Errorf("no bucket width")
	}
	for i, w := range widths {
		if w <= 0 {
			return fmt.Errorf("bucket width %v: want a positive duration", w)
		}
		if i > 0 && w <= widths[i-1] {
			return fmt.Errorf("bucket widths %v: want them in increasing order", widths)
		}
	}
	return nil
}

// appendMarks appends d's marks to marks: its creation, then each call
// attempt's start and outcome (as is scratch for its attempts).
func appendMarks(marks []mark, d *Dialog, as []Attempt) ([]mark, []Attempt) {
	as = d.AppendAttempts(as)
	if len(as) == 0 {
		return append(marks, mark{d.Created.UnixNano(), markDialog | b2m(d.FinalCode >= 400, markFailed)}), as
	}
	marks = append(marks, mark{d.Created.UnixNano(), markDialog})
	for _, a := range as {
		outcome := b2m(a.FinalCode >= 200 && a.FinalCode < 300, markAnswered)
		switch {
		case a.State == StateCancelled:
			outcome |= markCancelled
		case a.FinalCode >= 400:
			outcome |= markFailed
		}
		marks = append(marks, mark{a.Start.UnixNano(), markAttempt | outcome})
	}
	return marks, as
}

// markSpan is the marks of the dialogs a timeline counts and the range
// they span: from since (or the first creation) to until (or the latest
// creation or last attempt start).
type markSpan struct {
	since, until time.Time // the window asked; a zero bound is none
	marks        []mark
	lo, hi       int64
	loSet, hiSet bool // a bound given, or a dialog seen
}

func newMarkSpan(since, until time.Time) *markSpan {
	m := &markSpan{since: since, until: until, loSet: !since.IsZero(), hiSet: !until.IsZero()}
	if m.loSet {
		m.lo = since.UnixNano()
	}
	if m.hiSet {
		m.hi = until.UnixNano()
	}
	return m
}

// holds is whether a dialog created at ns is in the window.
func (m *markSpan) holds(ns int64) bool {
	return (m.since.IsZero() || ns >= m.lo) && (m.until.IsZero() || ns < m.hi)
}

// widen stretches the range to one dialog's marks (its creation first).
func (m *markSpan) widen(row []mark) {
	created := row[0].at
	if m.since.IsZero() && (!m.loSet || created < m.lo) {
		m.lo, m.loSet = created, true
	}
	if m.until.IsZero() {
		if !m.hiSet || created > m.hi {
			m.hi, m.hiSet = created, true
		}
		// The dialog's last attempt: attempts come in the order they began.
		if last := row[len(row)-1]; len(row) > 1 && last.at > m.hi {
			m.hi = last.at
		}
	}
}

// buckets counts the marks in buckets of the first of widths (positive,
// increasing: checked here, where every timeline ends) that makes at most
// maxBuckets over the range.
func (m *markSpan) buckets(widths []time.Duration, maxBuckets int) ([]TimeBucket, time.Duration, error) {
	if err := checkWidths(widths); err != nil {
		return nil, 0, err
	}
	if !m.loSet || !m.hiSet {
		return []TimeBucket{}, widths[0], nil
	}
	lo, hi := time.Unix(0, m.lo), time.Unix(0, m.hi)
	var first time.Time
	var width time.Duration
	n := 0
	for _, width = range widths {
		first = alignDown(lo, width)
		n = int(alignDown(hi, width).Sub(first)/width) + 1
		if !m.until.IsZero() && alignDown(m.until, width).Equal(m.until) {
			n-- // until is exclusive
		}
		if n <= maxBuckets {
			break
		}
	}
	if n > maxBuckets {
		return nil, 0, fmt.Errorf("%d buckets of %v: more than %d", n, width, maxBuckets)
	}
	out := make([]TimeBucket, max(n, 0))
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * width)
	}
	f0, w := first.UnixNano(), int64(width)
	end := f0 + int64(len(out))*w
	for _, mk := range m.marks {
		if mk.what&markAttempt != 0 && (mk.at < f0 || mk.at >= end) {
			continue // an attempt outside since–until
		}
		b := &out[(mk.at-f0)/w]
		if mk.what&markDialog != 0 {
			b.Dialogs++
		} else {
			b.Invites++
		}
		b.Answered += int(mk.what & markAnswered / markAnswered)
		b.Failed += int(mk.what & markFailed / markFailed)
		b.Cancelled += int(mk.what & markCancelled / markCancelled)
	}
	return out, width, nil
}

// warmAttempts reads, for a block of dialogs, what AppendAttempts reads
// of each (the dialog, then each transaction's first and last fields), in
// loads independent of one dialog to the next, so their cache misses
// overlap; read in turn, each dialog and its transactions are a miss
// after a miss, most of timeline's time at 100,000 dialogs.
func warmAttempts(ds []*Dialog) {
	var s uint64
	for _, d := range ds {
		if !d.HasInvite {
			continue
		}
		for i := range d.Txns {
			tx := &d.Txns[i]
			// A transaction spans four cache lines: one load in each.
			s += uint64(len(tx.Method)) + uint64(tx.Start.Nanosecond()) + uint64(tx.RingAt.Nanosecond()) + uint64(tx.FinalCode)
		}
	}
	warmSink.Add(s)
}

// mark is what Timeline counts at a time: a dialog's creation (failed:
// one without an INVITE and with a final code of 400 or more) or a call
// attempt's start and outcome.
type mark struct {
	at   int64 // Unix ns, as alignDown reads times
	what uint8
}

const (
	markDialog uint8 = 1 << iota
	markAttempt
	markAnswered
	markFailed
	markCancelled
)

// b2m is m when b holds, else 0.
func b2m(b bool, m uint8) uint8 {
	if b {
		return m
	}
	return 0
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
