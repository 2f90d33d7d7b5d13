package j1939

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// Store bounds. SA-keyed tables are [256] arrays (bounded by the address
// space); maps keyed by a PGN a sender picks have limits and overflow counts.
const (
	MaxPorts = 16
	// MaxPGNs bounds the per-port PGN histogram and latest-value table:
	// real buses carry under 100, the attack logs about 70.
	MaxPGNs = 1024
	// MaxLatest bounds (SA, PGN) pairs whose last payload is kept.
	MaxLatest = 4096
	// MaxLatestBytes bounds the payload bytes of the latest table per
	// port: single frames carry 8 bytes, but a transfer can carry 1785,
	// and 4096 of those would be 7 MB; 256 KiB keeps every PGN of a real
	// bus (a few dozen transfers at most) with room to spare.
	MaxLatestBytes = 256 << 10
	// MaxRequested bounds the distinct requested PGNs counted per port.
	MaxRequested = 512
	// MaxClaimEvents bounds the claim history per port (conflicts show here).
	MaxClaimEvents = 256
	// DefaultSamples bounds the SPN time series across ports.
	DefaultSamples = 50_000
	// DefaultSessions bounds the ended TP sessions kept across ports.
	DefaultSessions = 10_000
)

// Sample is one decoded SPN value in the time series, as its ring keeps
// it: without a pointer (the port, unit and status are numbers in fixed
// tables, the time Unix nanoseconds), so the collector never scans the
// ring and a sample costs 38 bytes of the budget (its 32 and its slot's
// share), where a port string, a time.Time and two strings made it 107
// and the collector's work on every cycle (issue #14).
type Sample struct {
	UnixNano int64   // when the message arrived
	Value    float64 // scaled; 0 unless the status is ok
	Raw      uint32
	SPN      uint32
	SA       uint8
	port     uint8 // index in Store.Ports: ports are only ever added
	unit     uint8 // index in unitNames
	status   uint8 // index in statusNames
	src      uint8 // index in the store's Sources: the definition that decoded it
}

// Time is when the sample's message arrived, in UTC as the drivers
// stamp frames.
func (v Sample) Time() time.Time { return time.Unix(0, v.UnixNano).UTC() }

// Port is the sample's port, from ports as Store.Ports returned them
// (any call after the sample was read: ports are only ever added).
func (v Sample) Port(ports []string) string {
	if int(v.port) < len(ports) {
		return ports[v.port]
	}
	return ""
}

// Decoded is the sample's value with its unit and status spelt out.
func (v Sample) Decoded() Value {
	return Value{SPN: v.SPN, Raw: v.Raw, Value: v.Value, Unit: unitNames[v.unit], Status: statusNames[v.status]}
}

// Limits bound the store's two rings, the SPN time series and the ended
// TP sessions, in items and heap bytes (each item a fixed-size value:
// its ring slot is all it costs). Zero fields take DefaultSamples and
// DefaultSessions and room for that many.
type Limits struct {
	Samples  ring.Limits
	Sessions ring.Limits
}

// SampleBytes and SessionBytes are what one sample and one session
// record cost in the heap.
func SampleBytes() int64  { return int64(ring.SlotBytes[Sample]()) }
func SessionBytes() int64 { return int64(ring.SlotBytes[SessionRecord]()) }

// TableBytes is the most one port's fixed-bound tables hold: ECUs and
// their NAMEs, DM1/DM2 states with a full DTC list each, the PGN,
// request, latest and fault-code maps (latest payloads up to
// MaxLatestBytes), the claim history and MaxOpenSessions open transfers. The memory budget
// takes it as a fixed cost per CAN port.
func TableBytes() int64 {
	ptr := int(unsafe.Sizeof(uintptr(0)))
	ecu := heapsize.Pointers(int(unsafe.Sizeof(ECU{}))) + heapsize.Pointers(int(unsafe.Sizeof(Name{}))) + heapsize.Bytes(16)
	dm := heapsize.Pointers(int(unsafe.Sizeof(DMState{}))) + heapsize.Bytes(MaxDTCs*int(unsafe.Sizeof(DTC{})))
	latest := heapsize.MapEntry(int(unsafe.Sizeof(latestKey{}))+ptr) + heapsize.Pointers(int(unsafe.Sizeof(Latest{})))
	counted := heapsize.MapEntry(4 + 8) // PGN → count
	claims := heapsize.Pointers(MaxClaimEvents*int(unsafe.Sizeof(ClaimEvent{}))) + MaxClaimEvents*heapsize.Bytes(16)
	open := heapsize.MapEntry(int(unsafe.Sizeof(tpKey{}))+ptr) + heapsize.Pointers(int(unsafe.Sizeof(tpSession{})))
	fault := heapsize.MapEntry(int(unsafe.Sizeof(faultKey{}))+ptr) + heapsize.Pointers(int(unsafe.Sizeof(faultSeen{})))
	n := 256*ecu + 2*256*dm + MaxFaultCodes*fault + MaxLatest*latest + MaxLatestBytes + (MaxPGNs+MaxRequested)*counted +
		claims + MaxOpenSessions*open + heapsize.Pointers(int(unsafe.Sizeof(portState{})))
	return int64(n)
}

