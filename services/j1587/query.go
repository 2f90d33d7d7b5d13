package j1587

import (
	"cmp"
	"encoding/hex"
	"slices"
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

// Summary counts messages, checksum errors and per-MID rates.
func (s *Store) Summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{ByStatus: map[string]uint64{}, J2497: s.j2497, Overflow: s.overflow, MIDs: []MIDSummary{}}
	for st, n := range s.byStatus {
		sum.Messages += n
		sum.ByStatus[msgStatusNames[st]] = n
	}
	sum.ChecksumBad = s.byStatus[MsgChecksum] + s.byStatus[MsgLength]
	sum.ChecksumOK = sum.Messages - sum.ChecksumBad
	active := map[byte]int{}
	for k, e := range s.faults {
		if e.inLatest && e.Active {
			active[k.mid]++
		}
	}
	for mid := range s.mids {
		m := &s.mids[mid]
		if m.messages == 0 {
			continue
		}
		ms := MIDSummary{MID: mid, Name: MIDName(byte(mid)), Messages: m.messages, ChecksumBad: m.checksumBad,
			DecodeErrors: m.decodeErrors, J2497: m.j2497, First: m.first, Last: m.last, PIDs: m.pids, ActiveFaults: active[byte(mid)]}
		if !m.faultTable.IsZero() {
			ft := m.faultTable
			ms.FaultTable = &ft
		}
		ms.RatePerSecond, ms.RateBasis, ms.RateNullReason = rate(m.messages, m.first, m.last)
		sum.MIDs = append(sum.MIDs, ms)
	}
	sum.Stored = s.msgs.Stats()
	return sum
}

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

// Parameters returns the latest value per (MID, PID), ordered by MID then
// PID; mid is Any or one MID.
func (s *Store) Parameters(mid int) []ParamValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []ParamValue{}
	for k, l := range s.latest {
		m, pid := int(k>>16), uint16(k&0xFFFF)
		if mid != Any && m != mid {
			continue
		}
		v := Interpret(Param{PID: pid, Data: l.data})
		pv := ParamValue{MID: m, PID: int(pid), Name: v.Def.Name, Kind: v.Def.Kind.String(), Unit: v.Def.Unit,
			Status: v.Status.String(), Raw: hex.EncodeToString(l.data), Time: l.time, Count: l.count, J2497: l.j2497, NumberCount: l.numbers}
		if v.Status == StatusOK {
			x := v.Number
			pv.Value = &x
		}
		if l.numbers > 0 {
			lo, hi := l.min, l.max
			pv.Min, pv.Max = &lo, &hi
		}
		if v.UntrustedText() {
			pv.Text, pv.TextUntrusted = string(v.Text), true
		}
		out = append(out, pv)
	}
	slices.SortFunc(out, func(a, b ParamValue) int { return cmp.Or(cmp.Compare(a.MID, b.MID), cmp.Compare(a.PID, b.PID)) })
	return out
}

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

// Faults returns every fault entry, listed ones first, then by MID and code.
func (s *Store) Faults() []FaultEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []FaultEntry{}
	for k, e := range s.faults {
		fe := FaultEntry{MID: int(k.mid), MIDName: MIDName(k.mid), Code: int(k.code), IsSID: k.isSID, FMI: int(k.fmi),
			Active: e.inLatest && e.Active, Listed: e.inLatest, First: e.first, Last: e.last, Reports: e.reports}
		if !k.isSID {
			if d, ok := Lookup(k.code); ok {
				fe.CodeName = d.Name
			}
		}
		if e.HasCount {
			c := int(e.Count)
			fe.Count = &c
		}
		out = append(out, fe)
	}
	slices.SortFunc(out, func(a, b FaultEntry) int {
		if a.Listed != b.Listed {
			if a.Listed {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.MID, b.MID), cmp.Compare(a.Code, b.Code), cmp.Compare(a.FMI, b.FMI))
	})
	return out
}

// FaultTables reports, per MID that sent PID 194, when it last did: an
// empty fault list with tables seen means "no codes", not "no data".
func (s *Store) FaultTables() map[int]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]time.Time{}
	for mid := range s.mids {
		if t := s.mids[mid].faultTable; !t.IsZero() {
			out[mid] = t
		}
	}
	return out
}

// MessageStats reports the message ring: kept, evicted, limits.
func (s *Store) MessageStats() ring.Stats { return s.msgs.Stats() }
