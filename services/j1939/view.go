package j1939

import (
	"fmt"
	"slices"
	"time"
)

// PGNCount is one row of a PGN histogram.
type PGNCount struct {
	PGN    uint32
	Name   string
	Frames uint64
}

// PortSummary is one port's J1939 overview.
type PortSummary struct {
	Port            string
	Frames          uint64
	StandardSkipped uint64
	SourceAddresses []int
	DistinctPGNs    int
	PGNOverflow     uint64
	TopPGNs         []PGNCount
	TP              TPCounters
	MultiPG         MultiPGCounters // J1939-22 on CAN FD
	OpenSessions    int
	Requests        uint64
	AddressClaims   int
	ClaimConflicts  uint64
	MalformedClaims uint64
	DM1Sources      []int
	ActiveDTCs      int
	LatestOverflow  uint64
	// FaultOverflow counts DTC listings past MaxFaultCodes.
	FaultOverflow uint64
}

// topPGNs is how many PGNs a summary lists.
const topPGNs = 10

// Summary returns every port's overview.
func (s *Store) Summary() []PortSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []PortSummary{}
	for _, n := range s.order {
		p := s.ports[n]
		ps := PortSummary{Port: n, Frames: p.dec.Frames, StandardSkipped: p.dec.Standard, DistinctPGNs: len(p.pgns),
			PGNOverflow: p.pgnOv, TP: p.dec.TP(), MultiPG: p.dec.MultiPG(), OpenSessions: p.dec.OpenCount(), Requests: p.requests,
			AddressClaims: len(p.claims), MalformedClaims: p.badClaims, LatestOverflow: p.latOv, FaultOverflow: p.faultOv,
			SourceAddresses: []int{}, DM1Sources: []int{}}
		for sa, e := range p.ecus {
			if e != nil {
				ps.SourceAddresses = append(ps.SourceAddresses, sa)
				ps.ClaimConflicts += e.Conflicts
			}
			if d := p.dm1[sa]; d != nil {
				ps.DM1Sources = append(ps.DM1Sources, sa)
				if !d.DM.NoActive {
					ps.ActiveDTCs += len(d.DM.DTCs)
				}
			}
		}
		for pgn, cp := range p.pgns {
			c := *cp
			ps.TopPGNs = append(ps.TopPGNs, PGNCount{PGN: pgn, Name: PGNName(pgn), Frames: c})
		}
		slices.SortFunc(ps.TopPGNs, func(a, b PGNCount) int {
			if a.Frames != b.Frames {
				return int(int64(b.Frames) - int64(a.Frames))
			}
			return int(int64(a.PGN) - int64(b.PGN))
		})
		ps.TopPGNs = ps.TopPGNs[:min(topPGNs, len(ps.TopPGNs))]
		out = append(out, ps)
	}
	return out
}

// InventoryRow is one ECU of one port.
type InventoryRow struct {
	Port        string
	SA          int
	First       time.Time
	Last        time.Time
	Frames      uint64
	Claimed     bool
	Name        *Name // nil when no Address Claimed was seen
	Conflicts   uint64
	CannotClaim bool
	DM1Lamps    *Lamps // nil without a DM1
}

// Inventory lists the ECUs seen on every port, by port then SA.
func (s *Store) Inventory() []InventoryRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []InventoryRow{}
	for _, n := range s.order {
		p := s.ports[n]
		for sa, e := range p.ecus {
			if e == nil {
				continue
			}
			r := InventoryRow{Port: n, SA: sa, First: e.First, Last: e.Last, Frames: e.Frames, Claimed: e.Claim != nil,
				Name: e.Claim, Conflicts: e.Conflicts, CannotClaim: e.CannotClaim}
			if d := p.dm1[sa]; d != nil {
				l := d.DM.Lamps
				r.DM1Lamps = &l
			}
			out = append(out, r)
		}
	}
	return out
}

// Fault is the latest DM1 (or DM2) of one source.
type Fault struct {
	Port     string
	SA       int
	ECU      string // ECUName
	Kind     string // DM1 or DM2
	Time     time.Time
	Via      string
	Messages uint64
	Lamps    Lamps
	NoActive bool
	DTCs     []DTC
}

