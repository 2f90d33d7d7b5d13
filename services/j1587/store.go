package j1587

import (
	"sync"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/ring"
)

// Store defaults: minutes of a busy J1708 bus (about 1 000 messages a
// second at most) within a small share of the board's memory.
const (
	DefaultMaxMessages = 100_000
	DefaultMaxBytes    = DefaultMaxMessages * recordSize
)

// Bounds on tables keyed by what senders put on the bus; an entry beyond a
// bound is not kept and is counted in Overflow.
const (
	// maxLatest: (MID, PID) pairs. 128 J1587 MIDs rarely send more than a
	// few dozen PIDs each.
	maxLatest = 4096
	// maxFaults: distinct (MID, code, SID/PID, FMI) entries.
	maxFaults = 1024
	// maxAssemblies: PID 192 parameters being reassembled at once.
	maxAssemblies = 64
	// maxMultiBytes: one reassembled parameter; J1587 sections carry at
	// most 15 bytes each and a few sections make a VIN or component id.
	maxMultiBytes = 256
)

// recordSize approximates a Record's memory, for the ring's byte limit.
const recordSize = 64

// Record is one stored message.
type Record struct {
	Time   time.Time
	Len    uint8
	Bytes  [wire.MaxJ1708Message]byte
	J2497  bool
	Status MsgStatus
}

// Msg returns the message bytes (MID through checksum); it aliases r.
func (r *Record) Msg() []byte { return r.Bytes[:r.Len] }

// MsgStatus is the outcome of decoding one message.
type MsgStatus uint8

// Message statuses, one per Decode error.
const (
	MsgOK MsgStatus = iota
	MsgLength
	MsgChecksum
	MsgNotJ1587 // a valid J1708 message with a reserved (MID < 128) layout
	MsgTruncated
	MsgPage
)

var msgStatusNames = [...]string{"ok", "bad_length", "bad_checksum", "j1708_reserved_mid", "truncated_parameter", "bad_page_extension"}

func (s MsgStatus) String() string { return msgStatusNames[s] }

func statusOf(err error) MsgStatus {
	switch err {
	case nil:
		return MsgOK
	case ErrLength:
		return MsgLength
	case ErrChecksum:
		return MsgChecksum
	case ErrNotJ1587:
		return MsgNotJ1587
	case ErrPage:
		return MsgPage
	default:
		return MsgTruncated
	}
}

type midStats struct {
	messages, checksumBad, decodeErrors, j2497 uint64
	first, last                                time.Time
	pids                                       int // distinct PIDs in latest
	faultTable                                 time.Time
}

type latestKey uint32 // MID<<16 | PID

func keyOf(mid byte, pid uint16) latestKey { return latestKey(mid)<<16 | latestKey(pid) }

type latest struct {
	time     time.Time
	count    uint64
	data     []byte
	j2497    bool
	min, max float64
	numbers  uint64 // values with a number, the population of min/max
}

type faultKey struct {
	mid   byte
	code  uint16
	isSID bool
	fmi   uint8
}

type faultEntry struct {
	Fault
	first, last time.Time
	reports     uint64
	inLatest    bool // listed in the MID's most recent PID 194 table
}

type assembly struct {
	next, last uint8
	n          int
	buf        [maxMultiBytes]byte
}

// Overflow counts what the bounds refused.
type Overflow struct {
	Latest         uint64 `json:"latest"`             // (MID, PID) pairs not tracked
	Faults         uint64 `json:"faults"`             // fault entries not tracked
	Assemblies     uint64 `json:"assemblies"`         // PID 192 parameters not reassembled
	SectionErrors  uint64 `json:"section_errors"`     // sections out of order or too long
	FaultTableErrs uint64 `json:"fault_table_errors"` // PID 194 tables with a partial entry
}

// Store holds J1708/J1587 traffic. It is safe for concurrent use.
type Store struct {
	msgs *ring.Ring[Record]

	mu       sync.Mutex
	dec      Decoder
	faultBuf [MaxFaultsPerMessage]Fault
	mids     [256]midStats // a MID is one byte: naturally bounded
	latest   map[latestKey]latest
	faults   map[faultKey]*faultEntry
	multi    map[latestKey]*assembly
	byStatus [len(msgStatusNames)]uint64
	j2497    uint64
	overflow Overflow
}

// New returns an empty store whose message ring is bounded by l.
func New(l ring.Limits) (*Store, error) {
	r, err := ring.New(l, func(Record) int { return recordSize })
	if err != nil {
		return nil, err
	}
	return &Store{
		msgs:   r,
		latest: make(map[latestKey]latest),
		faults: make(map[faultKey]*faultEntry),
		multi:  make(map[latestKey]*assembly),
	}, nil
}

