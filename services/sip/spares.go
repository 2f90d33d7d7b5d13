package sip

// maxSpares bounds each capacity's list in a spares: a new dialog takes
// one array of a capacity as an older one gives one up, so a few cover
// the churn; they are the store's few kilobytes beside its bounds.
const maxSpares = 16

// spares keeps a dialog list's arrays that no one reads any more, of the
// capacities append gives the list as it grows, for the next dialogs'
// lists to grow into: a call's three transactions cost allocations of
// 240, 480 and 1,024 bytes the collector scans, its messages and
// retransmission keys two each past the Dialog's own arrays. An array
// comes back when its dialog outgrows it or when the ring evicts a
// dialog no snapshot holds. A dialog's heap arrays are its own (a copy a
// snapshot forces gets its own, Dialog.forUpdate), so either way no one
// else reads them. Capacities stay what append gives, and so does the
// charge.
type spares[T any] struct {
	// grow is append's capacity steps for the list, from and to: the
	// arrays kept are those of a step's "to".
	grow  [3][2]int
	byCap [3][][]T
}

// txnSpares are the transaction lists' (append: 0 → 1 → 2 → 4).
func txnSpares() spares[Transaction] {
	return spares[Transaction]{grow: [3][2]int{{0, 1}, {1, 2}, {2, 4}}}
}

// wordSpares are the word lists' past the Dialog's arrays of
// inlineWords (append: 2 → 4 → 8 → 16).
func wordSpares() spares[uint64] {
	return spares[uint64]{grow: [3][2]int{{inlineWords, 4}, {4, 8}, {8, 16}}}
}

// append appends v to list as append does, taking the new array from
// the spares where it can, and keeps the outgrown one.
func (p *spares[T]) append(list []T, v T) []T {
	if len(list) < cap(list) {
		return append(list, v)
	}
	for i, step := range p.grow {
		if step[0] != cap(list) || len(p.byCap[i]) == 0 {
			continue
		}
		free := p.byCap[i]
		a := free[len(free)-1]
		p.byCap[i] = free[:len(free)-1]
		a = append(a[:copy(a[:cap(a)], list)], v)
		p.keep(list)
		return a
	}
	out := append(list, v)
	p.keep(list)
	return out
}

// keep clears an array no one reads any more (strings it holds are the
// collector's) and keeps it, if of a capacity kept and while there is
// room.
func (p *spares[T]) keep(a []T) {
	for i, step := range p.grow {
		if step[1] != cap(a) {
			continue
		}
		if len(p.byCap[i]) < maxSpares {
			a = a[:cap(a)]
			clear(a)
			p.byCap[i] = append(p.byCap[i], a[:0])
		}
		return
	}
}
