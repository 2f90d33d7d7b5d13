package isotp

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// Store defaults.
const (
	// DefaultTransactions bounds the transactions kept across ports: an
	// hour of a workshop session is a few hundred exchanges, and at about
	// transactionBytes each 2 000 stay near 3 MB, a small share of a 40 MB
	// board. A reflash (thousands of TransferData blocks) evicts the oldest.
	DefaultTransactions = 2_000
	// DefaultIncomplete bounds the incomplete transfers kept.
	DefaultIncomplete = 1_000
	// DefaultPorts bounds the ports (a board has a few CAN buses).
	DefaultPorts = 16
	// transactionBytes and incompleteBytes are what one record costs in
	// the rings' byte accounting: a request and one answer with their hex
	// at its cap, the DIDs of a multi-DID read at theirs (a string header
	// and "0xF190" in an 8-byte allocation each), and the rest of the
	// record.
	transactionBytes = 1024 + 2*MaxShownBytes + MaxDIDs*(16+8)
	incompleteBytes  = 160
)

// Limits bound a Store; zero fields take the defaults.
type Limits struct {
	Transactions int
	Incomplete   int
	Ports        int
	// Channels bounds each port's ISO-TP channels (Options.MaxChannels).
	Channels int
}

// Record is one transaction a Store kept.
type Record struct {
	Port string
	Transaction
}

// IncompleteRecord is one incomplete transfer a Store kept.
type IncompleteRecord struct {
	Port string
	IncompleteRow
}

// PortStatus is one port's live counters.
type PortStatus struct {
	Port        string
	Frames      uint64 // every frame fed, the port's frame numbers run 0..frames-1
	Transport   TransportSummary
	UDS         TraceCounters
	Outstanding int
	// Held counts ended transactions held until their channel is seen in
	// an answered exchange.
	Held int
	// RejectedChannels counts the channels not taken for diagnostic ones,
	// by reason; Rejections lists them.
	RejectedChannels map[string]uint64
	Rejections       []Rejection
}

type storePort struct {
	name   string
	tr     *Tracer
	frames uint64
}

// Store keeps the UDS transactions and incomplete transfers of every CAN
// port as they happen, so a session outlives the frame ring. Safe for
// concurrent use: one writer per port, any number of readers.
type Store struct {
	mu         sync.Mutex
	limits     Limits
	ports      map[string]*storePort
	order      []string
	portOver   uint64
	txs        *ring.Ring[Record]
	incomplete *ring.Ring[IncompleteRecord]
}

// ErrTooManyPorts is returned by Feed once Limits.Ports ports exist.
var ErrTooManyPorts = errors.New("isotp: too many ports")

// New checks l once and returns an empty store.
func New(l Limits) (*Store, error) {
	if l.Transactions == 0 {
		l.Transactions = DefaultTransactions
	}
	if l.Incomplete == 0 {
		l.Incomplete = DefaultIncomplete
	}
	if l.Ports == 0 {
		l.Ports = DefaultPorts
	}
	if l.Channels == 0 {
		l.Channels = DefaultMaxChannels
	}
	if l.Transactions < 1 || l.Incomplete < 1 || l.Ports < 1 || l.Channels < 1 || l.Channels > MaxChannels {
		return nil, fmt.Errorf("isotp: limits %+v: every bound must be positive, channels at most %d", l, MaxChannels)
	}
	txs, err := ring.New[Record](ring.Limits{Items: l.Transactions, Bytes: int64(l.Transactions) * txCost()},
		func(Record) int { return transactionBytes })
	if err != nil {
		return nil, err
	}
	inc, err := ring.New[IncompleteRecord](ring.Limits{Items: l.Incomplete, Bytes: int64(l.Incomplete) * incCost()},
		func(IncompleteRecord) int { return incompleteBytes })
	if err != nil {
		return nil, err
	}
	return &Store{limits: l, ports: map[string]*storePort{}, txs: txs, incomplete: inc}, nil
}

func (s *Store) port(name string) (*storePort, error) {
	if p := s.ports[name]; p != nil {
		return p, nil
	}
	if len(s.ports) >= s.limits.Ports {
		s.portOver++
		return nil, ErrTooManyPorts
	}
	tr, err := NewTracer(Options{MaxChannels: s.limits.Channels})
	if err != nil {
		return nil, err
	}
	p := &storePort{name: name, tr: tr}
	tr.OnTransaction = func(tx *Transaction) { s.txs.Append(Record{Port: name, Transaction: *tx}) }
	tr.Observer().OnIncomplete = func(in Incomplete) {
		s.incomplete.Append(IncompleteRecord{Port: name, IncompleteRow: incompleteRow(in)})
	}
	s.ports[name] = p
	s.order = append(s.order, name)
	return p, nil
}

// Feed reads every frame of port, in the order the port's frame ring
// stores them (remote and error frames included: they are counted, not
// read), so each frame's number is its ring sequence number. id carries
// the wire.CAN* flags.
func (s *Store) Feed(port string, t time.Time, id uint32, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.port(port)
	if err != nil {
		return err
	}
	p.feed(t, id, data)
	return nil
}

