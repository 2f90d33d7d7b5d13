package rtp

import (
	"hash/maphash"
	"unsafe"
)

// dialogTable is the dialogs' bounded table by Call-ID (ringTable). It
// is looked up by the message's bytes, so only a new dialog's Call-ID
// becomes a string, and keys on the dialog's own callID: an entry holds
// no key of its own. Under a byte share each dialog is charged what it
// holds (dialogMedia.bytes), when added and again as it grows (weigh).
type dialogTable struct {
	ringTable[dialogEntry]
	seed maphash.Seed
}

type dialogEntry struct {
	d *dialogMedia
	h uint32 // hash of d.callID
	w uint32 // what d was charged
}

func (e dialogEntry) hash() uint32   { return e.h }
func (e dialogEntry) charged() int64 { return int64(e.w) }
func (e dialogEntry) moved(pos int)  { e.d.pos = pos }
func (t *dialogTable) keeps(d *dialogMedia) bool {
	return d.pos < len(t.ring) && t.ring[d.pos].d == d
}

func newDialogTable(limit int, maxBytes int64) *dialogTable {
	// Seeded: Call-IDs are the sender's choice.
	t := &dialogTable{seed: maphash.MakeSeed()}
	t.limit, t.maxBytes, t.entryBytes = limit, maxBytes, int(unsafe.Sizeof(dialogEntry{}))
	return t
}

// lookup finds the dialog of Call-ID id and returns id's hash, for add.
func (t *dialogTable) lookup(id []byte) (d *dialogMedia, h uint32, ok bool) {
	h = uint32(maphash.Bytes(t.seed, id))
	d = find(t, h, id)
	return d, h, d != nil
}

// of is the dialog ep's SDP came in, nil once the table has evicted it:
// endpoints and streams name their call and do not keep its dialog, so
// an evicted dialog's SDP goes with it.
func (t *dialogTable) of(ep *endpoint) *dialogMedia {
	if ep == nil {
		return nil
	}
	return find(t, uint32(maphash.String(t.seed, ep.callID)), ep.callID)
}

// find is the dialog of Call-ID id, whose hash is h, or nil.
func find[S string | []byte](t *dialogTable, h uint32, id S) *dialogMedia {
	if len(t.index) == 0 {
		return nil
	}
	mask := len(t.index) - 1
	for i := int(h) & mask; t.index[i] != 0; i = (i + 1) & mask {
		if s := t.index[i]; uint32(s>>32) == h {
			if d := t.at(s).d; d.callID == string(id) {
				return d
			}
		}
	}
	return nil
}

// add inserts d, whose Call-ID's hash h lookup has just returned
// without finding it, evicting the oldest dialogs while the table is
// full.
func (t *dialogTable) add(h uint32, d *dialogMedia) {
	e := dialogEntry{d: d, h: h}
	if t.maxBytes > 0 {
		e.w = uint32(d.bytes())
	}
	t.put(e)
}

// weigh charges d what it holds now, after it grew, evicting the oldest
// dialogs while the table is past its bytes, d too when it is the
// oldest: d's caller may finish with it, and d's next message starts a
// new dialog. A dialog the table no longer keeps is not charged.
func (t *dialogTable) weigh(d *dialogMedia) {
	if t.maxBytes == 0 || !t.keeps(d) {
		return
	}
	e := &t.ring[d.pos]
	w := d.bytes()
	delta := w - int64(e.w)
	e.w = uint32(w)
	t.grow(delta)
}

// each visits dialogs oldest first.
func (t *dialogTable) each(fn func(*dialogMedia)) {
	t.ringTable.each(func(e *dialogEntry) { fn(e.d) })
}
