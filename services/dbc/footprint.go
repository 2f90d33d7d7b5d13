package dbc

import (
	"slices"
	"unsafe"
)

// mapEntryBytes is what one map entry costs beyond its key and value, on
// average for Go's swiss-table maps (control byte, load-factor slack,
// group headers); measured with TestFootprintTracksTheHeap, not derived.
const mapEntryBytes = 16

// footprint estimates the heap a parsed database holds: its structs,
// slices, strings and maps, from their sizes. It is an estimate (string
// headers shared with einride's parse are counted, the allocator's size
// classes are not), checked against the measured heap by
// TestFootprintTracksTheHeap to stay within a factor of two.
func (db *Database) footprint() int64 {
	const (
		message = int64(unsafe.Sizeof(Message{}))
		signal  = int64(unsafe.Sizeof(Signal{}))
		muxPair = int64(unsafe.Sizeof([2]int64{}))
		label   = int64(unsafe.Sizeof(int64(0))+unsafe.Sizeof("")) + mapEntryBytes
		index   = int64(unsafe.Sizeof(uint32(0))+unsafe.Sizeof(int32(0))) + mapEntryBytes
		intSize = int64(unsafe.Sizeof(0))
	)
	n := int64(unsafe.Sizeof(*db)) + int64(len(db.Name)+len(db.File))
	for _, s := range slices.Concat(db.Notes, db.Warnings) {
		n += int64(unsafe.Sizeof(s)) + int64(len(s))
	}
	n += int64(cap(db.Messages)) * message
	n += int64(len(db.byID)+len(db.byPGN)) * index
	for i := range db.Messages {
		m := &db.Messages[i]
		n += int64(len(m.Name) + len(m.Transmitter) + len(m.Comment))
		n += int64(cap(m.Signals))*signal + int64(cap(m.order))*intSize
		for j := range m.Signals {
			s := &m.Signals[j]
			n += int64(len(s.Name)+len(s.Unit)+len(s.Comment)) + int64(cap(s.MuxRanges))*muxPair
			for _, l := range s.Labels {
				n += label + int64(len(l))
			}
		}
	}
	return n
}
