package sip

import (
	"unsafe"

	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// What the store accounts for what it keeps, in heap bytes (issue #14):
// the structures, not the payload length alone. store_heap_test.go holds
// these figures against runtime.MemStats.

// dialogBytes is what one kept dialog holds beyond its ring slot: the
// slot, the Dialog, its index entry, and every string and list it owns.
// Copies a snapshot still holds are the snapshot's, not counted here.
func dialogBytes(sl *slot) int {
	d := sl.d
	n := dialogFixedBytes
	n += d.identBytes() + heapsize.String(d.FinalReason) + heapsize.String(d.ReasonHeader)
	// The lists' arrays by their capacity; the strings they hold were
	// added up as they were kept (Dialog.listBytes).
	n += d.listBytes
	for _, list := range [...][]string{d.UserAgents, d.SessionIDs, d.ICIDs} {
		n += heapsize.Pointers(cap(list) * int(unsafe.Sizeof("")))
	}
	n += heapsize.Pointers(cap(d.XHeaders) * int(unsafe.Sizeof(XHeader{})))
	// Lists in the Dialog's own arrays cost nothing more. Methods are
	// interned by the store: the list's array is all they cost.
	n += outside(d.ToTags, len(d.tagsIn), heapsize.Pointers)
	n += outside(d.Methods, len(d.methodsIn), heapsize.Pointers)
	n += outside(d.Participants, len(d.partsIn), heapsize.Pointers)
	n += outside(d.msgs, len(d.msgsIn), heapsize.Bytes) + outside(d.txKeys, len(d.keysIn), heapsize.Bytes) + outside(d.txIDs, len(d.idsIn), heapsize.Bytes)
	// Transactions' methods are interned; a branch and a reason phrase
	// are the transaction's own, in listBytes.
	n += heapsize.Pointers(cap(d.Txns) * int(unsafe.Sizeof(Transaction{})))
	return n
}

// dialogFixedBytes is what every dialog holds whatever it keeps: the
// slot, the Dialog and, in byID, a string key (sharing CallID's bytes)
// and a pointer. Figured once: dialogBytes runs on every message.
var dialogFixedBytes = heapsize.Pointers(int(unsafe.Sizeof(slot{}))) + heapsize.Pointers(int(unsafe.Sizeof(Dialog{}))) +
	heapsize.MapEntry(int(unsafe.Sizeof("")+unsafe.Sizeof(&slot{})))

// messageBytes is what one kept message holds beyond its ring slot (the
// Message itself lives in the ring's chunk): its raw bytes, packed in a
// slab.
func messageBytes(m Message) int { return len(m.Raw) }

// MessageSlotBytes is a message's fixed cost: its place in the ring,
// with the time the ring keeps beside it (ring.KeepTimes).
func MessageSlotBytes() int64 { return int64(ring.SlotBytes[Message]() + ring.KeptTimeBytes) }

// MinDialogBytes is the least a kept dialog is accounted: its ring slot
// and a Dialog holding no string or list. Every dialog weighs at least
// this, so a share divided by it is a count bound that never binds
// before the share does.
func MinDialogBytes() int64 {
	return int64(ring.SlotBytes[*slot]() + dialogBytes(&slot{d: &Dialog{}}))
}

// Smallest bounds New accepts: room for one dialog with one message, and
// for one message of a few hundred bytes.
func minBounds() (dialog, message int64) {
	return MinDialogBytes(), MessageSlotBytes() + 512
}

// outside is the heap bytes of list's array, by size (heapsize.Bytes or
// Pointers), once it outgrew the Dialog's array of n; 0 while in it.
func outside[T any](list []T, n int, size func(int) int) int {
	if cap(list) <= n {
		return 0
	}
	var v T
	return size(cap(list) * int(unsafe.Sizeof(v)))
}
