package sip

import (
	"sort"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// FrameRef names the captured frame that completed a message: the port's
// name and the frame's sequence number in that port's frame ring
// (services/framestore). It is the narrowest link from a message back to
// its bytes on the wire: export reads the frame by number, no scan.
type FrameRef struct {
	Port string
	Seq  uint64
	Set  bool // false when the feeder gave no frame (tests, direct Add)
}

// FeedFrame is Feed for a frame the caller stored as ref; messages the
// frame completes remember it.
func (a *Analyser) FeedFrame(ref FrameRef, t time.Time, link layers.LinkType, data []byte) {
	ref.Set = true
	a.frame = ref
	a.Feed(t, link, data)
	a.frame = FrameRef{}
}

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