// Add stores one message (MID through checksum) seen at t; msg is copied.
// j2497 marks a trailer power-line message. A message longer than
// wire.MaxJ1708Message keeps its first wire.MaxJ1708Message bytes and is counted bad_length.
func (s *Store) Add(t time.Time, msg []byte, j2497 bool) {
	r := Record{Time: t, J2497: j2497}
	r.Len = uint8(copy(r.Bytes[:], msg))

	s.mu.Lock()
	err := s.dec.Decode(msg)
	st := statusOf(err)
	r.Status = st
	s.byStatus[st]++
	if j2497 {
		s.j2497++
	}
	if len(msg) > 0 {
		m := &s.mids[msg[0]]
		m.messages++
		if j2497 {
			m.j2497++
		}
		if m.first.IsZero() || t.Before(m.first) {
			m.first = t
		}
		if t.After(m.last) {
			m.last = t
		}
		switch st {
		case MsgOK, MsgNotJ1587:
		case MsgChecksum, MsgLength:
			m.checksumBad++
		default:
			m.decodeErrors++
		}
	}
	if st == MsgOK {
		for _, p := range s.dec.Params {
			s.param(t, s.dec.MID, p, j2497)
		}
	}
	s.mu.Unlock()
	s.msgs.Append(r)
}

// param records one decoded parameter; the caller holds mu.
func (s *Store) param(t time.Time, mid byte, p Param, j2497 bool) {
	s.setLatest(t, mid, p, j2497)
	switch p.PID {
	case PIDFaults:
		s.faultTable(t, mid, p.Data)
	case PIDMultisection:
		s.section(t, mid, p.Data, j2497)
	}
}

func (s *Store) setLatest(t time.Time, mid byte, p Param, j2497 bool) {
	k := keyOf(mid, p.PID)
	l, ok := s.latest[k]
	if !ok {
		if len(s.latest) >= maxLatest {
			s.overflow.Latest++
			return
		}
		s.mids[mid].pids++
	}
	l.time, l.j2497 = t, j2497
	l.count++
	l.data = append(l.data[:0], p.Data...)
	if v := Interpret(p); v.Status == StatusOK && v.Def.Kind == KindNumber {
		if l.numbers == 0 || v.Number < l.min {
			l.min = v.Number
		}
		if l.numbers == 0 || v.Number > l.max {
			l.max = v.Number
		}
		l.numbers++
	}
	s.latest[k] = l
}

// faultTable applies one PID 194 table: entries listed are updated, every
// other entry of the MID is marked as no longer listed.
func (s *Store) faultTable(t time.Time, mid byte, data []byte) {
	n, err := ParseFaults(data, &s.faultBuf)
	if err != nil {
		s.overflow.FaultTableErrs++
	}
	s.mids[mid].faultTable = t
	for k, e := range s.faults {
		if k.mid == mid {
			e.inLatest = false
		}
	}
	for _, f := range s.faultBuf[:n] {
		k := faultKey{mid: mid, code: f.Code, isSID: f.IsSID, fmi: f.FMI}
		e, ok := s.faults[k]
		if !ok {
			if len(s.faults) >= maxFaults {
				s.overflow.Faults++
				continue
			}
			e = &faultEntry{first: t}
			s.faults[k] = e
		}
		e.Fault, e.last, e.inLatest = f, t, true
		e.reports++
	}
}

// section adds one PID 192 section; the completed parameter becomes the
// latest value of the sectioned PID.
func (s *Store) section(t time.Time, mid byte, data []byte, j2497 bool) {
	sec, err := ParseSection(data)
	if err != nil {
		s.overflow.SectionErrors++
		return
	}
	k := keyOf(mid, sec.PID)
	a, ok := s.multi[k]
	if sec.Index == 0 {
		if !ok {
			if len(s.multi) >= maxAssemblies {
				s.overflow.Assemblies++
				return
			}
			a = new(assembly)
			s.multi[k] = a
		}
		a.next, a.last, a.n = 0, sec.Last, 0
	} else if !ok || sec.Index != a.next || sec.Last != a.last {
		s.overflow.SectionErrors++
		return
	}
	if a.n+len(sec.Data) > len(a.buf) {
		s.overflow.SectionErrors++
		delete(s.multi, k)
		return
	}
	a.n += copy(a.buf[a.n:], sec.Data)
	a.next++
	if sec.Index < sec.Last {
		return
	}
	delete(s.multi, k)
	v := a.buf[:a.n]
	if sec.PID >= firstVariable && sec.PID != pidRestOfMsg {
		// The first section carried the parameter's own length byte.
		if len(v) == 0 || int(v[0]) > len(v)-1 {
			s.overflow.SectionErrors++
			return
		}
		v = v[1 : 1+int(v[0])]
	}
	if sec.PID == PIDMultisection {
		s.overflow.SectionErrors++ // a multisection of a multisection: refused
		return
	}
	s.param(t, mid, Param{PID: sec.PID, Data: v}, j2497)
}

// Revision changes whenever a message is added.
func (s *Store) Revision() uint64 { return s.msgs.Revision() }
