package j1939

import (
	"cmp"
	"slices"
	"time"
)

// MaxFaultCodes bounds the DTCs a port remembers (by list, source, SPN and
// FMI): the shared logs list at most 26 on one bus; the rest is room for
// a spoofing tool's made-up sources. A DTC past the bound is counted in
// PortSummary.FaultOverflow, and the latest DM1/DM2 still holds it. Each
// costs about 114 bytes of the budget's per-port tables.
const MaxFaultCodes = 512

// faultKey is one DTC of one source's DM1 (kind 0) or DM2 (kind 1).
type faultKey struct {
	kind uint8
	sa   uint8
	fmi  uint8
	spn  uint32
}

// faultSeen is what a port remembers of one DTC.
type faultSeen struct {
	first, last time.Time
	dtc         DTC    // as last listed (the occurrence count moves)
	messages    uint64 // DM messages that listed it
	msg         uint64 // the source's DM count when last listed: listed now when it is the current one
}

// seeFaults records the DTCs of a source's DM1 or DM2 (st already
// counts this message). The "no active DTC" placeholder is no DTC.
func (p *portState) seeFaults(kind uint8, sa uint8, st *DMState, t time.Time) {
	if st.DM.NoActive {
		return
	}
	for _, d := range st.DM.DTCs {
		k := faultKey{kind: kind, sa: sa, fmi: d.FMI, spn: d.SPN}
		f := p.faults[k]
		if f == nil {
			if len(p.faults) >= MaxFaultCodes {
				p.faultOv++
				continue
			}
			f = &faultSeen{first: t}
			p.faults[k] = f
		}
		f.last, f.dtc, f.msg = t, d, st.Messages
		f.messages++
	}
}

// FaultCode is one DTC a source listed in its DM1 (active) or DM2
// (previously active), as the port saw it over time.
type FaultCode struct {
	Port string
	SA   int
	// ECU names the source (ECUName): its NAME's function, else its
	// address's preferred assignment.
	ECU  string
	Kind string // DM1 or DM2
	DTC
	// First and Last are the first and last DM message that listed it;
	// Messages how many did.
	First, Last time.Time
	Messages    uint64
	// Listed says the source's latest DM1 (DM2) still lists it; a DTC
	// no longer listed has gone from that list since Last.
	Listed bool
	// Lamps and Via are of the source's latest message of that kind.
	Lamps Lamps
	Via   string
}

// FaultCodes lists every DTC remembered, by port, DM1 before DM2, source
// address, SPN and FMI.
func (s *Store) FaultCodes() []FaultCode {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []FaultCode{}
	for _, n := range s.order {
		p := s.ports[n]
		start := len(out)
		for k, f := range p.faults {
			tbl, kind := &p.dm1, "DM1"
			if k.kind == 1 {
				tbl, kind = &p.dm2, "DM2"
			}
			st := tbl[k.sa]
			var name *Name
			if e := p.ecus[k.sa]; e != nil {
				name = e.Claim
			}
			out = append(out, FaultCode{Port: n, SA: int(k.sa), ECU: ECUName(k.sa, name), Kind: kind, DTC: f.dtc,
				First: f.first, Last: f.last, Messages: f.messages, Listed: f.msg == st.Messages, Lamps: st.DM.Lamps, Via: st.Via.String()})
		}
		slices.SortFunc(out[start:], func(a, b FaultCode) int {
			return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.SA, b.SA), cmp.Compare(a.SPN, b.SPN), cmp.Compare(a.FMI, b.FMI))
		})
	}
	return out
}

// fmiText is SAE J1939-73's failure mode identifiers (Table 5), 0–31.
var fmiText = [32]string{
	"Data valid but above normal operational range - most severe level",
	"Data valid but below normal operational range - most severe level",
	"Data erratic, intermittent or incorrect",
	"Voltage above normal, or shorted to high source",
	"Voltage below normal, or shorted to low source",
	"Current below normal or open circuit",
	"Current above normal or grounded circuit",
	"Mechanical system not responding or out of adjustment",
	"Abnormal frequency or pulse width or period",
	"Abnormal update rate",
	"Abnormal rate of change",
	"Root cause not known",
	"Bad intelligent device or component",
	"Out of calibration",
	"Special instructions",
	"Data valid but above normal operating range - least severe level",
	"Data valid but above normal operating range - moderately severe level",
	"Data valid but below normal operating range - least severe level",
	"Data valid but below normal operating range - moderately severe level",
	"Received network data in error",
	"Data drifted high",
	"Data drifted low",
	"Reserved for SAE assignment", "Reserved for SAE assignment", "Reserved for SAE assignment",
	"Reserved for SAE assignment", "Reserved for SAE assignment", "Reserved for SAE assignment",
	"Reserved for SAE assignment", "Reserved for SAE assignment", "Reserved for SAE assignment",
	"Condition exists",
}

// FMIText is the J1939-73 text of a failure mode identifier (5 bits).
func FMIText(fmi uint8) string { return fmiText[fmi&0x1F] }