// FeedAll is Feed for each of recs, in order, under one lock: a consumer
// feeds a hand-off batch at once.
func (s *Store) FeedAll(port string, recs []canbus.Record) error {
	if len(recs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.port(port)
	if errors.Is(err, ErrTooManyPorts) {
		s.portOver += uint64(len(recs) - 1) // port counted the first
	}
	if err != nil {
		return err
	}
	for i := range recs {
		r := &recs[i]
		// With no request waiting on time, a frame no channel reads
		// only takes its number (most of a J1939 bus).
		if len(p.tr.open) == 0 && p.tr.ob.ignores(r.ID) {
			p.frames++
			continue
		}
		p.feed(r.Time, r.ID, r.Payload())
	}
	return nil
}

// feed numbers one frame and reads it; the caller holds the store's lock.
func (p *storePort) feed(t time.Time, id uint32, data []byte) {
	seq := p.frames
	p.frames++
	if id&(wire.CANRTR|wire.CANERR) == 0 {
		p.tr.Feed(seq, t, id, data)
	}
}

// Transactions returns a consistent view of the kept transactions,
// oldest first.
func (s *Store) Transactions() ring.Snapshot[Record] { return s.txs.Snapshot() }

// Incomplete returns a consistent view of the kept incomplete transfers.
func (s *Store) Incomplete() ring.Snapshot[IncompleteRecord] { return s.incomplete.Snapshot() }

// StoreStatus is the whole store's state.
type StoreStatus struct {
	Ports []PortStatus
	// PortOverflow counts frames of ports refused at Limits.Ports.
	PortOverflow uint64
	Kept         ring.Stats
	KeptIncomp   ring.Stats
}

// Status returns every port's counters, in the order first fed, and the
// rings' eviction counts.
func (s *Store) Status() StoreStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := StoreStatus{Ports: make([]PortStatus, 0, len(s.order)), PortOverflow: s.portOver,
		Kept: s.txs.Stats(), KeptIncomp: s.incomplete.Stats()}
	for _, n := range s.order {
		p := s.ports[n]
		c := p.tr.Observer().Counters()
		rs := p.tr.Rejections()
		out.Ports = append(out.Ports, PortStatus{Port: n, Frames: p.frames, UDS: p.tr.Counters(), Outstanding: p.tr.Outstanding(),
			Transport: TransportSummary{Counters: c, IncompleteByReason: c.IncompleteByReason()},
			Held:      p.tr.Held(), RejectedChannels: RejectedByReason(rs), Rejections: rs})
	}
	return out
}

// Rejected counts, across ports, the channels on ISO-TP ids that were not
// taken for diagnostic ones, by reason (RejectReason), every reason
// present: what the store read but does not report as UDS.
func (s *Store) Rejected() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Rejection
	for _, n := range s.order {
		all = append(all, s.ports[n].tr.Rejections()...)
	}
	return RejectedByReason(all)
}

// Ports lists the port names in the order first fed.
func (s *Store) Ports() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// StoreBytes is the most a Store with limits l holds in its rings (zero
// fields take the defaults), for the memory budget: its records are
// accounted at a fixed worst case each, so the bound is by count.
func StoreBytes(l Limits) int64 {
	if l.Transactions == 0 {
		l.Transactions = DefaultTransactions
	}
	if l.Incomplete == 0 {
		l.Incomplete = DefaultIncomplete
	}
	return int64(l.Transactions)*txCost() + int64(l.Incomplete)*incCost()
}

// txCost and incCost are what the rings account for one record: its
// worst case and its place in the ring.
func txCost() int64  { return transactionBytes + int64(ring.SlotBytes[Record]()) }
func incCost() int64 { return incompleteBytes + int64(ring.SlotBytes[IncompleteRecord]()) }

// PortBytes is the most one port's listener holds: every channel with a
// transfer of MaxPayload bytes in progress, and the transactions held for
// channels not yet paired, for the memory budget.
func PortBytes(channels int) int64 {
	if channels == 0 {
		channels = DefaultMaxChannels
	}
	per := heapsize.Pointers(int(unsafe.Sizeof(channel{}))) + heapsize.Bytes(MaxPayload) +
		heapsize.MapEntry(int(unsafe.Sizeof(chanKey(0))+unsafe.Sizeof(&channel{})))
	return int64(channels)*int64(per) + maxHeld*transactionBytes
}

// LimitsFor divides bytes between transactions (three quarters) and
// incomplete transfers, for a store bounded by a share of the memory
// budget; StoreBytes of the result is at most bytes. Each gets at least
// one.
func LimitsFor(bytes int64) Limits {
	return Limits{
		Transactions: int(max(bytes*3/4/txCost(), 1)),
		Incomplete:   int(max(bytes/4/incCost(), 1)),
	}
}
