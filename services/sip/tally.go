package sip

// tallyScan is how many of a tally's keys a message compares its key
// with before it asks the index: a capture has a handful of methods,
// transports and response codes, and comparing an interned string (one
// pointer) costs less than hashing it, which the three tallies' maps did
// on every message.
const tallyScan = 8

// tally counts messages by key, in order of the keys' first appearance,
// folding keys past maxCountKeys into other as bump does in a map; key
// values that name the same map key (the name function) are one key, so
// Stats shows exactly what the maps showed.
type tally[K comparable] struct {
	keys  []K
	n     []uint64
	other K              // the key counts past maxCountKeys go to (named OtherKey)
	name  func(K) string // the Stats map key of a key
	index map[K]int      // every key's place, once there are more than tallyScan
}

func (t *tally[K]) add(k K) {
	for i, v := range t.keys[:min(len(t.keys), tallyScan)] {
		if v == k {
			t.n[i]++
			return
		}
	}
	if i, ok := t.place(k); ok {
		t.n[i]++
		return
	}
	if len(t.keys) >= maxCountKeys {
		k = t.other
		if i, ok := t.place(k); ok {
			t.n[i]++
			return
		}
	}
	t.keys = append(t.keys, k)
	t.n = append(t.n, 1)
	if len(t.keys) > tallyScan {
		if t.index == nil {
			t.index = make(map[K]int, 2*tallyScan)
			for i, v := range t.keys[:len(t.keys)-1] {
				t.index[v] = i
			}
		}
		t.index[k] = len(t.keys) - 1
	}
}

// place finds k among the keys past the scanned ones.
func (t *tally[K]) place(k K) (int, bool) {
	if t.index != nil {
		i, ok := t.index[k]
		return i, ok
	}
	for i, v := range t.keys {
		if v == k {
			return i, true
		}
	}
	return 0, false
}

// counts is the tally as Stats shows it.
func (t *tally[K]) counts() map[string]uint64 {
	m := make(map[string]uint64, len(t.keys))
	for i, k := range t.keys {
		m[t.name(k)] += t.n[i]
	}
	return m
}
