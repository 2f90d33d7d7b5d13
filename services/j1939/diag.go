package j1939

import (
	"slices"
	"strconv"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// Diagnostic PGNs a listener decodes beyond DM1/DM2 (J1939-73, -21).
const (
	PGNDM3   = 65228 // 0xFECC clear/reset previously active DTCs
	PGNDM11  = 65235 // 0xFED3 clear/reset active DTCs
	PGNAck   = 59392 // 0xE800 acknowledgement
	ackBytes = 8
)

// Acknowledgement control bytes (J1939-21 §5.4.4).
var ackNames = [...]string{"ack", "nack", "access_denied", "cannot_respond"}

// Diagnostic window bounds: counts stay whole, lists say when cut.
const (
	// MaxClears bounds the clear events listed; a workshop clears a few
	// times a session.
	MaxClears = 256
	// MaxDTCChanges bounds the DTC appear/disappear events listed.
	MaxDTCChanges = 1024
	// MaxAcksPerClear bounds the answers kept per clear: one per ECU
	// for a global DM11.
	MaxAcksPerClear = 16
	// ackWait is how long after a clear an acknowledgement still answers
	// it: T3, 1250 ms (J1939-21 §5.12.3), plus the observer grace.
	ackWait = TimeoutT2 + observerGrace
)

// Clear kinds.
const (
	ClearDM3  = "DM3"  // previously active DTCs (DM2's list)
	ClearDM11 = "DM11" // active DTCs (DM1's list)
)

// DTCList is one source's DM1 or DM2 at a moment.
type DTCList struct {
	Seq      uint64
	Time     time.Time
	Via      string
	Lamps    Lamps
	NoActive bool
	DTCs     []DTC
}

// Ack is an ECU's answer to a clear.
type Ack struct {
	Seq     uint64
	Time    time.Time
	From    int
	Control string // ack, nack, access_denied, cannot_respond, or "control N"
}

// Clear is one DM3 or DM11 seen on the bus: who asked whom to clear what,
// when, how the ECU answered, and the list before and after.
type Clear struct {
	Seq  uint64
	Time time.Time
	Kind string // DM3 or DM11
	// Via: "request" (a Request, PGN 59904, for the DM: J1939-73's way)
	// or "direct" (the DM's own PGN sent as a command).
	Via       string
	Requester int
	// Target is the destination address; 255 asks every ECU.
	Target int
	Name   *Name // nil when the requester never claimed in the window
	Acks   []Ack
	// AckReason says why Acks is empty.
	AckReason string
	// Before and After are each target's list (DM1 for DM11, DM2 for DM3)
	// last seen before the clear and first seen after it; Cleared the
	// DTCs in Before that After no longer holds.
	Targets []ClearTarget
}

// ClearTarget is one ECU a clear reached.
type ClearTarget struct {
	SA           int
	Before       *DTCList
	BeforeReason string
	After        *DTCList
	AfterReason  string
	Cleared      []DTC
	Remaining    []DTC
}

// DTCChange is one DTC appearing in, or leaving, a source's DM1 or DM2.
type DTCChange struct {
	Seq    uint64
	Time   time.Time
	SA     int
	List   string // DM1 or DM2
	Change string // appeared, gone
	DTC    DTC
}

// SourceDMs is one source's last DM1 and DM2 in the window.
type SourceDMs struct {
	SA          int
	DM1         *DTCList
	DM1Messages int
	DM2         *DTCList
	DM2Messages int
}

// Diagnostics is the J1939-73 view of a window: DM1 and DM2 by source,
// every change to those lists, and every clear (DM3, DM11).
type Diagnostics struct {
	Span             Span
	Sources          []SourceDMs
	Changes          []DTCChange
	ChangesTotal     int
	ChangesTruncated bool
	Clears           []Clear
	ClearsTotal      int
	ClearsTruncated  bool
	// MalformedDM counts DM1/DM2 payloads under two bytes.
	MalformedDM int
}

// diagScan is the state of one diagnostics pass.
type diagScan struct {
	out    Diagnostics
	last   [2][256]*DTCList // [DM1, DM2][sa]
	counts [2][256]int
	names  [256]*Name
	dm     DM
}

// DiagnosticsOf scans a window of one port's stored frames. names, if
// set, supplies the NAME of a requester that did not claim in the window
// (Store.NameOf gives the live table).
func DiagnosticsOf(port string, snap ring.Snapshot[canbus.Record], w Window, names func(sa uint8) *Name) Diagnostics {
	ds := &diagScan{out: Diagnostics{Sources: []SourceDMs{}, Changes: []DTCChange{}, Clears: []Clear{}}}
	sc := scanner{onMessage: ds.message}
	ds.out.Span = sc.run(port, snap, w)
	for sa := range 256 {
		d1, d2 := ds.last[0][sa], ds.last[1][sa]
		if d1 == nil && d2 == nil {
			continue
		}
		ds.out.Sources = append(ds.out.Sources, SourceDMs{SA: sa, DM1: d1, DM1Messages: ds.counts[0][sa], DM2: d2, DM2Messages: ds.counts[1][sa]})
	}
	for i := range ds.out.Clears {
		c := &ds.out.Clears[i]
		if c.Name == nil && names != nil {
			c.Name = names(uint8(c.Requester))
		}
		if len(c.Acks) == 0 && c.AckReason == "" {
			c.AckReason = "no acknowledgement (PGN 59392) for it within T3 in the window"
		}
		for j := range c.Targets {
			t := &c.Targets[j]
			if t.After == nil {
				t.AfterReason = "the target sent no list after the clear in the window"
			} else if t.Before != nil {
				t.Cleared, t.Remaining = diffDTCs(t.Before.DTCs, t.After.DTCs)
			}
		}
	}
	return ds.out
}

func (ds *diagScan) message(seq uint64, m *Message) {
	sa := m.ID.SA
	switch m.ID.PGN {
	case PGNAddressClaim:
		if n, ok := ParseName(m.Data); ok {
			ds.names[sa] = &n
		}
	case PGNDM1, PGNDM2:
		ds.list(seq, m)
	case PGNRequest:
		if pgn, ok := ParseRequest(m.Data); ok && (pgn == PGNDM3 || pgn == PGNDM11) {
			ds.clear(seq, m, pgn, "request")
		}
	case PGNDM3, PGNDM11:
		ds.clear(seq, m, m.ID.PGN, "direct")
	case PGNAck:
		ds.ack(seq, m)
	}
}

func (ds *diagScan) list(seq uint64, m *Message) {
	k, name := 0, "DM1"
	if m.ID.PGN == PGNDM2 {
		k, name = 1, "DM2"
	}
	if !ParseDM(m.Data, &ds.dm) {
		ds.out.MalformedDM++
		return
	}
	sa := m.ID.SA
	l := &DTCList{Seq: seq, Time: m.Time, Via: m.Via.String(), Lamps: ds.dm.Lamps, NoActive: ds.dm.NoActive, DTCs: realDTCs(ds.dm)}
	prev := ds.last[k][sa]
	var before []DTC
	if prev != nil {
		before = prev.DTCs
	}
	gone, _ := diffDTCs(before, l.DTCs)
	added, _ := diffDTCs(l.DTCs, before)
	for _, d := range added {
		ds.change(DTCChange{Seq: seq, Time: m.Time, SA: int(sa), List: name, Change: "appeared", DTC: d})
	}
	for _, d := range gone {
		ds.change(DTCChange{Seq: seq, Time: m.Time, SA: int(sa), List: name, Change: "gone", DTC: d})
	}
	ds.last[k][sa] = l
	ds.counts[k][sa]++
	// The first list after a clear is its after-list: for the target of a
	// physical clear, and for every source that reports after a global one
	// (whose before-list is the one this list replaces).
	for i := range ds.out.Clears {
		c := &ds.out.Clears[i]
		if kindList(c.Kind) != k || m.Time.Before(c.Time) {
			continue
		}
		j := slices.IndexFunc(c.Targets, func(t ClearTarget) bool { return t.SA == int(sa) })
		switch {
		case j >= 0 && c.Targets[j].After == nil:
			c.Targets[j].After = l
		case j < 0 && c.Target == AddrGlobal:
			t := ClearTarget{SA: int(sa), After: l, Before: prev}
			if prev == nil {
				t.BeforeReason = noListBefore
			}
			c.Targets = append(c.Targets, t)
		}
	}
}

// noListBefore says why a target has no before-list.
const noListBefore = "the target sent no list before the clear in the window"

// realDTCs drops the "no active DTC" placeholder (SPN 0, FMI 0).
func realDTCs(dm DM) []DTC {
	if dm.NoActive {
		return []DTC{}
	}
	return slices.Clone(dm.DTCs)
}

func kindList(kind string) int {
	if kind == ClearDM3 {
		return 1
	}
	return 0
}

func (ds *diagScan) change(c DTCChange) {
	ds.out.ChangesTotal++
	if len(ds.out.Changes) == MaxDTCChanges {
		ds.out.ChangesTruncated = true
		return
	}
	ds.out.Changes = append(ds.out.Changes, c)
}

func (ds *diagScan) clear(seq uint64, m *Message, pgn uint32, via string) {
	kind := ClearDM11
	if pgn == PGNDM3 {
		kind = ClearDM3
	}
	ds.out.ClearsTotal++
	if len(ds.out.Clears) == MaxClears {
		ds.out.ClearsTruncated = true
		return
	}
	c := Clear{Seq: seq, Time: m.Time, Kind: kind, Via: via, Requester: int(m.ID.SA), Target: int(m.ID.DA), Name: ds.names[m.ID.SA],
		Acks: []Ack{}, Targets: []ClearTarget{}}
	if m.ID.DA != AddrGlobal {
		t := ClearTarget{SA: int(m.ID.DA), Before: ds.last[kindList(kind)][m.ID.DA]}
		if t.Before == nil {
			t.BeforeReason = noListBefore
		}
		c.Targets = append(c.Targets, t)
	}
	ds.out.Clears = append(ds.out.Clears, c)
}

func (ds *diagScan) ack(seq uint64, m *Message) {
	if len(m.Data) < ackBytes {
		return
	}
	pgn := uint32(m.Data[5]) | uint32(m.Data[6])<<8 | uint32(m.Data[7])<<16
	if pgn != PGNDM3 && pgn != PGNDM11 {
		return
	}
	// The newest clear of that kind still within T3 that reached the sender.
	for i := len(ds.out.Clears) - 1; i >= 0; i-- {
		c := &ds.out.Clears[i]
		if kindOf(pgn) != c.Kind || m.Time.Before(c.Time) || m.Time.Sub(c.Time) > ackWait ||
			(c.Target != AddrGlobal && int(m.ID.SA) != c.Target) {
			continue
		}
		if len(c.Acks) == MaxAcksPerClear {
			c.AckReason = "more answers than kept"
			return
		}
		ctl := "control " + strconv.Itoa(int(m.Data[0]))
		if int(m.Data[0]) < len(ackNames) {
			ctl = ackNames[m.Data[0]]
		}
		c.Acks = append(c.Acks, Ack{Seq: seq, Time: m.Time, From: int(m.ID.SA), Control: ctl})
		return
	}
}

func kindOf(pgn uint32) string {
	if pgn == PGNDM3 {
		return ClearDM3
	}
	return ClearDM11
}

// diffDTCs returns the DTCs of a missing from b (by SPN and FMI: the
// occurrence count may move) and those in both.
func diffDTCs(a, b []DTC) (missing, both []DTC) {
	missing, both = []DTC{}, []DTC{}
	for _, d := range a {
		if slices.ContainsFunc(b, func(e DTC) bool { return e.SPN == d.SPN && e.FMI == d.FMI }) {
			both = append(both, d)
		} else {
			missing = append(missing, d)
		}
	}
	return missing, both
}
