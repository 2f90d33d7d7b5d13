package sip

import (
	"net/netip"
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
	n := heapsize.Pointers(int(unsafe.Sizeof(slot{}))) + heapsize.Pointers(int(unsafe.Sizeof(Dialog{})))
	// byID: a string key (sharing CallID's bytes) and a pointer.
	n += heapsize.MapEntry(int(unsafe.Sizeof("") + unsafe.Sizeof(sl)))
	for _, s := range [...]string{d.CallID, d.FromUser, d.ToUser, d.FromDisplay, d.ToDisplay, d.FinalReason, d.ReasonHeader} {
		n += heapsize.String(s)
	}
	n += stringList(d.UserAgents) + stringList(d.ToTags) + stringList(d.SessionIDs) + stringList(d.ICIDs)
	n += heapsize.Pointers(cap(d.XHeaders) * int(unsafe.Sizeof(XHeader{})))
	for _, x := range d.XHeaders {
		n += heapsize.String(x.Name) + heapsize.String(x.Value)
	}
	// Methods are interned by the store: the list's array is all they cost.
	n += heapsize.Pointers(cap(d.Methods) * int(unsafe.Sizeof("")))
	n += heapsize.Pointers(cap(d.Participants) * int(unsafe.Sizeof(netip.AddrPort{})))
	n += heapsize.Bytes(8 * (cap(d.msgs) + cap(d.txKeys) + cap(d.txIDs)))
	n += heapsize.Pointers(cap(d.Txns) * int(unsafe.Sizeof(Transaction{})))
	for _, tx := range d.Txns {
		// Methods are interned; a branch and a reason phrase are the
		// transaction's own.
		n += heapsize.String(tx.Branch) + heapsize.String(tx.FinalReason)
	}
	return n
}

func stringList(list []string) int {
	n := heapsize.Pointers(cap(list) * int(unsafe.Sizeof("")))
	for _, s := range list {
		n += heapsize.String(s)
	}
	return n
}

// messageBytes is what one kept message holds beyond its ring slot (the
// Message itself lives in the ring's chunk): its raw bytes, packed in a
// slab.
func messageBytes(m Message) int { return len(m.Raw) }

// MessageSlotBytes is a message's fixed cost: its place in the ring.
func MessageSlotBytes() int64 { return int64(ring.SlotBytes[Message]()) }

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
