package rtp

// fifo is a bounded table: a map plus insertion order, evicting the
// oldest entries (past those spare keeps) when full and counting them.
// Full is limit entries or,
// when maxBytes is set, more than maxBytes of the entries' charges: each
// entry is charged when added and again as it grows (grow), so a table of
// entries that hold little keeps more of them than one of full ones.
type fifo[K comparable, V any] struct {
	m     map[K]V
	order []K // a ring of keys, oldest at head; it grows to limit
	head  int
	n     int // keys in order
	limit int
	// bytes is the sum of the kept entries' charges and of the ring of
	// keys' array (orderBytes of its length), maxBytes its bound (0:
	// nothing is charged); charge is what an entry was charged, as add and
	// grow were told.
	bytes, maxBytes int64
	charge          func(V) int64
	orderBytes      func(n int) int64
	// spare, when set, keeps an oldest entry it says is still in use:
	// the entry moves to the newest end and the next oldest is looked
	// at, for one pass over the table at most, after which the oldest
	// goes whatever spare says.
	spare   func(V) bool
	evicted uint64
	onEvict func(K, V)
}

func newFIFO[K comparable, V any](limit int) *fifo[K, V] {
	return &fifo[K, V]{m: make(map[K]V), limit: limit}
}

// newWeighedFIFO is a fifo of at most limit entries whose charges, as
// charge reads them, and ring of keys, an array of n keys costing
// orderBytes(n), add up to at most maxBytes.
func newWeighedFIFO[K comparable, V any](limit int, maxBytes int64, charge func(V) int64, orderBytes func(n int) int64) *fifo[K, V] {
	return &fifo[K, V]{m: make(map[K]V), limit: limit, maxBytes: maxBytes, charge: charge, orderBytes: orderBytes}
}

func (f *fifo[K, V]) get(k K) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

// add inserts k, which the caller has just failed to get: every caller
// looks a key up before adding it, so add does not hash it a second time
// to check (one map operation fewer per new stream). v is charged
// f.charge(v). It returns the last key it evicted to make room, if it
// did; the newest entry is evicted only if it alone is past maxBytes.
func (f *fifo[K, V]) add(k K, v V) (old K, evicted bool) {
	if f.n == f.limit {
		old, evicted = f.evictOldest(), true
	}
	if f.n == len(f.order) {
		f.growOrder()
	}
	f.order[(f.head+f.n)%len(f.order)] = k
	f.n++
	f.m[k] = v
	if f.charge != nil {
		f.bytes += f.charge(v)
	}
	for f.bytes > f.maxBytes && f.charge != nil && f.n > 1 {
		old, evicted = f.evictOldest(), true
	}
	return old, evicted
}

// grow charges delta more bytes to an entry (its new charge less what it
// was charged) and evicts the oldest entries while the table is past
// maxBytes, as add would, the grown entry too when it is the oldest and
// spare keeps no other: the caller reads the entry no more once it has
// grown. A table that charges nothing is left as it is.
func (f *fifo[K, V]) grow(delta int64) {
	if f.charge == nil {
		return
	}
	f.bytes += delta
	for f.bytes > f.maxBytes && f.n > 1 {
		f.evictOldest()
	}
}

// growOrder doubles the ring of keys, up to limit, oldest first again.
func (f *fifo[K, V]) growOrder() {
	order := make([]K, min(max(2*len(f.order), 8), f.limit))
	for i := range f.n {
		order[i] = f.order[(f.head+i)%len(f.order)]
	}
	if f.orderBytes != nil {
		f.bytes += f.orderBytes(len(order)) - f.orderBytes(len(f.order))
	}
	f.order, f.head = order, 0
}

// evictOldest drops the oldest entry and returns its key. Every key in
// the order is in the map (only eviction deletes): a table without an
// eviction hook or charges deletes without looking up.
func (f *fifo[K, V]) evictOldest() K {
	var zero K
	if f.spare != nil {
		for range f.n {
			k := f.order[f.head]
			if !f.spare(f.m[k]) {
				break
			}
			f.order[f.head] = zero
			f.order[(f.head+f.n)%len(f.order)] = k // the same slot when the ring is full
			f.head = (f.head + 1) % len(f.order)
		}
	}
	old := f.order[f.head]
	f.order[f.head] = zero
	f.head = (f.head + 1) % len(f.order)
	f.n--
	if f.onEvict != nil || f.charge != nil {
		v := f.m[old]
		if f.charge != nil {
			f.bytes -= f.charge(v)
		}
		if f.onEvict != nil {
			f.onEvict(old, v)
		}
	}
	delete(f.m, old)
	f.evicted++
	return old
}

func (f *fifo[K, V]) len() int { return len(f.m) }

// each visits entries in the order eviction would look at them: oldest
// first, but for those spare kept, which moved to the newest end.
func (f *fifo[K, V]) each(fn func(K, V)) {
	for i := range f.n {
		k := f.order[(f.head+i)%len(f.order)]
		if v, ok := f.m[k]; ok {
			fn(k, v)
		}
	}
}