// Faults returns the latest DM1 and DM2 of every source.
func (s *Store) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Fault{}
	for _, n := range s.order {
		p := s.ports[n]
		for _, kind := range []string{"DM1", "DM2"} {
			tbl := &p.dm1
			if kind == "DM2" {
				tbl = &p.dm2
			}
			for sa, d := range tbl {
				if d == nil {
					continue
				}
				var name *Name
				if e := p.ecus[sa]; e != nil {
					name = e.Claim
				}
				out = append(out, Fault{Port: n, SA: sa, ECU: ECUName(uint8(sa), name), Kind: kind, Time: d.Time, Via: d.Via.String(), Messages: d.Messages,
					Lamps: d.DM.Lamps, NoActive: d.DM.NoActive, DTCs: append([]DTC{}, d.DM.DTCs...)})
			}
		}
	}
	return out
}

// PGNValue is the latest payload of one PGN from one source, decoded.
type PGNValue struct {
	Port   string
	SA     int
	PGN    uint32
	Name   string
	Time   time.Time
	Via    string
	Count  uint64
	Data   string // hex
	Raw    []byte
	Values []SPNOut
}

// SPNOut is one decoded SPN with its definition's name. Value is nil
// unless Status is ok, so "not available" never reads as 0.
type SPNOut struct {
	SPN    uint32
	Name   string
	Value  *float64
	Unit   string
	Status string
	Raw    uint32
	// DBCUnit is the unit of a parameter from an operator's DBC (its
	// author's text); built-in parameters carry theirs in Unit.
	DBCUnit string
}

// Out is v with its definition's name, its value only when valid.
func (v Value) Out(name string) SPNOut {
	o := SPNOut{SPN: v.SPN, Name: name, Unit: v.Unit, Status: v.Status, Raw: v.Raw}
	if v.Status == StatusOK {
		x := v.Value
		o.Value = &x
	}
	return o
}

// LatestPGN returns the latest payloads of pgn, every source and port.
func (s *Store) LatestPGN(pgn uint32) []PGNValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []PGNValue{}
	params := s.Catalogue().Of(pgn)
	for _, n := range s.order {
		for k, l := range s.ports[n].latest {
			if k.pgn != pgn {
				continue
			}
			v := PGNValue{Port: n, SA: int(l.SA), PGN: pgn, Name: PGNName(pgn), Time: l.Time, Via: l.Via.String(),
				Count: l.Count, Data: fmt.Sprintf("%X", l.Data), Raw: slices.Clone(l.Data), Values: []SPNOut{}}
			for i := range params {
				o := params[i].Decode(l.Data).Out(params[i].Name)
				o.DBCUnit = params[i].DBCUnit
				v.Values = append(v.Values, o)
			}
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b PGNValue) int {
		if a.Port != b.Port {
			if a.Port < b.Port {
				return -1
			}
			return 1
		}
		return a.SA - b.SA
	})
	return out
}

// RequestCount is one requested PGN.
type RequestCount struct {
	PGN   uint32
	Name  string
	Count uint64
}

// PortRequests is one port's Request (PGN 59904) tally.
type PortRequests struct {
	Port      string
	Total     uint64
	Requested []RequestCount
	Overflow  uint64
}

// Requests returns every port's request tally, most requested first.
func (s *Store) Requests() []PortRequests {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []PortRequests{}
	for _, n := range s.order {
		p := s.ports[n]
		pr := PortRequests{Port: n, Total: p.requests, Overflow: p.reqOv, Requested: []RequestCount{}}
		for pgn, c := range p.requested {
			pr.Requested = append(pr.Requested, RequestCount{PGN: pgn, Name: PGNName(pgn), Count: c})
		}
		slices.SortFunc(pr.Requested, func(a, b RequestCount) int {
			if a.Count != b.Count {
				return int(int64(b.Count) - int64(a.Count))
			}
			return int(int64(a.PGN) - int64(b.PGN))
		})
		out = append(out, pr)
	}
	return out
}
