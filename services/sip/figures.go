package sip

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// figures is one dialog's share of CallMetrics (MetricsAcc.Add): what its
// call attempts with a final response add up to.
type figures struct {
	attempts, answered, network, durN int
	durSum                            time.Duration
	pdd                               float64 // ms, when hasPDD
	hasPDD                            bool
}

// The packing of figures in Dialog.figsWord: four counts of figsBits
// each, then whether the dialog has a PDD sample and whether its share
// did not fit (more than one PDD sample, or a count past figsMax), so
// MetricsAcc folds its attempts on every call instead.
const (
	figsBits   = 15
	figsMax    = 1<<figsBits - 1
	figsHasPDD = 1 << (4 * figsBits)
	figsFold   = figsHasPDD << 1
)

// memoFigures returns d's share of the call figures, judged once per
// dialog revision and kept on d (Dialog.figs); false when the share does
// not fit the memo and the caller folds d's attempts itself.
func (d *Dialog) memoFigures() (figures, bool) {
	if atomic.LoadUint64(&d.figsRev) == d.Rev+1 {
		w := atomic.LoadUint64(&d.figsWord)
		if w&figsFold != 0 {
			return figures{}, false
		}
		return figures{
			attempts: int(w & figsMax), answered: int(w >> figsBits & figsMax),
			network: int(w >> (2 * figsBits) & figsMax), durN: int(w >> (3 * figsBits) & figsMax),
			durSum: time.Duration(atomic.LoadUint64(&d.figsDur)),
			pdd:    math.Float64frombits(atomic.LoadUint64(&d.figsPDD)), hasPDD: w&figsHasPDD != 0,
		}, true
	}
	var f figures
	pdds := 0
	for _, at := range d.Attempts() {
		if p, ok := f.fold(&at); ok {
			f.pdd, f.hasPDD = p, true
			pdds++
		}
	}
	var w uint64
	fits := pdds <= 1 && max(f.attempts, f.answered, f.network, f.durN) <= figsMax
	if fits {
		w = uint64(f.attempts) | uint64(f.answered)<<figsBits | uint64(f.network)<<(2*figsBits) | uint64(f.durN)<<(3*figsBits)
		if f.hasPDD {
			w |= figsHasPDD
		}
	} else {
		w = figsFold
	}
	// The other words first: a reader that sees figsRev sees them. Two
	// readers judging d at once store the same values.
	atomic.StoreUint64(&d.figsDur, uint64(f.durSum))
	atomic.StoreUint64(&d.figsPDD, math.Float64bits(f.pdd))
	atomic.StoreUint64(&d.figsWord, w)
	atomic.StoreUint64(&d.figsRev, d.Rev+1)
	return f, fits
}

// fold adds the attempt at to f when it has a final response, and
// returns its PDD in ms when it has one.
func (f *figures) fold(at *Attempt) (float64, bool) {
	if at.FinalCode == 0 {
		return 0, false
	}
	f.attempts++
	if at.FinalCode < 300 {
		f.answered++
		if dur, ok := at.Duration(); ok {
			f.durSum += dur
			f.durN++
		}
	} else if slices.Contains(nerCodes, at.FinalCode) {
		f.network++
	}
	if p, ok := at.PDD(); ok {
		return float64(p) / float64(time.Millisecond), true
	}
	return 0, false
}

// warmMemos reads the memo words of ds (figures and problems share a
// cache line) in one tight loop, as warm does the hot fields, so that
// their cache misses overlap.
func warmMemos(ds []*Dialog) {
	var s uint64
	for _, d := range ds {
		s += atomic.LoadUint64(&d.figsRev)
	}
	warmSink.Add(s)
}
