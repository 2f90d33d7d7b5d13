package rtp

import (
	"hash/maphash"
	"net/netip"
	"unsafe"
)

// endpointTable is the signalled addresses' bounded table (ringTable),
// a fifo without a Go map: the entries live in the insertion-order ring
// itself, found through an open-addressing index of ring positions. On a
// full table every new address cost a map a lookup, an insert and the
// evicted key's delete, each a cache miss or two in a table of 40-byte
// slots; the index is 8 bytes a slot, at most half full, and keeps 32
// bits of each entry's hash, so probing and deleting read no entry but
// the one found. Under a byte share each endpoint is charged its weight
// (endpointWeight), when added and again when signalled anew (weigh).
type endpointTable struct {
	ringTable[endpointEntry]
	seed maphash.Seed
}

type endpointEntry struct {
	addr netip.AddrPort
	ep   *endpoint
	h    uint32 // addr's hash: eviction finds its slot without hashing again
	w    uint32 // what ep was charged
}

func (e endpointEntry) hash() uint32   { return e.h }
func (e endpointEntry) charged() int64 { return int64(e.w) }
func (e endpointEntry) moved(pos int)  { e.ep.pos = int32(pos) }
func (t *endpointTable) keeps(ep *endpoint) bool {
	return int(ep.pos) < len(t.ring) && t.ring[ep.pos].ep == ep
}

// newEndpointTable is a table of at most limit endpoints and, when
// maxBytes is set, at most maxBytes charged, each endpoint what it holds
// (endpointWeight).
func newEndpointTable(limit int, maxBytes int64) *endpointTable {
	// Seeded like a Go map's hash, so addresses written into SDP cannot
	// be chosen to collide.
	t := &endpointTable{seed: maphash.MakeSeed()}
	t.limit, t.maxBytes, t.entryBytes = limit, maxBytes, int(unsafe.Sizeof(endpointEntry{}))
	return t
}

// hash is k's seeded hash over its 16 bytes, family and port as one
// block, and its zone: consistent with == on netip.AddrPort, and a
// single memhash where maphash.Comparable walks the struct field by field.
// The port's low bit is left out of the block and is the hash's top bit
// instead: an m= line's RTP port and its RTCP port above share a home
// slot, so the pair is probed, indexed and, added one after the other,
// evicted in one cache line of the index rather than two, while their
// stored hashes still tell them apart.
func (t *endpointTable) hash(k netip.AddrPort) uint32 {
	a := k.Addr()
	var b [19]byte
	*(*[16]byte)(b[:]) = a.As16()
	p := k.Port()
	b[16], b[17] = byte(p>>9), byte(p>>1)
	if a.Is4() {
		b[18] = 1
	}
	h := maphash.Bytes(t.seed, b[:])
	if z := a.Zone(); z != "" {
		h ^= maphash.String(t.seed, z)
	}
	return uint32(h)&^(1<<31) | uint32(p&1)<<31
}

func (t *endpointTable) get(k netip.AddrPort) (*endpoint, bool) {
	ep, _, ok := t.lookup(k)
	return ep, ok
}

// pairHash is the hash of rtcp, from h, rtp's: an even port's next
// differs in the top bit alone, so an m= line's pair is hashed once.
func (t *endpointTable) pairHash(rtp netip.AddrPort, h uint32, rtcp netip.AddrPort) uint32 {
	if rtp.Port()&1 == 0 && rtcp.Port() == rtp.Port()+1 && rtcp.Addr() == rtp.Addr() {
		return h | 1<<31
	}
	return t.hash(rtcp)
}

// lookup is get that also returns k's hash, for add.
func (t *endpointTable) lookup(k netip.AddrPort) (ep *endpoint, h uint32, ok bool) {
	h = t.hash(k)
	ep, ok = t.find(k, h)
	return ep, h, ok
}

// find is lookup of k, whose hash h is known.
func (t *endpointTable) find(k netip.AddrPort, h uint32) (*endpoint, bool) {
	if len(t.index) == 0 {
		return nil, false
	}
	mask := len(t.index) - 1
	for i := int(h) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if s := t.index[i]; uint32(s>>32) == h {
			if e := t.at(s); e.addr == k {
				return e.ep, true
			}
		}
	}
	return nil, false
}

// add inserts k, whose hash h lookup has just returned without finding
// it, evicting the oldest entries while the table is full; it reports
// whether it evicted any.
func (t *endpointTable) add(k netip.AddrPort, h uint32, ep *endpoint) (evicted bool) {
	e := endpointEntry{addr: k, ep: ep, h: h}
	if t.maxBytes > 0 {
		e.w = ep.weight
	}
	return t.put(e) > 0
}

// weigh charges ep its weight now, after it was signalled again,
// evicting the oldest entries while the table is past its bytes, ep
// too when it is the oldest. An endpoint the table no longer keeps is
// not charged.
func (t *endpointTable) weigh(ep *endpoint) {
	if t.maxBytes == 0 || !t.keeps(ep) {
		return
	}
	e := &t.ring[ep.pos]
	delta := int64(ep.weight) - int64(e.w)
	e.w = ep.weight
	t.grow(delta)
}
