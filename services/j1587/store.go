package j1587

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"fieldtap/drivers/wire"
	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// Store defaults: minutes of a busy J1708 bus (about 1 000 messages a
// second at most) within a small share of the board's memory.
const (
	DefaultMaxMessages = 100_000
	// MaxPorts bounds the ports of one store; a board has one or two
	// J1708 lines.
	MaxPorts = 16
)

// Limits bound each port's message ring, in messages and heap bytes (a
// Record is a fixed-size value: its ring slot is all it costs). Zero
// fields take DefaultMaxMessages and room for that many.
type Limits = ring.Limits

// MessageBytes is what one stored message costs in the heap.
func MessageBytes() int64 { return int64(ring.SlotBytes[Record]()) }

// TableBytes is the most one port's fixed-bound tables hold: maxLatest
// (MID, PID) values with up to maxMultiBytes of data each, maxFaults
// fault entries and maxAssemblies reassembly buffers. The memory budget
// takes it as a fixed cost per J1708 port.
func TableBytes() int64 {
	latest := heapsize.MapEntry(int(unsafe.Sizeof(latestKey(0))+unsafe.Sizeof(latest{}))) + heapsize.Bytes(maxMultiBytes)
	fault := heapsize.MapEntry(int(unsafe.Sizeof(faultKey{})+unsafe.Sizeof(&faultEntry{}))) + heapsize.Pointers(int(unsafe.Sizeof(faultEntry{})))
	multi := heapsize.MapEntry(int(unsafe.Sizeof(latestKey(0))+unsafe.Sizeof(&assembly{}))) + heapsize.Bytes(int(unsafe.Sizeof(assembly{})))
	return int64(maxLatest*latest+maxFaults*fault+maxAssemblies*multi) + int64(heapsize.Pointers(int(unsafe.Sizeof(Port{}))))
}

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

// Record is one stored message.
type Record struct {
	// Seq numbers the message among every port of its store, so a page
	// over all ports has one order and one cursor.
	Seq    uint64
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
	Latest         uint64 // (MID, PID) pairs not tracked
	Faults         uint64 // fault entries not tracked
	Assemblies     uint64 // PID 192 parameters not reassembled
	SectionErrors  uint64 // sections out of order or too long
	FaultTableErrs uint64 // PID 194 tables with a partial entry
}

// Store holds the J1708/J1587 traffic of every J1708 port, one Port
// each, as canbus does for CAN. It is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	limits   Limits
	ports    map[string]*Port
	order    []string
	portOver uint64
	seq      atomic.Uint64 // the next Record.Seq, shared by the ports
}

// ErrTooManyPorts is returned once MaxPorts ports exist.
var ErrTooManyPorts = errors.New("j1587: too many ports")

// New returns an empty store whose ports each keep messages within l.
// Zero fields take the defaults; negative ones are refused.
func New(l Limits) (*Store, error) {
	if l.Items < 0 || l.Bytes < 0 {
		return nil, fmt.Errorf("j1587: limits %d messages, %d bytes: want positive values, or 0 for the defaults", l.Items, l.Bytes)
	}
	if l.Items == 0 {
		l.Items = DefaultMaxMessages
	}
	if l.Bytes == 0 {
		l.Bytes = int64(l.Items) * MessageBytes()
	}
	if l.Bytes < MessageBytes() {
		return nil, fmt.Errorf("j1587: byte limit %d holds no message (one costs %d bytes)", l.Bytes, MessageBytes())
	}
	return &Store{limits: l, ports: map[string]*Port{}}, nil
}

// Port returns the named port, creating it on first use.
func (st *Store) Port(name string) (*Port, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if p := st.ports[name]; p != nil {
		return p, nil
	}
	if len(st.ports) >= MaxPorts {
		st.portOver++
		return nil, ErrTooManyPorts
	}
	r, err := ring.NewFixed[Record](st.limits)
	if err != nil {
		return nil, fmt.Errorf("j1587 port %s: %w", name, err)
	}
	r.TimeOf(func(r *Record) time.Time { return r.Time })
	p := &Port{
		name:   name,
		seq:    &st.seq,
		msgs:   r,
		latest: make(map[latestKey]latest),
		faults: make(map[faultKey]*faultEntry),
		multi:  make(map[latestKey]*assembly),
	}
	st.ports[name] = p
	st.order = append(st.order, name)
	return p, nil
}

// Ports returns the ports in creation order.
func (st *Store) Ports() []*Port {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]*Port, 0, len(st.order))
	for _, n := range st.order {
		out = append(out, st.ports[n])
	}
	return out
}

// Lookup returns the named port or nil.
func (st *Store) Lookup(name string) *Port {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ports[name]
}

// Port is one J1708 line's traffic. One goroutine adds; any may read.
type Port struct {
	name string
	seq  *atomic.Uint64
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

// Name is the port's name.
func (s *Port) Name() string { return s.name }

// Add stores one message (MID through checksum) seen at t; msg is copied.
// j2497 marks a trailer power-line message. A message longer than
// wire.MaxJ1708Message keeps its first wire.MaxJ1708Message bytes and is counted bad_length.
func (s *Port) Add(t time.Time, msg []byte, j2497 bool) {
	r := Record{Time: t, J2497: j2497}
	r.Len = uint8(copy(r.Bytes[:], msg))

	s.mu.Lock()
	// Taken under the port's lock and appended in the same order, so a
	// port's ring is sorted by Seq.
	r.Seq = s.seq.Add(1) - 1
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
	s.msgs.Append(r)
	s.mu.Unlock()
}

// param records one decoded parameter; the caller holds mu.
func (s *Port) param(t time.Time, mid byte, p Param, j2497 bool) {
	s.setLatest(t, mid, p, j2497)
	switch p.PID {
	case PIDFaults:
		s.faultTable(t, mid, p.Data)
	case PIDMultisection:
		s.section(t, mid, p.Data, j2497)
	}
}

func (s *Port) setLatest(t time.Time, mid byte, p Param, j2497 bool) {
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
func (s *Port) faultTable(t time.Time, mid byte, data []byte) {
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
func (s *Port) section(t time.Time, mid byte, data []byte, j2497 bool) {
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
func (s *Port) Revision() uint64 { return s.msgs.Revision() }
