package rtp

// ringIndex indexes a bounded table's insertion-order ring by hash with
// open addressing: a slot is hash<<32 | ring position+1, 0 is empty,
// probing is linear and the table keeps it at most half full.
type ringIndex []uint64

// insert indexes ring position pos under hash h.
func (x ringIndex) insert(h uint32, pos int) {
	mask := len(x) - 1
	i := int(h) & mask
	for x[i] != 0 {
		i = (i + 1) & mask
	}
	x[i] = uint64(h)<<32 | uint64(pos+1)
}

// grow doubles the index; the slots' hashes place them without the ring.
func (x *ringIndex) grow() {
	old := *x
	*x = make(ringIndex, max(2*len(old), 16))
	for _, s := range old {
		if s != 0 {
			x.insert(uint32(s>>32), int(uint32(s))-1)
		}
	}
}

// remove drops ring position pos, indexed under hash h, moving back the
// slots after it that may take its place (backward-shift deletion), so
// no probe stops short.
func (x ringIndex) remove(h uint32, pos int) {
	mask := len(x) - 1
	i := int(h) & mask
	for uint32(x[i]) != uint32(pos+1) {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; x[j] != 0; j = (j + 1) & mask {
		// j's entry may fill the hole if the hole is no further back
		// than its hash's place.
		if home := int(x[j]>>32) & mask; (j-home)&mask >= (j-i)&mask {
			x[i], i = x[j], j
		}
	}
	x[i] = 0
}
