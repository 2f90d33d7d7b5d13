package canbus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"fieldtap/drivers/wire"
	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// Bounds. Every map here is keyed by a value a sender chooses (the CAN id)
// or an operator configures (the port), so each has a limit and counts
// what it turned away.
const (
	// MaxPorts bounds the per-port tables; a board has at most a few buses.
	MaxPorts = 16
	// MaxIDs bounds one port's ID table: 2048 covers every 11-bit id and a
	// busy J1939 bus (the attack logs carry ~400); more is a flood.
	MaxIDs = 2048
	// MaxSeconds of bus-load history kept per port (one hour).
	MaxSeconds = 3600
	// DefaultFrames bounds one port's frame ring when Limits leave it
	// unset: minutes of a busy J1939 bus (~2 000 frames/s at 250 kbit/s).
	DefaultFrames = 100_000
	// DefaultBitrate is assumed for load when a port's rate is unknown:
	// J1939-11/-14 buses run at 250 kbit/s (500 k for -14 is set per port).
	DefaultBitrate = 250_000
)

// Limits bound each port's frame ring: frames and heap bytes. Zero
// fields take DefaultFrames and room for that many; a classic frame, or
// a CAN FD one of up to 8 bytes, costs FrameBytes(), a longer FD frame
// FDFrameBytes().
type Limits = ring.Limits

// FrameBytes is what one stored frame costs in the heap: a Record is a
// fixed-size value, and a classic frame has nothing outside it, so its
// ring slot is all.
func FrameBytes() int64 { return int64(ring.SlotBytes[Record]()) }

// fdDataBytes is the heap share of a long CAN FD frame's data array.
var fdDataBytes = heapsize.Bytes(wire.MaxCANFDData)

// FDFrameBytes is what a CAN FD frame of more than 8 data bytes costs:
// its slot and its data array (Record.FD).
func FDFrameBytes() int64 { return FrameBytes() + int64(fdDataBytes) }

// TableBytes is the most one port's fixed-bound tables hold: MaxIDs rows
// of the ID table (map entry, row, its DLC list of ints, the last FD data), MaxSeconds of load
// history grown by append, and the Port itself with its row cache. The
// memory budget takes it as a fixed cost per port.
func TableBytes() int64 {
	row := heapsize.Pointers(int(unsafe.Sizeof(IDStats{}))) + heapsize.Appended(maxDLCs, int(unsafe.Sizeof(int(0))), false)
	entry := heapsize.MapEntry(int(unsafe.Sizeof(uint32(0)) + unsafe.Sizeof(&IDStats{})))
	history := heapsize.Appended(MaxSeconds, int(unsafe.Sizeof(Second{})), true)
	// A row keeps its latest long FD frame's data array alive after the
	// frame's eviction: fdDataBytes a row at most.
	return int64(MaxIDs*(row+entry+fdDataBytes)) + int64(history) + int64(heapsize.Pointers(int(unsafe.Sizeof(Port{}))))
}

// maxDLCs is how many distinct lengths an id's DLC list can hold: the 9
// of classic CAN (0..8) and the 7 longer ones of CAN FD (12..64).
const maxDLCs = 16

// Record is one stored frame. A classic frame, and a CAN FD one of up to
// 8 bytes, is the value alone: the ring holds it in its slot. A longer
// FD frame's data is an array of its own (FD), weighed by the ring.
type Record struct {
	Time time.Time
	ID   uint32 // with the wire.CAN* flag bits, so an exported log is faithful
	Len  uint8  // data bytes: up to 8, or 64 for CAN FD
	// Flags is 0 for a classic frame and wire.CANFDFDF, with
	// wire.CANFDBRS and wire.CANFDESI as sent, for a CAN FD frame.
	Flags uint8
	// Data is the first 8 data bytes (all of them, but for an FD frame
	// longer than 8): what the ID table and the 8-byte analyses read.
	Data [8]byte
	// FD holds all the data of an FD frame longer than 8 bytes; nil
	// otherwise. It is never changed once stored: views share it.
	FD *[wire.MaxCANFDData]byte
}

// Payload returns the data bytes.
func (r *Record) Payload() []byte {
	if r.FD != nil {
		return r.FD[:r.Len]
	}
	return r.Data[:r.Len]
}

// IsFD reports whether r is a CAN FD frame.
func (r *Record) IsFD() bool { return r.Flags&wire.CANFDFDF != 0 }

// SetData fills r's length and data from data with the FD flags given
// (0 for a classic frame), allocating FD's array only for an FD frame
// longer than 8 bytes; bytes past the length of Data are zero.
func (r *Record) SetData(flags uint8, data []byte) {
	r.Flags, r.Len, r.FD = flags, uint8(len(data)), nil
	if len(data) == 8 {
		r.Data = [8]byte(data) // one move, not a memmove call
		return
	}
	r.Data = [8]byte{}
	copy(r.Data[:], data)
	if len(data) > 8 {
		r.FD = new([wire.MaxCANFDData]byte)
		copy(r.FD[:], data)
	}
}