// SessionRecord is one ended (or still open) TP session of a port.
type SessionRecord struct {
	Port string
	Session
}

// latestKey keys the latest-payload table.
type latestKey struct {
	sa  uint8
	pgn uint32
}

// Latest is the last payload of one PGN from one source.
type Latest struct {
	Time  time.Time
	SA    uint8
	PGN   uint32
	Via   TPKind
	Data  []byte
	Count uint64
}

// ECU is what a port knows of one source address.
type ECU struct {
	SA          uint8
	First, Last time.Time
	Frames      uint64
	Claim       *Name
	ClaimTime   time.Time
	Conflicts   uint64 // claims for this SA with a NAME different from the one held
	CannotClaim bool   // a claim came from the null address with this NAME
}

// DMState is the last DM1 or DM2 from one source.
type DMState struct {
	Time     time.Time
	Via      TPKind
	DM       DM
	Messages uint64
}

// ClaimEvent is one Address Claimed message.
type ClaimEvent struct {
	Time     time.Time
	SA       uint8
	Name     Name
	Conflict bool // the SA was held by a different NAME
}

type portState struct {
	name   string
	index  uint8 // in order (MaxPorts fits)
	dec    *Decoder
	ecus   [256]*ECU
	dm1    [256]*DMState
	dm2    [256]*DMState
	pgns   map[uint32]*uint64
	pgnOv  uint64
	latest map[latestKey]*Latest
	latOv  uint64
	latB   int // payload bytes held by latest, bounded by MaxLatestBytes

	requests  uint64
	requested map[uint32]uint64
	reqOv     uint64

	claims     []ClaimEvent
	claimsDrop uint64
	badClaims  uint64
	badDM      uint64

	faults  map[faultKey]*faultSeen // faults.go
	faultOv uint64

	// hot caches the table entries of recently seen (SA, PGN) pairs: a
	// bus repeats a few dozen of them at 10–100 Hz, and the cache saves
	// three map lookups per message (issue #14).
	hot [hotEntries]hotEntry
}

// hotEntries is the cache's size: a power of two above the (SA, PGN)
// pairs of a busy truck bus (~70 in the reference logs).
const hotEntries = 256

type hotEntry struct {
	key latestKey
	// fields are what the catalogue says the PGN carries (a DBC loaded
	// since changes them); unsetFields until looked up, nil for an empty
	// slot. A pointer where a set flag was, so the entry, and the
	// budget's TableBytes, stay the size they were.
	fields *fieldSet
	count  *uint64 // the PGN's count in pgns; nil when the table was full
	latest *Latest // nil when the latest table was full
}

// fieldSet is a PGN's fields as cat has them.
type fieldSet struct {
	cat    *Catalogue
	fields []field
}

// unsetFields marks an entry whose fields are still to be looked up: no
// catalogue is nil.
var unsetFields = &fieldSet{}

// slot is a Fibonacci hash of the key, its top 8 bits: PGNs a few apart
// from one source (ETC1 61442 and ETC2 61445) must not share a slot, as
// they did when the low bits were shifted out, refilling both entries
// from the maps on one frame in twelve of a truck's.
func (k latestKey) slot() int { return int((k.pgn<<8 | uint32(k.sa)) * 2654435761 >> 24 % hotEntries) }

// Store is the J1939 view of every CAN port. It is safe for concurrent
// use: one writer per port and any number of readers.
type Store struct {
	mu       sync.Mutex
	ports    map[string]*portState
	order    []string
	portOver uint64
	samples  *ring.Ring[Sample]
	sessions *ring.Ring[SessionRecord]
	dm       DM                        // scratch for Feed
	cat      atomic.Pointer[Catalogue] // catalogue_store.go
	// fields holds fieldsCat's parameters of the PGNs seen, as fields;
	// noFields stands for every PGN fieldsCat has none for.
	fields    map[uint32]*fieldSet
	fieldsCat *Catalogue
	noFields  *fieldSet
	// sources names the definitions samples were decoded with, by their
	// src: "builtin" first, then each DBC source as a catalogue brings
	// it (MaxSources).
	sources []string
	// pending gathers the samples of a batch of frames, in order, for
	// one append to the ring (flush) instead of one a message.
	pending []Sample
}

