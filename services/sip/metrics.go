package sip

import (
	"math"
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
}

// Add counts d and each of its call attempts: its share memoised on d
// (memoFigures), or folded afresh when the share does not fit the memo.
func (a *MetricsAcc) Add(d *Dialog) {
	f, ok := d.memoFigures()
	a.addDialog(d, &f, ok)
}

// addDialog counts d, whose memoFigures answered f and ok.
func (a *MetricsAcc) addDialog(d *Dialog, f *figures, ok bool) {
	a.dialogs++
	if ok {
		a.add(f)
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

func (a *MetricsAcc) add(f *figures) {
	a.attempts += f.attempts
	a.answered += f.answered
	a.network += f.network
	a.durSum += f.durSum
	a.durN += f.durN
}

// merge adds b's dialogs to a.
func (a *MetricsAcc) merge(b *MetricsAcc) {
	a.dialogs += b.dialogs
	a.attempts += b.attempts
	a.answered += b.answered
	a.network += b.network
	a.durSum += b.durSum
	a.durN += b.durN
	a.pdd = append(a.pdd, b.pdd...)
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
	slices.Sort(a.pdd)
	m.PDDp50, m.PDDp95 = percentile(a.pdd, 50), percentile(a.pdd, 95)
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

// percentile is the nearest-rank percentile of sorted samples: the value
// at rank ceil(p/100 × N), never an interpolation.
func percentile(sorted []float64, p float64) Metric {
	m := Metric{Unit: "ms", Population: len(sorted)}
	if len(sorted) == 0 {
		m.NullReason = "no attempt in this group has both its INVITE and a 180/183"
		return m
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	v := sorted[max(rank, 1)-1]
	m.Value = &v
	return m
}
