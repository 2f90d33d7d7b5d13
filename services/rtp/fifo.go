package rtp

// fifo is a bounded table: a map plus insertion order, evicting the
// oldest entry when full and counting it.
type fifo[K comparable, V any] struct {
	m       map[K]V
	order   []K // ring of keys, oldest at head
	head    int
	limit   int
	evicted uint64
	onEvict func(K, V)
}

func newFIFO[K comparable, V any](limit int) *fifo[K, V] {
	return &fifo[K, V]{m: make(map[K]V), limit: limit}
}

func (f *fifo[K, V]) get(k K) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

// add inserts k, which the caller has just failed to get: every caller
// looks a key up before adding it, so add does not hash it a second time
// to check (one map operation fewer per new stream).
// It returns the key it evicted to make room, if it did.
func (f *fifo[K, V]) add(k K, v V) (old K, evicted bool) {
	if len(f.order) < f.limit {
		f.order = append(f.order, k)
	} else {
		// Every key in the order is in the map (only eviction deletes):
		// a table without an eviction hook deletes without looking up.
		old, evicted = f.order[f.head], true
		if f.onEvict != nil {
			f.onEvict(old, f.m[old])
		}
		delete(f.m, old)
		f.evicted++
		f.order[f.head] = k
		f.head = (f.head + 1) % f.limit
	}
	f.m[k] = v
	return old, evicted
}

func (f *fifo[K, V]) len() int { return len(f.m) }

// each visits entries oldest first.
func (f *fifo[K, V]) each(fn func(K, V)) {
	n := len(f.order)
	for i := range n {
		k := f.order[(f.head+i)%n]
		if v, ok := f.m[k]; ok {
			fn(k, v)
		}
	}
}