// field is one parameter as a message's samples read it, worked out once
// a PGN and catalogue (fieldsOf): a little-endian parameter within one
// 8-byte word is a load, a shift and a mask; any other goes through
// extract.
type field struct {
	p             *Param
	scale, offset float64
	mask          uint64
	spn           uint32
	bits          int
	start         int  // the parameter's start bit
	first, last   int  // its first and last byte
	word          bool // it lies within the 8 bytes from first
	unit          uint8
	src           uint8
}

func newField(p *Param, src uint8) field {
	f := field{p: p, scale: p.Scale, offset: p.Offset, spn: p.SPN, bits: p.Bits, unit: unitCode(p.Unit), src: src}
	if !p.BigEndian && p.StartBit >= 0 && p.Bits >= 1 && p.StartBit%8+p.Bits <= 64 {
		f.start, f.first, f.last, f.word = p.StartBit, p.StartBit/8, (p.StartBit+p.Bits-1)/8, true
		f.mask = 1<<p.Bits - 1
	}
	return f
}

// decode is p.decodeSample(data, v) with the unit set. The word is read
// from the parameter's first byte, or from 8 bytes before the payload's
// end when fewer follow: the parameter lies within it either way.
func (f *field) decode(data []byte, v *Sample) {
	if !f.word || len(data) < 8 || f.last >= len(data) {
		f.p.decodeSample(data, v)
		v.unit, v.src = f.unit, f.src
		return
	}
	base := min(f.first, len(data)-8)
	raw := binary.LittleEndian.Uint64(data[base:]) >> (f.start - base*8) & f.mask
	v.SPN, v.Raw, v.unit, v.src = f.spn, uint32(raw), f.unit, f.src
	v.status = rangeCode(raw, f.bits)
	v.Value = 0
	if v.status == statusOK {
		v.Value = float64(raw)*f.scale + f.offset
	}
}

// fieldsOf is what cat says pgn carries, as fields; the caller holds mu.
// Each PGN's fields are worked out once a catalogue, and only a PGN the
// catalogue has is remembered, so the table is bounded by it.
func (s *Store) fieldsOf(cat *Catalogue, pgn uint32) *fieldSet {
	if cat != s.fieldsCat {
		s.fields, s.fieldsCat, s.noFields = map[uint32]*fieldSet{}, cat, &fieldSet{cat: cat}
	}
	if fs, ok := s.fields[pgn]; ok {
		return fs
	}
	params := cat.Of(pgn)
	if len(params) == 0 {
		return s.noFields
	}
	fs := &fieldSet{cat: cat, fields: make([]field, len(params))}
	for i := range params {
		fs.fields[i] = newField(&params[i], s.sourceIndex(params[i].Source))
	}
	s.fields[pgn] = fs
	return fs
}

// pendingSamples is how many samples a batch gathers before they go to
// the ring: 32 KiB of scratch, more only for one message of more
// parameters.
const pendingSamples = 1024

// flush hands the gathered samples to the ring under one lock; the
// caller holds mu, and does so before unlocking it.
func (s *Store) flush() {
	if len(s.pending) > 0 {
		s.samples.AppendAll(s.pending)
		s.pending = s.pending[:0]
	}
}

// New returns an empty store bounded by l.
func New(l Limits) (*Store, error) {
	samples, err := newRing("samples", l.Samples, DefaultSamples, SampleBytes(), func(v *Sample) time.Time { return v.Time() })
	if err != nil {
		return nil, err
	}
	// ~1.9 samples a frame: a new chunk each 256 of them was most of what
	// ingest allocated, and so most of the collector's work (issue #14).
	samples.ReuseChunks()
	sessions, err := newRing("sessions", l.Sessions, DefaultSessions, SessionBytes(), func(v *SessionRecord) time.Time { return v.Start })
	if err != nil {
		return nil, err
	}
	return &Store{ports: map[string]*portState{}, samples: samples, sessions: sessions}, nil
}

// newRing applies the defaults to l and builds one of the store's rings.
func newRing[T any](what string, l ring.Limits, items int, itemBytes int64, timeOf func(*T) time.Time) (*ring.Ring[T], error) {
	if l.Items < 0 || l.Bytes < 0 {
		return nil, fmt.Errorf("j1939: %s limits %d items, %d bytes: want positive values, or 0 for the defaults", what, l.Items, l.Bytes)
	}
	if l.Items == 0 {
		l.Items = items
	}
	if l.Bytes == 0 {
		l.Bytes = int64(l.Items) * itemBytes
	}
	if l.Bytes < itemBytes {
		return nil, fmt.Errorf("j1939: %s byte limit %d holds no item (one costs %d bytes)", what, l.Bytes, itemBytes)
	}
	r, err := ring.NewFixed[T](l)
	if err != nil {
		return nil, fmt.Errorf("j1939: %s: %w", what, err)
	}
	r.TimeOf(timeOf)
	return r, nil
}

