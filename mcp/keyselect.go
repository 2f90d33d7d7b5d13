package mcp

import (
	"math/rand/v2"
	"slices"
)

// keySelect keeps the n values of the greatest keys offered (of the
// least, with least set): a page of the newest or oldest of many matches
// without sorting them all, which at 100,000 dialogs or 600,000 messages
// was most of a call (tail_dialogs, search_by_time). Offered values
// gather in an array of 2n; once it fills, the n to keep are selected
// (quickselect: linear, in expectation, in what it is given), and a key
// past the last one kept is not gathered again. Where most keys come in
// order (updates, capture times) most are gathered, and the selections
// cost about as much as the offers, where a sort grows faster. Keys
// offered in order, each after the last as what is kept goes (a live
// store's updates), need no selection: the first gathered are dropped.
type keySelect[T any] struct {
	n     int
	least bool
	kept  []keyed[T]
	bound rowKey // the last kept of the n selected last, once there were n
	full  bool
	mixed bool // some key was offered out of order: kept is not in order
}

type keyed[T any] struct {
	k rowKey
	v T
}

// keyLess is cmpKey(a, b) < 0, without comparing ids where times differ.
func keyLess(a, b rowKey) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// drops reports whether a goes before b among what is dropped: a lesser
// key, or a greater with least.
func (s *keySelect[T]) drops(a, b rowKey) bool {
	if s.least {
		return keyLess(b, a)
	}
	return keyLess(a, b)
}

func (s *keySelect[T]) offer(k rowKey, v T) {
	if s.n <= 0 || s.full && !s.drops(s.bound, k) {
		return
	}
	if s.kept == nil {
		s.kept = make([]keyed[T], 0, 2*s.n)
	}
	if l := len(s.kept); l > 0 && s.drops(k, s.kept[l-1].k) {
		s.mixed = true
	}
	s.kept = append(s.kept, keyed[T]{k, v})
	if len(s.kept) == cap(s.kept) {
		s.keep()
	}
}

// keep keeps the n of the keys to keep gathered, in no order.
func (s *keySelect[T]) keep() {
	a := s.kept
	p := len(a) - s.n
	if p < 0 {
		return
	}
	// Quickselect around a random pivot until the pivot lands at p:
	// then a[p:] hold the n to keep, a[p] the first of them to drop.
	// Kept in order, they are there already (and stay in order).
	for lo, hi := 0, len(a)-1; s.mixed && lo < hi; {
		pi := lo + rand.IntN(hi-lo+1)
		a[pi], a[hi] = a[hi], a[pi]
		i := lo
		for j := lo; j < hi; j++ {
			if s.drops(a[j].k, a[hi].k) {
				a[i], a[j] = a[j], a[i]
				i++
			}
		}
		a[i], a[hi] = a[hi], a[i]
		switch {
		case i < p:
			lo = i + 1
		case i > p:
			hi = i - 1
		default:
			lo = hi
		}
	}
	s.bound, s.full = a[p].k, true
	s.kept = a[:copy(a, a[p:])]
}

// sorted returns what was kept, least key first.
func (s *keySelect[T]) sorted() []keyed[T] {
	s.keep()
	slices.SortFunc(s.kept, func(a, b keyed[T]) int { return cmpKey(a.k, b.k) })
	return s.kept
}
