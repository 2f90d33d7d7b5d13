package framestore

import (
	"sync"
	"time"

	"fieldtap/drivers/wire"
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
	Link    wire.LinkType
	Data    []byte
	OrigLen int
}

// Store is one port's frame ring. One goroutine appends; any may read.
type Store struct {
	*ring.Ring[Record]
	mu    sync.Mutex
	slabs *ring.Slabs // the frames' bytes
}

// New returns a store bounded by l.
func New(l Limits) (*Store, error) {
	r, err := ring.New(l, func(r Record) int { return len(r.Data) })
	if err != nil {
		return nil, err
	}
	// A store no one reads while it fills reuses its chunks and slabs,
	// instead of leaving every evicted frame's memory to the collector.
	r.ReuseChunks()
	r.TimeOf(func(r *Record) time.Time { return r.Time })
	return &Store{Ring: r, slabs: ring.NewSlabs(r, slabSize)}, nil
}

// Append stores a copy of rec (its Data may be borrowed) and returns its
// sequence number. A frame alone larger than the byte bound is refused
// with ring.ErrOversize and counted.
func (s *Store) Append(rec Record) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Data = s.slabs.Copy(rec.Data)
	seq, err := s.Ring.Append(rec)
	s.slabs.Seal()
	return seq, err
}

// AppendAll stores a copy of every record of recs, in order, under one
// lock of the slabs and one of the ring: a batch of frames pays two locks,
// not two a frame. Oversize frames are refused and counted as Append
// refuses them. The records' Data are replaced by their copies.
func (s *Store) AppendAll(recs []Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		recs[i].Data = s.slabs.Copy(recs[i].Data)
	}
	s.Ring.AppendAll(recs)
	s.slabs.Seal()
}
