package rtp

import "hash/maphash"

// dialogTable is the dialogs' bounded table by Call-ID, a fifo built as
// endpointTable is. It is looked up by the message's bytes, so only a
// new dialog's Call-ID becomes a string, and keys on the dialog's own
// callID: an entry holds no key of its own.
type dialogTable struct {
	ring    []dialogEntry // oldest at head once full
	head    int
	limit   int
	index   ringIndex
	seed    maphash.Seed
	evicted uint64
}

type dialogEntry struct {
	d *dialogMedia
	h uint32 // hash of d.callID
}

func newDialogTable(limit int) *dialogTable {
	// Seeded: Call-IDs are the sender's choice.
	return &dialogTable{limit: limit, seed: maphash.MakeSeed()}
}

// lookup finds the dialog of Call-ID id and returns id's hash, for add.
func (t *dialogTable) lookup(id []byte) (d *dialogMedia, h uint32, ok bool) {
	h = uint32(maphash.Bytes(t.seed, id))
	if len(t.index) == 0 {
		return nil, h, false
	}
	mask := len(t.index) - 1
	for i := int(h) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if s := t.index[i]; uint32(s>>32) == h {
			if d := t.ring[uint32(s)-1].d; d.callID == string(id) {
				return d, h, true
			}
		}
	}
	return nil, h, false
}

// add inserts d, whose Call-ID's hash h lookup has just returned
// without finding it, evicting the oldest dialog when full.
func (t *dialogTable) add(h uint32, d *dialogMedia) {
	pos := len(t.ring)
	if pos < t.limit {
		t.ring = append(t.ring, dialogEntry{d, h})
		if 2*len(t.ring) > len(t.index) {
			t.index.grow()
		}
	} else {
		e := &t.ring[t.head]
		pos = t.head
		t.index.remove(e.h, pos)
		t.evicted++
		*e = dialogEntry{d, h}
		t.head = (t.head + 1) % t.limit
	}
	t.index.insert(h, pos)
}

func (t *dialogTable) len() int { return len(t.ring) }

// each visits dialogs oldest first.
func (t *dialogTable) each(fn func(*dialogMedia)) {
	n := len(t.ring)
	for i := range n {
		fn(t.ring[(t.head+i)%n].d)
	}
}
