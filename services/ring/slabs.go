package ring

// Slabs holds the bytes of a ring's items in fixed-size slabs, one
// allocation per many items, and hands a slab out again once the ring
// has evicted every item that could point into it and no snapshot ever
// could show one (Ring.Released). A full store that no one reads while it
// fills then allocates no bytes: on a long capture the slabs' churn was
// most of what the collector worked for (issue #14). A slab a snapshot
// may still read is left to the collector, as every slab was before.
//
// The caller serialises Copy and Seal.
type Slabs struct {
	size int
	ring interface {
		Next() uint64
		Released(from, to uint64) (evicted, shown bool)
	}
	base     []byte // the current slab, whole
	tail     []byte // its unused part
	from     uint64 // the lowest sequence number an item in it can have
	full     []span // slabs written to the end, oldest first
	unsealed int    // how many of full's last spans have no end yet
}

// span is a full slab and the sequence numbers of the items in it.
type span struct {
	b        []byte
	from, to uint64 // to is 0 until Seal
}

// NewSlabs returns slabs of size bytes for the items of r.
func NewSlabs[T any](r *Ring[T], size int) *Slabs {
	return &Slabs{size: size, ring: r}
}

// Copy returns a copy of b in the current slab, starting another when b
// does not fit; a b larger than a quarter slab gets an allocation of its
// own. Seal must follow once the item holding the copy is in the ring.
func (s *Slabs) Copy(b []byte) []byte {
	if len(b) > s.size/4 {
		return append([]byte(nil), b...)
	}
	if len(s.tail) < len(b) {
		s.next()
	}
	n := copy(s.tail, b)
	out := s.tail[:n:n]
	s.tail = s.tail[n:]
	return out
}

// Seal records where the slabs filled since the last Seal end: every
// item copied into them is in the ring (or was refused) by now.
func (s *Slabs) Seal() {
	if s.unsealed == 0 {
		return
	}
	to := s.ring.Next()
	for i := len(s.full) - s.unsealed; i < len(s.full); i++ {
		s.full[i].to = to
	}
	s.unsealed = 0
}

// next retires the current slab and starts another: the oldest full one
// if the ring released it, else a new one. Slabs evicted but perhaps
// shown are dropped for the collector on the way.
func (s *Slabs) next() {
	if s.base != nil {
		s.full = append(s.full, span{b: s.base, from: s.from})
		s.unsealed++
	}
	// Items copied from now on get a sequence number of at least this.
	s.from = s.ring.Next()
	s.base = nil
	for len(s.full) > 0 && s.full[0].to != 0 {
		evicted, shown := s.ring.Released(s.full[0].from, s.full[0].to)
		if !evicted {
			break
		}
		b := s.full[0].b
		s.full[0] = span{}
		s.full = s.full[1:]
		if !shown {
			s.base = b
			break
		}
	}
	if s.base == nil {
		s.base = make([]byte, s.size)
	}
	s.tail = s.base
}
