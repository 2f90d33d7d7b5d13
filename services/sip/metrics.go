package sip

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// Metric is one figure with its basis: the population it was computed
// over and, when there is no basis, a null value and the reason.
type Metric struct {
	Value      *float64
	Unit       string
	Population int
	NullReason string
}

// CallMetrics are the call figures of a group of dialogs (docs/sip.md).
type CallMetrics struct {
	Dialogs  int    // every dialog in the group
	Attempts int    // call attempts (Dialog.Attempts) with a final response
	Answered int    // attempts answered with a 2xx
	ASR      Metric // answered / attempts
	NER      Metric // (answered + user-side endings) / attempts
	ACD      Metric // mean 2xx → BYE of answered calls with a BYE
	PDDp50   Metric // nearest-rank median of INVITE → first 180/183
	PDDp95   Metric
}

// nerCodes are the final responses that end an attempt at the user rather
// than in the network (ITU-T E.425 "user busy, ring no answer, terminal
// reject", as GSMA IR.42 maps them to SIP): busy, unavailable (no
// answer), cancelled by the caller while ringing, declined.
var nerCodes = []int{480, 486, 487, 600, 603}

// MetricsAcc accumulates CallMetrics one dialog at a time.
type MetricsAcc struct {
	dialogs, attempts, answered, network int
	durSum                               time.Duration
	durN                                 int
	pdd                                  []float64 // ms
	sorted                               bool      // pdd is sorted, and only read
}

// Add counts d and each of its call attempts: its share memoised on d
// (memoFigures), or folded afresh when the share does not fit the memo.
func (a *MetricsAcc) Add(d *Dialog) {
	f, ok := d.memoFigures()
	a.dialogs++
	if ok {
		a.add(&f)
		if f.hasPDD {
			a.pdd = append(a.pdd, f.pdd)
		}
		return
	}
	for _, at := range d.Attempts() {
		var f figures
		if p, ok := f.fold(&at); ok {
			a.pdd = append(a.pdd, p)
		}
		a.add(&f)
	}
}

// addCounts adds b's dialogs and counts to a, not its samples.
func (a *MetricsAcc) addCounts(b *MetricsAcc) {
	a.dialogs += b.dialogs
	c := b.counts()
	a.add(&c)
}

// counts are a's counts as one share.
func (a *MetricsAcc) counts() figures {
	return figures{attempts: a.attempts, answered: a.answered, network: a.network, durN: a.durN, durSum: a.durSum}
}

func (a *MetricsAcc) add(f *figures) {
	a.attempts += f.attempts
	a.answered += f.answered
	a.network += f.network
	a.durSum += f.durSum
	a.durN += f.durN
}

// Result computes the figures; a figure without a basis is null with the
// reason.
func (a *MetricsAcc) Result() CallMetrics {
	m := CallMetrics{Dialogs: a.dialogs, Attempts: a.attempts, Answered: a.answered}
	const noAttempts = "no call attempt in this group has a final response"
	m.ASR = ratio(a.answered, a.attempts, noAttempts)
	m.NER = ratio(a.answered+a.network, a.attempts, noAttempts)
	m.ACD = Metric{Unit: "s", Population: a.durN}
	if a.durN == 0 {
		m.ACD.NullReason = "no answered call in this group has both its 2xx and a BYE"
	} else {
		v := a.durSum.Seconds() / float64(a.durN)
		m.ACD.Value = &v
	}
	m.PDDp50, m.PDDp95 = percentiles(a.pdd, a.sorted)
	return m
}

func ratio(n, d int, why string) Metric {
	m := Metric{Unit: "ratio", Population: d}
	if d == 0 {
		m.NullReason = why
		return m
	}
	v := float64(n) / float64(d)
	m.Value = &v
	return m
}

// percentiles are the nearest-rank p50 and p95 of samples (ms), which
// it reorders unless they are sorted: two selections, linear in the
// samples, where a sort of a site's 100,000 post-dial delays was most of
// group_dialogs' time (docs/benchmarks.md).
func percentiles(samples []float64, sorted bool) (p50, p95 Metric) {
	if len(samples) == 0 {
		const why = "no attempt in this group has both its INVITE and a 180/183"
		return Metric{Unit: "ms", NullReason: why}, Metric{Unit: "ms", NullReason: why}
	}
	k95, k50 := nearestRank(len(samples), 95), nearestRank(len(samples), 50)
	if !sorted {
		selectNth(samples, k50)
		if k95 > k50 { // what follows k50 is no smaller: k95 is among it, half the samples
			selectNth(samples[k50+1:], k95-k50-1)
		}
	}
	return msMetric(samples[k50], len(samples)), msMetric(samples[k95], len(samples))
}

// nearestRank is the index in n sorted samples of the p-th percentile:
// rank ceil(p/100 × n), never an interpolation.
func nearestRank(n int, p float64) int {
	return max(int(math.Ceil(p/100*float64(n))), 1) - 1
}

func msMetric(v float64, n int) Metric { return Metric{Value: &v, Unit: "ms", Population: n} }

// selectNth reorders xs (no NaN) so that xs[k] holds what a sort would
// put there, with nothing greater before it and nothing smaller after:
// quickselect, its partition without a branch on the samples (random
// delays mispredict half of them), its rounds bounded so that crafted
// timings cannot make it quadratic; past the bound, or once the part
// left is short, it sorts the part.
func selectNth(xs []float64, k int) {
	lo, hi := 0, len(xs)
	for rounds := 2 * bits.Len(uint(len(xs))); hi-lo > 12 && rounds > 0; rounds-- {
		x, y, z := xs[lo], xs[lo+(hi-lo)/2], xs[hi-1]
		pivot := max(min(x, y), min(max(x, y), z)) // the median of the three
		mid := partition(xs[lo:hi], func(v float64) bool { return v < pivot })
		if mid == 0 {
			// Nothing is smaller: the pivot is the least value, which may
			// be most of the part. Its copies go first instead.
			if mid = partition(xs[lo:hi], func(v float64) bool { return v == pivot }); lo+mid > k {
				return
			}
			lo += mid
			continue
		}
		if lo+mid > k {
			hi = lo + mid
		} else {
			lo += mid
		}
	}
	slices.Sort(xs[lo:hi])
}

// partition moves the values of xs that less accepts before the others
// and returns how many there are, swapping every value in turn and
// counting rather than branching on less.
func partition(xs []float64, less func(float64) bool) int {
	n := 0
	for i, v := range xs {
		xs[i], xs[n] = xs[n], v
		if less(v) {
			n++
		}
	}
	return n
}
