package j1587

import (
	"time"

	"fieldtap/services/ring"
)

// Any matches every MID in Parameters.
const Any = -1

// MIDSummary is one sender.
type MIDSummary struct {
	MID          int        `json:"mid"`
	Name         string     `json:"name"`
	Messages     uint64     `json:"messages"`
	ChecksumBad  uint64     `json:"checksum_bad"`
	DecodeErrors uint64     `json:"decode_errors"`
	J2497        uint64     `json:"j2497"`
	First        time.Time  `json:"first_time"`
	Last         time.Time  `json:"last_time"`
	PIDs         int        `json:"pids"`
	ActiveFaults int        `json:"active_faults"`
	FaultTable   *time.Time `json:"fault_table_time"` // last PID 194; null when none seen
	// RatePerSecond is messages per second over First..Last, null with
	// RateNullReason when there is no basis (fewer than two messages).
	RatePerSecond  *float64 `json:"rate_per_second"`
	RateBasis      string   `json:"rate_basis,omitempty"`
	RateNullReason string   `json:"rate_null_reason,omitempty"`
}

// Summary is the whole store at one moment.
type Summary struct {
	Messages    uint64            `json:"messages"`
	ChecksumOK  uint64            `json:"checksum_ok"`
	ChecksumBad uint64            `json:"checksum_bad"` // bad checksum or length
	ByStatus    map[string]uint64 `json:"by_status"`
	J2497       uint64            `json:"j2497"`
	MIDs        []MIDSummary      `json:"mids"`
	Stored      ring.Stats        `json:"stored"`
	Overflow    Overflow          `json:"overflow"`
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
	MID    int       `json:"mid"`
	PID    int       `json:"pid"`
	Name   string    `json:"name"` // empty for a PID this build does not define
	Kind   string    `json:"kind"`
	Value  *float64  `json:"value"` // null unless status is ok
	Unit   string    `json:"unit"`
	Status string    `json:"status"` // ok, not_available, short, no_number
	Raw    string    `json:"raw"`    // value bytes in hex
	Time   time.Time `json:"time"`
	Count  uint64    `json:"count"` // messages that carried it
	J2497  bool      `json:"j2497"`
	// Min and Max over the NumberCount numeric values seen; null when none.
	Min         *float64 `json:"min"`
	Max         *float64 `json:"max"`
	NumberCount uint64   `json:"number_count"`
	// Text is sender text (VIN, component id): UNTRUSTED, to be fenced
	// before display. Empty for other kinds.
	Text          string `json:"text,omitempty"`
	TextUntrusted bool   `json:"text_untrusted,omitempty"`
}

// Parameters returns this port's latest value per (MID, PID), ordered by
// MID then PID; mid is Any or one MID.
func (s *Port) Parameters(mid int) []ParamValue { return aggregateOf(s).parameters(mid) }

// FaultEntry is one diagnostic code seen in a PID 194 table.
type FaultEntry struct {
	MID     int    `json:"mid"`
	MIDName string `json:"mid_name"`
	Code    int    `json:"code"`
	IsSID   bool   `json:"is_sid"` // true: subsystem id (SID); false: a PID
	// CodeName names the PID when the code is a PID this build defines.
	CodeName string `json:"code_name"`
	FMI      int    `json:"fmi"`
	// Active: the MID's latest table lists it as currently active.
	Active bool `json:"active"`
	// Listed: the MID's latest table lists it (active or previously active).
	Listed  bool      `json:"listed"`
	Count   *int      `json:"occurrence_count"` // null when the sender omitted it
	First   time.Time `json:"first_time"`
	Last    time.Time `json:"last_time"`
	Reports uint64    `json:"reports"`
}

// Faults returns this port's fault entries, listed ones first, then by
// MID and code.
func (s *Port) Faults() []FaultEntry { return aggregateOf(s).faultList() }

// FaultTables reports, per MID that sent PID 194, when it last did: an
// empty fault list with tables seen means "no codes", not "no data".
func (s *Port) FaultTables() map[int]time.Time { return aggregateOf(s).faultTables() }

// MessageStats reports the message ring: kept, evicted, limits.
func (s *Port) MessageStats() ring.Stats { return s.msgs.Stats() }
