package sip

import (
	"sort"
	"time"
)

// DialogByID returns the dialog with id in this view (Dialogs are in id
// order), or nil. Ids are the dialog ring's sequence numbers, evicted
// oldest first, so the dialog is most often at its id's distance from
// the first: that place is tried before a search (search_by_time asks
// once a message).
func (sn *Snapshot) DialogByID(id uint64) *Dialog {
	ds := sn.Dialogs
	if len(ds) == 0 || id < ds[0].ID {
		return nil
	}
	at := id - ds[0].ID
	if at < uint64(len(ds)) && ds[at].ID == id {
		return ds[at]
	}
	// Ids missing before it (a view of some of a store's dialogs; a
	// store's own run without a gap) put it nearer the start, never
	// further.
	end := int(min(at, uint64(len(ds))))
	i := sort.Search(end, func(i int) bool { return ds[i].ID >= id })
	if i < end && ds[i].ID == id {
		return ds[i]
	}
	return nil
}

// HoldsDialog is whether a dialog with id is in this view, as
// DialogByID(id) != nil, without reading the dialog while the view's ids
// run without a gap (a whole store's snapshot, most often): a reader of
// every message that needs no field of its dialog then reads no dialog,
// each a cache miss at 100,000 of them.
func (sn *Snapshot) HoldsDialog(id uint64) bool {
	ds := sn.Dialogs
	if n := len(ds); n > 0 && ds[n-1].ID-ds[0].ID == uint64(n-1) {
		return id >= ds[0].ID && id <= ds[n-1].ID
	}
	return sn.DialogByID(id) != nil
}

// RangeMessages calls fn for every kept message from sequence number from
// on, oldest first, until fn returns false.
func (sn *Snapshot) RangeMessages(from uint64, fn func(m *Message) bool) {
	sn.msgs.RangePtr(from, func(_ uint64, m *Message) bool { return fn(m) })
}

// RangeMessagesBetween is RangeMessages over the messages of since to
// until (a zero bound is none), told from the times the message ring
// keeps beside them, so a window reads its own messages only. fn may be
// handed messages outside (one whose time was not kept, after a time
// outside UnixNano's range): it tests each by its own time.
func (sn *Snapshot) RangeMessagesBetween(since, until time.Time, fn func(m *Message) bool) {
	sn.msgs.RangePtrBetween(0, since, until, func(_ uint64, m *Message) bool { return fn(m) })
}

// MessageSeqs returns the first and end (one past the last) sequence
// numbers of the kept messages.
func (sn *Snapshot) MessageSeqs() (first, end uint64) { return sn.msgs.FirstSeq(), sn.msgs.EndSeq() }