// ErrTooManyPorts is returned by Feed once MaxPorts ports exist.
var ErrTooManyPorts = errors.New("j1939: too many ports")

func (s *Store) port(name string) *portState {
	if p := s.ports[name]; p != nil {
		return p
	}
	if len(s.ports) >= MaxPorts {
		s.portOver++
		return nil
	}
	p := &portState{name: name, index: uint8(len(s.order)), dec: NewDecoder(), pgns: map[uint32]*uint64{},
		latest: map[latestKey]*Latest{}, requested: map[uint32]uint64{},
		faults: map[faultKey]*faultSeen{}}
	p.dec.OnMessage = func(m *Message) { s.message(p, m) }
	p.dec.OnSession = func(ss Session) { s.sessions.Append(SessionRecord{Port: name, Session: ss}) }
	s.ports[name] = p
	s.order = append(s.order, name)
	return p
}

// Feed decodes one frame of port. id is the identifier without flag bits;
// ext says 29-bit. Remote and error frames must not be fed.
func (s *Store) Feed(port string, t time.Time, id uint32, ext bool, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.port(port)
	if p == nil {
		return ErrTooManyPorts
	}
	p.dec.Feed(t, id, ext, data)
	s.flush()
	return nil
}

// Feeder feeds one port without looking it up per frame.
type Feeder struct {
	s *Store
	p *portState
}

// Feeder returns the feeder of port, creating the port; ErrTooManyPorts
// once MaxPorts ports exist.
func (s *Store) Feeder(port string) (*Feeder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.port(port)
	if p == nil {
		return nil, ErrTooManyPorts
	}
	return &Feeder{s: s, p: p}, nil
}

// Feed is Store.Feed for the feeder's port.
func (f *Feeder) Feed(t time.Time, id uint32, ext bool, data []byte) {
	f.s.mu.Lock()
	f.p.dec.Feed(t, id, ext, data)
	f.s.flush()
	f.s.mu.Unlock()
}

// FeedAll feeds the data frames of recs, in order, under one lock: a
// consumer feeds a hand-off batch at once. Their ids carry the wire.CAN*
// flags; remote and error frames are skipped.
func (f *Feeder) FeedAll(recs []canbus.Record) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	for i := range recs {
		r := &recs[i]
		if r.ID&(wire.CANRTR|wire.CANERR) == 0 {
			f.p.dec.Feed(r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
		}
	}
	f.s.flush()
}

// entry returns the cached table entries of k, filling the cache slot on
// a miss; an entry the bounds refused stays nil and is looked up again.
// TP.CM and TP.DT keep no latest payload, so theirs is whole without one
// (looked up again, it cost two map look-ups a transport frame).
func (p *portState) entry(k latestKey) *hotEntry {
	h := &p.hot[k.slot()]
	if h.fields != nil && h.key == k && h.count != nil && (h.latest != nil || k.pgn == PGNTPCM || k.pgn == PGNTPDT) {
		return h
	}
	*h = hotEntry{key: k, fields: unsetFields, count: p.pgns[k.pgn], latest: p.latest[k]}
	return h
}