// IDStats is one row of the ID table.
type IDStats struct {
	ID          uint32
	IDHex       string
	Extended    bool
	Count       uint64
	First       time.Time
	Last        time.Time
	LastData    string
	DLCs        []int  // the distinct lengths, in the order first seen
	ChangedBits string // hex mask over the first 8 data bytes: a 1 bit has changed at least once
	ChangedByte []int
	// FD frames of the id, and of them those with BRS and with ESI set;
	// Count less FD is its classic frames.
	FD, BRS, ESI uint64
	last         [8]byte
	lastFD       *[wire.MaxCANFDData]byte // the latest frame's FD array, shared with its record
	lastLen      uint8
	changed      uint64
}

// Second is one second of bus load.
type Second struct {
	Start  time.Time
	Frames uint64
	Bits   uint64
	Load   float64 // bits / bitrate, 0..1 (can exceed 1 for clock skew)
}

// Port is one bus's counters.
type Port struct {
	mu       sync.Mutex
	name     string
	bitrate  int
	frames   *ring.Ring[Record]
	ids      map[uint32]*IDStats
	idOver   uint64
	seconds  []Second // ring of MaxSeconds, oldest first after wrap
	secStart int
	total    uint64
	std, ext uint64
	rtr, err uint64
	fd       uint64
	bits     uint64
	first    time.Time
	last     time.Time
	link     func() Link // the driver's link view; nil when none
	// cur is the newest second of load history (nil before the first
	// frame) and curSec its Unix second.
	cur    *Second
	curSec int64
	// hot caches ID table rows by id: a bus repeats a few dozen ids at
	// 10–100 Hz, and the cache saves a map lookup per frame (issue #14).
	hot [hotIDs]*IDStats
}

// hotIDs is the row cache's size: a power of two above the ids of a busy
// J1939 bus (~70 in the reference logs).
const hotIDs = 256

func hotSlot(key uint32) int { return int(key * 2654435761 >> 24 % hotIDs) }

// Store holds every CAN port.
type Store struct {
	mu       sync.Mutex
	ports    map[string]*Port
	order    []string
	portOver uint64
	limits   ring.Limits
}

// New returns a store whose ports each keep frames within l. Zero fields
// take the defaults; negative ones are refused.
func New(l Limits) (*Store, error) {
	if l.Items < 0 || l.Bytes < 0 {
		return nil, fmt.Errorf("canbus: limits %d frames, %d bytes: want positive values, or 0 for the defaults", l.Items, l.Bytes)
	}
	if l.Items == 0 {
		l.Items = DefaultFrames
	}
	if l.Bytes == 0 {
		l.Bytes = int64(l.Items) * FrameBytes()
	}
	if l.Bytes < FrameBytes() {
		return nil, fmt.Errorf("canbus: byte limit %d holds no frame (a frame costs %d bytes)", l.Bytes, FrameBytes())
	}
	return &Store{ports: map[string]*Port{}, limits: l}, nil
}

// ErrTooManyPorts is returned once MaxPorts ports exist.
var ErrTooManyPorts = errors.New("canbus: too many ports")

// Port returns the named port, creating it with bitrate (0 = default).
func (s *Store) Port(name string, bitrate int) (*Port, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.ports[name]; p != nil {
		return p, nil
	}
	if len(s.ports) >= MaxPorts {
		s.portOver++
		return nil, ErrTooManyPorts
	}
	if bitrate <= 0 {
		bitrate = DefaultBitrate
	}
	r, err := ring.NewFixed[Record](s.limits)
	if err != nil {
		return nil, err
	}
	// A chunk no snapshot showed is refilled instead of left to the
	// collector: no view holds its records (or their FD arrays).
	r.ReuseChunks()
	r.TimeOf(func(r *Record) time.Time { return r.Time })
	p := &Port{name: name, bitrate: bitrate, frames: r, ids: map[uint32]*IDStats{}}
	s.ports[name] = p
	s.order = append(s.order, name)
	return p, nil
}

// Ports returns the ports in creation order.
func (s *Store) Ports() []*Port {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Port, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.ports[n])
	}
	return out
}

// Lookup returns the named port or nil.
func (s *Store) Lookup(name string) *Port {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ports[name]
}

// Add records one classic frame. id carries the Flag bits; data is copied.
func (p *Port) Add(t time.Time, id uint32, data []byte) {
	p.AddFrame(t, id, 0, data)
}

// AddFrame records one frame, classic (flags 0) or CAN FD (flags with
// wire.CANFDFDF); data is copied.
func (p *Port) AddFrame(t time.Time, id uint32, flags uint8, data []byte) {
	r := [1]Record{{Time: t, ID: id}}
	r[0].SetData(flags, data[:min(len(data), wire.MaxCANFDData)])
	p.AddAll(r[:])
}

