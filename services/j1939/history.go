package j1939

import (
	"errors"
	"fmt"
	"math"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/ring"
)

// History bounds.
const (
	// MaxHistoryBuckets bounds the series one history returns per source:
	// enough for a plot, small enough for an answer.
	MaxHistoryBuckets = 500
	// BucketMethod names how a series is reduced: the window cut into
	// equal time buckets, each reporting the min, max and last valid value
	// and how many samples it held.
	BucketMethod = "equal_time_buckets_min_max_last"
)

// ErrUnknownSPN is returned for an SPN the catalogue does not define.
var ErrUnknownSPN = errors.New("j1939: SPN not in the catalogue")

// HistoryQuery selects one SPN's history.
type HistoryQuery struct {
	SPN uint32
	// SA limits it to one source; nil means every source that sent it.
	SA *uint8
	// Buckets is how many points each source's series gets, 0 for none,
	// at most MaxHistoryBuckets.
	Buckets int
	Window  Window
}

// Bucket is one point of a reduced series.
type Bucket struct {
	Start   time.Time
	Samples int      // valid values in the bucket
	Min     *float64 // nil when the bucket holds none
	Max     *float64
	Last    *float64
}

// SourceHistory is one source's statistics of the SPN over the window.
type SourceHistory struct {
	SA       int
	Messages int // messages that carried the PGN
	Valid    int
	// By status, for the messages whose value was not valid.
	NotAvailable int
	Error        int
	Reserved     int
	Missing      int // payload too short for the SPN
	// Min, Max, Mean and Last are over the valid values; nil (with the
	// counts above as the reason) when there is none.
	Min       *float64
	Max       *float64
	Mean      *float64
	Last      *float64
	FirstTime *time.Time
	LastTime  *time.Time
	Series    []Bucket
}

// History is one SPN over a window, per source.
type History struct {
	Param        Param
	Span         Span
	Sources      []SourceHistory
	BucketMethod string
	BucketWidth  *float64
}

// SPNHistory scans a window of a port's stored frames (transfers
// reassembled) and reports the SPN per source: counts by status,
// min/max/mean/last of the valid values, and a bucketed series. The
// catalogue decides where the SPN sits (nil: the built-in table).
func SPNHistory(port string, snap ring.Snapshot[canbus.Record], q HistoryQuery, cat *Catalogue) (History, error) {
	if cat == nil {
		cat = builtinCatalogue
	}
	p, ok := cat.Lookup(q.SPN)
	if !ok {
		return History{}, fmt.Errorf("%w: %d (%d known: see the catalogue)", ErrUnknownSPN, q.SPN, len(cat.params))
	}
	if q.Buckets < 0 || q.Buckets > MaxHistoryBuckets {
		return History{}, fmt.Errorf("j1939: buckets %d: want 0..%d", q.Buckets, MaxHistoryBuckets)
	}
	type acc struct {
		h                 SourceHistory
		sum, lo, hi, last float64
		first, lastT      time.Time
		values            []sample // kept only when a series is asked for
	}
	var by [256]*acc
	sc := scanner{onMessage: func(_ uint64, m *Message) {
		if m.ID.PGN != p.PGN || (q.SA != nil && m.ID.SA != *q.SA) {
			return
		}
		a := by[m.ID.SA]
		if a == nil {
			a = &acc{h: SourceHistory{SA: int(m.ID.SA)}}
			by[m.ID.SA] = a
		}
		a.h.Messages++
		v := p.Decode(m.Data)
		switch v.Status {
		case StatusOK:
		case StatusNotAvailable:
			a.h.NotAvailable++
			return
		case StatusError:
			a.h.Error++
			return
		case StatusReserved:
			a.h.Reserved++
			return
		default:
			a.h.Missing++
			return
		}
		x := v.Value
		if a.h.Valid == 0 {
			a.lo, a.hi, a.first = x, x, m.Time
		}
		a.h.Valid++
		a.lo, a.hi, a.last, a.lastT = math.Min(a.lo, x), math.Max(a.hi, x), x, m.Time
		a.sum += x
		if q.Buckets > 0 {
			a.values = append(a.values, sample{t: m.Time, v: x})
		}
	}}
	out := History{Param: p, Sources: []SourceHistory{}}
	out.Span = sc.run(port, snap, q.Window)
	var width time.Duration
	if q.Buckets > 0 && out.Span.Seconds != nil {
		width = max(out.Span.To.Sub(out.Span.From)/time.Duration(q.Buckets), time.Microsecond)
		secs := round6(width.Seconds())
		out.BucketMethod, out.BucketWidth = BucketMethod, &secs
	}
	for _, a := range by {
		if a == nil {
			continue
		}
		h := a.h
		if h.Valid > 0 {
			lo, hi, last, mean := a.lo, a.hi, a.last, a.sum/float64(h.Valid)
			first, lastT := a.first, a.lastT
			h.Min, h.Max, h.Last, h.Mean, h.FirstTime, h.LastTime = &lo, &hi, &last, &mean, &first, &lastT
			roundAll(h.Min, h.Max, h.Mean, h.Last)
		}
		if width > 0 {
			h.Series = buckets(a.values, out.Span.From, width, q.Buckets)
		}
		out.Sources = append(out.Sources, h)
	}
	return out, nil
}

type sample struct {
	t time.Time
	v float64
}

func buckets(vals []sample, from time.Time, width time.Duration, n int) []Bucket {
	out := make([]Bucket, n)
	for i := range out {
		out[i].Start = from.Add(time.Duration(i) * width)
	}
	for _, s := range vals {
		i := min(max(int(s.t.Sub(from)/width), 0), n-1)
		b := &out[i]
		v := dbc.RoundPhysical(s.v)
		if b.Samples == 0 {
			lo, hi := v, v
			b.Min, b.Max = &lo, &hi
		}
		b.Samples++
		*b.Min, *b.Max = math.Min(*b.Min, v), math.Max(*b.Max, v)
		last := v
		b.Last = &last
	}
	return out
}

func roundAll(ps ...*float64) {
	for _, p := range ps {
		if p != nil {
			*p = dbc.RoundPhysical(*p)
		}
	}
}

// round6 rounds to the microsecond a capture timestamp resolves.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// MaxSeriesPoints bounds SPNSeries: a port's ring holds 100 000 frames.
const MaxSeriesPoints = 100_000

// Point is one valid value of an SPN.
type Point struct {
	Time  time.Time
	SA    uint8
	Value float64
}

// SPNSeries returns the valid values of q.SPN in q.Window (q.SA limits
// the source), oldest first, at most MaxSeriesPoints; truncated says the
// bound cut it. Buckets is ignored.
func SPNSeries(snap ring.Snapshot[canbus.Record], q HistoryQuery, cat *Catalogue) (pts []Point, p Param, truncated bool, err error) {
	if cat == nil {
		cat = builtinCatalogue
	}
	p, ok := cat.Lookup(q.SPN)
	if !ok {
		return nil, p, false, fmt.Errorf("%w: %d", ErrUnknownSPN, q.SPN)
	}
	var sc scanner
	sc.onMessage = func(_ uint64, m *Message) {
		if m.ID.PGN != p.PGN || (q.SA != nil && m.ID.SA != *q.SA) {
			return
		}
		if v := p.Decode(m.Data); v.Status == StatusOK {
			if len(pts) == MaxSeriesPoints {
				truncated, sc.stop = true, true
				return
			}
			pts = append(pts, Point{Time: m.Time, SA: m.ID.SA, Value: v.Value})
		}
	}
	sc.run("", snap, q.Window)
	return pts, p, truncated, nil
}
