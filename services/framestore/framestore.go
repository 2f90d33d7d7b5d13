package framestore

import (
	"sync"
	"time"

	"github.com/gopacket/gopacket/layers"

	"fieldtap/services/ring"
)

// slabSize is one allocation of frame bytes: a whole number of runtime
// pages (8 KiB), large enough that a slab's unused tail (less than one
// frame) stays a small fraction, small enough that a slab held alive by
// one last record costs little.
const slabSize = 32 << 10

// Limits bound a store: frames and heap bytes (slots and frame bytes).
type Limits = ring.Limits

// Record is one stored frame.
type Record struct {
	Time    time.Time
	Link    layers.LinkType
	Data    []byte
	OrigLen int
}

// Store is one port's frame ring. One goroutine appends; any may read.
type Store struct {
	*ring.Ring[Record]
	mu   sync.Mutex
	slab []byte // the current slab's unused tail
}

// New returns a store bounded by l.
func New(l Limits) (*Store, error) {
	r, err := ring.New(l, func(r Record) int { return len(r.Data) })
	if err != nil {
		return nil, err
	}
	return &Store{Ring: r}, nil
}

// Append stores a copy of rec (its Data may be borrowed) and returns its
// sequence number. A frame alone larger than the byte bound is refused
// with ring.ErrOversize and counted.
func (s *Store) Append(rec Record) (uint64, error) {
	rec.Data = s.copyData(rec.Data)
	return s.Ring.Append(rec)
}

// AppendAll stores a copy of every record of recs, in order, under one
// lock of the slab and one of the ring: a batch of frames pays two locks,
// not two a frame. Oversize frames are refused and counted as Append
// refuses them. The records' Data are replaced by their copies.
func (s *Store) AppendAll(recs []Record) {
	s.mu.Lock()
	for i := range recs {
		recs[i].Data = s.copyLocked(recs[i].Data)
	}
	s.mu.Unlock()
	s.Ring.AppendAll(recs)
}

// copyData places b in the current slab (copyLocked).
func (s *Store) copyData(b []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyLocked(b)
}

// copyLocked places b in the current slab, starting a new one when b does
// not fit; a frame larger than a quarter slab gets an allocation of its
// own. The caller holds mu.
func (s *Store) copyLocked(b []byte) []byte {
	if len(b) > slabSize/4 {
		return append([]byte(nil), b...)
	}
	if len(s.slab) < len(b) {
		s.slab = make([]byte, slabSize)
	}
	n := copy(s.slab, b)
	out := s.slab[:n:n]
	s.slab = s.slab[n:]
	return out
}
