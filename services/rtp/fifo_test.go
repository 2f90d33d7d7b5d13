package rtp

import (
	"slices"
	"testing"
)

// TestWeighedFIFO: a weighed table evicts its oldest entries, in order and
// counted, while its charges are past its bytes or its entries past its
// limit, when an entry is added and when one grows; an entry alone past
// the bound is kept.
func TestWeighedFIFO(t *testing.T) {
	type entry struct{ w int64 }
	const slot = 10 // the order's array: 10 bytes a key
	f := newWeighedFIFO[int](6, 130, func(e *entry) int64 { return e.w }, func(n int) int64 { return int64(slot * n) })
	var evicted []int
	f.onEvict = func(k int, _ *entry) { evicted = append(evicted, k) }
	check := func(step string, keys []int, bytes int64, gone []int) {
		t.Helper()
		var got []int
		f.each(func(k int, _ *entry) { got = append(got, k) })
		if len(got) != len(keys) || f.bytes != bytes || len(evicted) != len(gone) || f.evicted != uint64(len(gone)) {
			t.Fatalf("%s: keys %v, %d bytes, evicted %v (%d counted); want %v, %d, %v", step, got, f.bytes, evicted, f.evicted, keys, bytes, gone)
		}
		for i := range keys {
			if got[i] != keys[i] {
				t.Fatalf("%s: keys %v; want %v", step, got, keys)
			}
		}
		for i := range gone {
			if evicted[i] != gone[i] {
				t.Fatalf("%s: evicted %v; want %v", step, evicted, gone)
			}
		}
	}
	es := map[int]*entry{}
	add := func(k int, w int64) {
		es[k] = &entry{w}
		f.add(k, es[k])
	}
	add(1, 5)
	add(2, 5)
	check("two small", []int{1, 2}, 10+6*slot, nil) // the ring's first array holds 6 (the limit)
	add(3, 20)
	check("fits", []int{1, 2, 3}, 30+6*slot, nil)
	add(4, 45)
	check("past the bytes", []int{2, 3, 4}, 70+6*slot, []int{1})
	es[3].w += 5
	f.grow(5)
	check("grown", []int{3, 4}, 70+6*slot, []int{1, 2})
	es[3].w += 20
	f.grow(20)
	check("the grown one is the oldest", []int{4}, 45+6*slot, []int{1, 2, 3})
	add(5, 80)
	check("alone past the bound", []int{5}, 80+6*slot, []int{1, 2, 3, 4})
	for k := 6; k <= 12; k++ {
		add(k, 0)
	}
	check("the entry limit", []int{7, 8, 9, 10, 11, 12}, 6*slot, []int{1, 2, 3, 4, 5, 6})
}

// TestFIFOSpare: an oldest entry spare keeps moves to the newest end and
// the next is looked at; after one pass over the table the oldest goes
// whatever spare says.
func TestFIFOSpare(t *testing.T) {
	f := newFIFO[int, int](4)
	keep := map[int]bool{}
	f.spare = func(v int) bool { return keep[v] }
	order := func() []int {
		var ks []int
		f.each(func(k, _ int) { ks = append(ks, k) })
		return ks
	}
	for k := 1; k <= 4; k++ {
		f.add(k, k)
	}
	keep[1], keep[2] = true, true
	if old, _ := f.add(5, 5); old != 3 || !slices.Equal(order(), []int{4, 1, 2, 5}) {
		t.Fatalf("1 and 2 kept: evicted %d, order %v; want 3 evicted, then 4 1 2 5", old, order())
	}
	keep[4], keep[5] = true, true
	if old, _ := f.add(6, 6); old != 4 || !slices.Equal(order(), []int{1, 2, 5, 6}) || f.evicted != 2 {
		t.Fatalf("all kept: evicted %d (%d in all), order %v; want the oldest, 4, after a pass", old, f.evicted, order())
	}
}
