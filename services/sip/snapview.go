package sip

import "sort"

// DialogByID returns the dialog with id in this view (Dialogs are in id
// order), or nil.
func (sn *Snapshot) DialogByID(id uint64) *Dialog {
	i := sort.Search(len(sn.Dialogs), func(i int) bool { return sn.Dialogs[i].ID >= id })
	if i < len(sn.Dialogs) && sn.Dialogs[i].ID == id {
		return sn.Dialogs[i]
	}
	return nil
}

// RangeMessages calls fn for every kept message from sequence number from
// on, oldest first, until fn returns false.
func (sn *Snapshot) RangeMessages(from uint64, fn func(m *Message) bool) {
	sn.msgs.RangePtr(from, func(_ uint64, m *Message) bool { return fn(m) })
}

// MessageSeqs returns the first and end (one past the last) sequence
// numbers of the kept messages.
func (sn *Snapshot) MessageSeqs() (first, end uint64) { return sn.msgs.FirstSeq(), sn.msgs.EndSeq() }
