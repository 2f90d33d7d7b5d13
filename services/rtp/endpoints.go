package rtp

import (
	"hash/maphash"
	"net/netip"
)

// endpointTable is the signalled addresses' bounded table, a fifo without
// a Go map: the entries live in the insertion-order ring itself, found
// through an open-addressing index of ring positions. On a full table
// every new address cost the map a lookup, an insert and the evicted
// key's delete, each a cache miss or two in a table of 40-byte slots;
// the index is 8 bytes a slot, at most half full, and keeps 32 bits of
// each entry's hash, so probing and deleting read no entry but the one
// found.
type endpointTable struct {
	ring    []endpointEntry // oldest at head once full
	head    int
	limit   int
	index   []uint64 // hash<<32 | ring position+1; 0 is empty; linear probing
	seed    maphash.Seed
	evicted uint64
}

type endpointEntry struct {
	addr netip.AddrPort
	ep   *endpoint
}

func newEndpointTable(limit int) *endpointTable {
	// Seeded like a Go map's hash, so addresses written into SDP cannot
	// be chosen to collide.
	return &endpointTable{limit: limit, seed: maphash.MakeSeed()}
}

func (t *endpointTable) hash(k netip.AddrPort) uint32 {
	return uint32(maphash.Comparable(t.seed, k))
}

func (t *endpointTable) get(k netip.AddrPort) (*endpoint, bool) {
	if len(t.index) == 0 {
		return nil, false
	}
	h, mask := t.hash(k), len(t.index)-1
	for i := int(h) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if s := t.index[i]; uint32(s>>32) == h {
			if e := &t.ring[uint32(s)-1]; e.addr == k {
				return e.ep, true
			}
		}
	}
	return nil, false
}

// add inserts k, which the caller has just failed to get, as fifo.add
// does, and returns the address it evicted to make room, if it did.
func (t *endpointTable) add(k netip.AddrPort, ep *endpoint) (old netip.AddrPort, evicted bool) {
	pos := len(t.ring)
	if pos < t.limit {
		t.ring = append(t.ring, endpointEntry{k, ep})
		if 2*len(t.ring) > len(t.index) {
			t.grow()
		}
	} else {
		pos, old, evicted = t.head, t.ring[t.head].addr, true
		t.remove(t.slotOf(old, pos))
		t.evicted++
		t.ring[pos] = endpointEntry{k, ep}
		t.head = (t.head + 1) % t.limit
	}
	t.insert(uint64(t.hash(k))<<32 | uint64(pos+1))
	return old, evicted
}

func (t *endpointTable) len() int { return len(t.ring) }

// insert puts slot s at the first free place from its hash's.
func (t *endpointTable) insert(s uint64) {
	mask := len(t.index) - 1
	i := int(s>>32) & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = s
}

// grow doubles the index; the slots' hashes place them without the ring.
func (t *endpointTable) grow() {
	old := t.index
	t.index = make([]uint64, max(2*len(old), 16))
	for _, s := range old {
		if s != 0 {
			t.insert(s)
		}
	}
}

// slotOf is the index of the entry at ring position pos, whose address is k.
func (t *endpointTable) slotOf(k netip.AddrPort, pos int) int {
	mask := len(t.index) - 1
	i := int(t.hash(k)) & mask
	for uint32(t.index[i]) != uint32(pos+1) {
		i = (i + 1) & mask
	}
	return i
}

// remove empties slot i, moving back the slots after it that may take
// its place (backward-shift deletion), so no probe stops short.
func (t *endpointTable) remove(i int) {
	mask := len(t.index) - 1
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		// j's entry may fill the hole if the hole is no further back
		// than its hash's place.
		if home := int(t.index[j]>>32) & mask; (j-home)&mask >= (j-i)&mask {
			t.index[i], i = t.index[j], j
		}
	}
	t.index[i] = 0
}