// message is called under s.mu for every decoded message.
func (s *Store) message(p *portState, m *Message) {
	sa := m.ID.SA
	k := latestKey{sa, m.ID.PGN}
	h := p.entry(k)
	if m.Via == ViaDirect {
		e := p.ecus[sa]
		if e == nil {
			e = &ECU{SA: sa, First: m.Time}
			p.ecus[sa] = e
		}
		e.Frames++
		e.Last = m.Time
	}
	// A C-PG counts under its PGN as the frame it stands for would: the
	// Multi-PG frame that carried it counted as the ECU's frame.
	if m.Via == ViaDirect || m.Via == ViaMultiPG {
		if h.count == nil && len(p.pgns) < MaxPGNs {
			h.count = new(uint64)
			p.pgns[m.ID.PGN] = h.count
		}
		if h.count != nil {
			*h.count++
		} else {
			p.pgnOv++
		}
	}
	switch m.ID.PGN {
	case PGNTPCM, PGNTPDT:
		return // their payloads live in the sessions
	case PGNRequest:
		p.requests++
		if pgn, ok := ParseRequest(m.Data); ok {
			if _, ok := p.requested[pgn]; ok || len(p.requested) < MaxRequested {
				p.requested[pgn]++
			} else {
				p.reqOv++
			}
		}
	case PGNAddressClaim:
		s.claim(p, m)
	case PGNDM1, PGNDM2:
		tbl, kind := &p.dm1, uint8(0)
		if m.ID.PGN == PGNDM2 {
			tbl, kind = &p.dm2, 1
		}
		st := tbl[sa]
		if st == nil {
			st = &DMState{}
			tbl[sa] = st
		}
		if !ParseDM(m.Data, &s.dm) {
			p.badDM++
		}
		st.Time, st.Via = m.Time, m.Via
		st.DM = DM{Lamps: s.dm.Lamps, DTCs: slices.Clone(s.dm.DTCs), NoActive: s.dm.NoActive}
		st.Messages++
		p.seeFaults(kind, sa, st, m.Time)
	}
	l := h.latest
	if l == nil {
		if len(p.latest) >= MaxLatest || p.latB+len(m.Data) > MaxLatestBytes {
			p.latOv++
			return
		}
		l = &Latest{SA: sa, PGN: m.ID.PGN}
		p.latest[k] = l
		h.latest = l
	}
	if grow := len(m.Data) - cap(l.Data); grow > 0 {
		if p.latB+grow > MaxLatestBytes {
			p.latOv++ // the payload outgrew the table: the older value stays
			return
		}
		l.Data = make([]byte, 0, len(m.Data))
		p.latB += grow
	}
	l.Time, l.Via, l.Count = m.Time, m.Via, l.Count+1
	if len(m.Data) == 8 {
		// A single frame's payload, moved as one word rather than
		// through a memmove call per message.
		l.Data = l.Data[:8]
		*(*[8]byte)(l.Data) = *(*[8]byte)(m.Data)
	} else {
		l.Data = append(l.Data[:0], m.Data...)
	}
	if cat := s.Catalogue(); h.fields.cat != cat {
		h.fields = s.fieldsOf(cat, m.ID.PGN)
	}
	if fields := h.fields.fields; len(fields) > 0 {
		if len(s.pending)+len(fields) > pendingSamples {
			s.flush()
		}
		at := m.Time.UnixNano()
		n := len(s.pending)
		s.pending = slices.Grow(s.pending, len(fields))[:n+len(fields)]
		for i := range fields {
			w := &s.pending[n+i]
			w.UnixNano, w.SA, w.port = at, sa, p.index
			fields[i].decode(m.Data, w)
		}
	}
}

func (s *Store) claim(p *portState, m *Message) {
	n, ok := ParseName(m.Data)
	if !ok {
		p.badClaims++
		return
	}
	ev := ClaimEvent{Time: m.Time, SA: m.ID.SA, Name: n}
	if e := p.ecus[m.ID.SA]; e != nil {
		if m.ID.SA == AddrNull {
			e.CannotClaim = true
		}
		if e.Claim != nil && e.Claim.Raw != n.Raw {
			e.Conflicts++
			ev.Conflict = true
		}
		nn := n
		e.Claim, e.ClaimTime = &nn, m.Time
	}
	if len(p.claims) >= MaxClaimEvents {
		// Keep the newest: drop the oldest half at once (amortised).
		drop := MaxClaimEvents / 2
		p.claims = append(p.claims[:0], p.claims[drop:]...)
		p.claimsDrop += uint64(drop)
	}
	p.claims = append(p.claims, ev)
}

// Ports lists the port names in the order first seen.
func (s *Store) Ports() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// Samples returns a consistent view of the SPN time series.
func (s *Store) Samples() ring.Snapshot[Sample] { return s.samples.Snapshot() }

// SampleStats and SessionStats report the two rings: items and heap
// bytes kept, bounds, evictions.
func (s *Store) SampleStats() ring.Stats  { return s.samples.Stats() }
func (s *Store) SessionStats() ring.Stats { return s.sessions.Stats() }

// Sessions returns a consistent view of the ended TP sessions.
func (s *Store) Sessions() ring.Snapshot[SessionRecord] { return s.sessions.Snapshot() }

// OpenSessions returns the transfers still running on every port.
func (s *Store) OpenSessions() []SessionRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SessionRecord
	for _, n := range s.order {
		s.ports[n].dec.OpenSessions(func(ss Session) { out = append(out, SessionRecord{Port: n, Session: ss}) })
	}
	return out
}

// String is for debugging.
func (s *Store) String() string { return fmt.Sprintf("j1939.Store{%d ports}", len(s.Ports())) }