// AddAll records frames in order, as Add records each, under one lock of
// the ring and one of the port: a consumer adds a hand-off batch at once.
// A port has one writer: the sequence numbers AddAll works out for the
// long FD frames it weighs are those the ring gives.
func (p *Port) AddAll(recs []Record) {
	seq := p.frames.Next()
	p.frames.AppendAll(recs)
	for i := range recs {
		if recs[i].FD != nil {
			// The ring weighs a classic slot at append; the FD array
			// is added here. A ring that has weighed one leaves its
			// uniform fast path, so a classic-only bus keeps it.
			p.frames.Resize(seq+uint64(i), fdDataBytes)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range recs {
		p.count(&recs[i])
	}
	p.settle()
}

// count adds r to the port's counters; the caller holds mu and settles
// the current second's load once it has counted its frames.
func (p *Port) count(r *Record) {
	t, id := r.Time, r.ID
	ext := id&wire.CANEFF != 0
	p.total++
	if p.first.IsZero() {
		p.first = t
	}
	if t.After(p.last) {
		p.last = t
	}
	switch {
	case id&wire.CANERR != 0:
		p.err++
		return
	case id&wire.CANRTR != 0:
		p.rtr++
	}
	if ext {
		p.ext++
	} else {
		p.std++
	}
	var bits uint64
	if r.Flags&wire.CANFDFDF != 0 {
		p.fd++
		bits = uint64(FDFrameBits(ext, int(r.Len)))
	} else {
		bits = uint64(FrameBits(ext, int(r.Len)))
	}
	p.bits += bits
	p.addSecond(t, bits)
	p.addID(r)
}

// addSecond charges a frame to its second of load history. Most frames
// fall in the current second, and one out of order before it is charged
// there too: a Unix second no later than the current one's is all the
// test, and the load is worked out once a batch (settle), not per frame.
func (p *Port) addSecond(t time.Time, bits uint64) {
	if cur := p.cur; cur != nil && t.Unix() <= p.curSec {
		cur.Frames++
		cur.Bits += bits
		return
	}
	p.settle()
	s := Second{Start: t.Truncate(time.Second), Frames: 1, Bits: bits}
	if len(p.seconds) < MaxSeconds {
		p.seconds = append(p.seconds, s)
		p.cur = &p.seconds[len(p.seconds)-1]
	} else {
		p.seconds[p.secStart] = s
		p.cur = &p.seconds[p.secStart]
		p.secStart = (p.secStart + 1) % MaxSeconds
	}
	p.curSec = s.Start.Unix()
}

// settle works out the current second's load from its bits; the caller
// holds mu.
func (p *Port) settle() {
	if p.cur != nil {
		p.cur.Load = float64(p.cur.Bits) / float64(p.bitrate)
	}
}

func (p *Port) addID(r *Record) {
	key := r.ID &^ wire.CANRTR
	h := &p.hot[hotSlot(key)]
	st := *h
	if st == nil || st.ID != key {
		st = p.ids[key]
		if st != nil {
			*h = st
		}
	}
	if st == nil {
		if len(p.ids) >= MaxIDs {
			p.idOver++
			return
		}
		st = &IDStats{ID: key, First: r.Time, Extended: key&wire.CANEFF != 0}
		p.ids[key] = st
		*h = st
	}
	// Byte 0 is the word's top byte. Bytes past the length are not the
	// frame's (a producer's reused record may hold an earlier frame's
	// there): they count as zero, as a shorter frame's missing bytes do.
	data := binary.BigEndian.Uint64(r.Data[:]) & lenMask(min(r.Len, 8))
	if st.Count > 0 {
		st.changed |= binary.BigEndian.Uint64(st.last[:]) ^ data
	}
	// A length the id sent last is in its list already.
	if (st.Count == 0 || r.Len != st.lastLen) && !slices.Contains(st.DLCs, int(r.Len)) && len(st.DLCs) < maxDLCs {
		st.DLCs = append(st.DLCs, int(r.Len))
	}
	if r.Flags&wire.CANFDFDF != 0 {
		st.FD++
		if r.Flags&wire.CANFDBRS != 0 {
			st.BRS++
		}
		if r.Flags&wire.CANFDESI != 0 {
			st.ESI++
		}
	}
	st.Count++
	st.Last = r.Time
	binary.BigEndian.PutUint64(st.last[:], data)
	st.lastLen, st.lastFD = r.Len, r.FD
}

// lenMask keeps the first n of a frame's 8 data bytes, byte 0 on top.
func lenMask(n uint8) uint64 {
	if n >= 8 {
		return ^uint64(0)
	}
	return ^(^uint64(0) >> (8 * n))
}
