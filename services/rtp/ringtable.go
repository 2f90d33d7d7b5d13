package rtp

import "fieldtap/services/heapsize"

// ringTable is a bounded table's entries in the order they came: a ring
// that grows to limit, oldest at head, with an index of their positions
// by hash (ringIndex), so finding, adding and evicting read no entry but
// the one found. Full is limit entries or, when maxBytes is set, more
// than maxBytes charged: each entry what it was charged (E.charged, kept
// in the entry so eviction reads no value written long before), when put
// and again as its value grows (grow), and the ring's and index's
// arrays. The oldest entries go, counted (in evicted and in *counter when
// set). An entry tells its value where it lies (E.moved), so the table
// finds a value's entry, and whether it still keeps it, without a search.
// The dialogs' and endpoints' tables are built on it; each finds its
// own keys in the index.
type ringTable[E ringEntry] struct {
	ring    []E // n entries from head, oldest first
	head, n int
	limit   int
	index   ringIndex
	evicted uint64
	// bytes is what the table is charged, maxBytes its bound (0: nothing
	// is charged and limit alone bounds it); entryBytes is one ring
	// entry's size.
	bytes, maxBytes int64
	entryBytes      int
	counter         *uint64
}

// ringEntry is a ringTable's entry: its key's hash, what it was charged,
// and moved, which tells its value its place in the ring.
type ringEntry interface {
	hash() uint32
	charged() int64
	moved(pos int)
}

// at is the entry an index slot s points at.
func (t *ringTable[E]) at(s uint64) *E { return &t.ring[uint32(s)-1] }

// put adds e as the newest entry, which its caller has just failed to
// find, evicting the oldest entries while the table is full, e itself
// only if it alone is past maxBytes; it returns how many it evicted.
func (t *ringTable[E]) put(e E) (evicted int) {
	if t.n == t.limit {
		t.evictOldest()
		evicted++
	}
	if t.n == len(t.ring) {
		t.growRing()
	}
	pos := (t.head + t.n) % len(t.ring)
	t.ring[pos] = e
	e.moved(pos)
	t.n++
	if 2*t.n > len(t.index) {
		t.charge(-indexBytes(len(t.index)))
		t.index.grow()
		t.charge(indexBytes(len(t.index)))
	}
	t.index.insert(e.hash(), pos)
	t.charge(e.charged())
	return evicted + t.trim()
}

// grow charges delta more bytes to a kept entry (its new weight less
// what it was charged) and evicts the oldest entries while the table is
// past maxBytes, the grown one too when it is the oldest.
func (t *ringTable[E]) grow(delta int64) {
	t.charge(delta)
	t.trim()
}

func (t *ringTable[E]) trim() (evicted int) {
	for t.maxBytes > 0 && t.bytes > t.maxBytes && t.n > 1 {
		t.evictOldest()
		evicted++
	}
	return evicted
}

func (t *ringTable[E]) charge(n int64) {
	if t.maxBytes > 0 {
		t.bytes += n
	}
}

// growRing doubles the ring, up to limit, oldest first again, and
// indexes the entries at their new places.
func (t *ringTable[E]) growRing() {
	ring := make([]E, min(max(2*len(t.ring), 8), t.limit))
	for i := range t.n {
		ring[i] = t.ring[(t.head+i)%len(t.ring)]
	}
	t.charge(t.ringBytes(len(ring)) - t.ringBytes(len(t.ring)))
	t.ring, t.head = ring, 0
	for i := range t.index {
		t.index[i] = 0
	}
	for i, e := range t.ring[:t.n] {
		t.index.insert(e.hash(), i)
		e.moved(i)
	}
}

func (t *ringTable[E]) ringBytes(n int) int64 { return int64(heapsize.Pointers(n * t.entryBytes)) }

func (t *ringTable[E]) evictOldest() {
	e := &t.ring[t.head]
	t.index.remove((*e).hash(), t.head)
	t.charge(-(*e).charged())
	var zero E
	*e = zero // the value's place no longer points back at it: not kept
	t.head = (t.head + 1) % len(t.ring)
	t.n--
	t.evicted++
	if t.counter != nil {
		*t.counter++
	}
}

func (t *ringTable[E]) len() int { return t.n }

// each visits entries oldest first.
func (t *ringTable[E]) each(fn func(*E)) {
	for i := range t.n {
		fn(&t.ring[(t.head+i)%len(t.ring)])
	}
}
