package j1587

import (
	"time"

	"fieldtap/services/ring"
)

// Any matches every MID in Parameters.
const Any = -1

// MIDSummary is one sender.
type MIDSummary struct {
	MID          int
	Name         string
	Messages     uint64
	ChecksumBad  uint64
	DecodeErrors uint64
	J2497        uint64
	First        time.Time
	Last         time.Time
	PIDs         int
	ActiveFaults int
	FaultTable   *time.Time // last PID 194; nil when none seen
	// RatePerSecond is messages per second over First..Last, nil with
	// RateNullReason when there is no basis (fewer than two messages).
	RatePerSecond  *float64
	RateBasis      string
	RateNullReason string
}

// Summary is the whole store at one moment.
type Summary struct {
	Messages    uint64
	ChecksumOK  uint64
	ChecksumBad uint64 // bad checksum or length
	ByStatus    map[string]uint64
	J2497       uint64
	MIDs        []MIDSummary
	Stored      ring.Stats
	Overflow    Overflow
}

// Summary counts this port's messages, checksum errors and per-MID rates.
func (s *Port) Summary() Summary { return aggregateOf(s).summary() }

func rate(n uint64, first, last time.Time) (*float64, string, string) {
	span := last.Sub(first).Seconds()
	if n < 2 || span <= 0 {
		return nil, "", "fewer than two messages over a non-zero span"
	}
	r := float64(n-1) / span
	return &r, formatBasis(n, span), ""
}

// ParamValue is the latest value of one (MID, PID).
type ParamValue struct {
	MID    int
	PID    int
	Name   string // empty for a PID this build does not define
	Kind   string
	Value  *float64 // nil unless status is ok
	Unit   string
	Status string // ok, not_available, short, no_number
	Raw    string // value bytes in hex
	Time   time.Time
	Count  uint64 // messages that carried it
	J2497  bool
	// Min and Max over the NumberCount numeric values seen; nil when none.
	Min         *float64
	Max         *float64
	NumberCount uint64
	// Text is sender text (VIN, component id): UNTRUSTED, to be fenced
	// before display. Empty for other kinds.
	Text          string
	TextUntrusted bool
}

// Parameters returns this port's latest value per (MID, PID), ordered by
// MID then PID; mid is Any or one MID.
func (s *Port) Parameters(mid int) []ParamValue { return aggregateOf(s).parameters(mid) }

// FaultEntry is one diagnostic code seen in a PID 194 table.
type FaultEntry struct {
	MID     int
	MIDName string
	Code    int
	IsSID   bool // true: subsystem id (SID); false: a PID
	// CodeName names the PID when the code is a PID this build defines.
	CodeName string
	FMI      int
	// Active: the MID's latest table lists it as currently active.
	Active bool
	// Listed: the MID's latest table lists it (active or previously active).
	Listed  bool
	Count   *int // nil when the sender omitted it
	First   time.Time
	Last    time.Time
	Reports uint64
}

// Faults returns this port's fault entries, listed ones first, then by
// MID and code.
func (s *Port) Faults() []FaultEntry { return aggregateOf(s).faultList() }

// FaultTables reports, per MID that sent PID 194, when it last did: an
// empty fault list with tables seen means "no codes", not "no data".
func (s *Port) FaultTables() map[int]time.Time { return aggregateOf(s).faultTables() }

// MessageStats reports the message ring: kept, evicted, limits.
func (s *Port) MessageStats() ring.Stats { return s.msgs.Stats() }
