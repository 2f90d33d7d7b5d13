package rules

import (
	"testing"
	"time"

	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
)

type dm1s []j1939.Fault

func (d dm1s) Faults() []j1939.Fault { return d }

type j1587s []j1587.FaultEntry

func (j j1587s) Faults() []j1587.FaultEntry { return j }

// TestFaultKindsCountActiveSources: a DM1 rule counts the sources whose
// latest DM1 (not DM2) lists the SPN, with the FMI when given and on the
// port when given; a J1587 rule counts MIDs with the PID active, never a
// SID of the same number.
func TestFaultKindsCountActiveSources(t *testing.T) {
	fmi1 := 1
	b := Box{
		J1939: dm1s{
			{Port: "can0", SA: 0, Kind: "DM1", DTCs: []j1939.DTC{{SPN: 110, FMI: 0, OC: 3}}},
			{Port: "can1", SA: 3, Kind: "DM1", DTCs: []j1939.DTC{{SPN: 110, FMI: 1, OC: 1}}},
			{Port: "can0", SA: 0, Kind: "DM2", DTCs: []j1939.DTC{{SPN: 110, FMI: 1}}},
		},
		J1587: j1587s{
			{MID: 128, Code: 110, FMI: 0, Active: true},
			{MID: 130, Code: 110, FMI: 0, Active: false},
			{MID: 136, Code: 110, IsSID: true, FMI: 0, Active: true},
		},
	}
	for _, c := range []struct {
		r    Rule
		want float64
	}{
		{Rule{Kind: KindDM1, Code: 110}, 2},
		{Rule{Kind: KindDM1, Code: 110, FMI: &fmi1}, 1},
		{Rule{Kind: KindDM1, Code: 110, Port: "can0"}, 1},
		{Rule{Kind: KindDM1, Code: 111}, 0},
		{Rule{Kind: KindJ1587, Code: 110}, 1},
		{Rule{Kind: KindJ1587, Code: 110, FMI: &fmi1}, 0},
	} {
		rd := b.Read(c.r, time.Time{})
		if !rd.OK || rd.Value != c.want {
			t.Errorf("%s code %d port %q: %+v, want %v", c.r.Kind, c.r.Code, c.r.Port, rd, c.want)
		}
	}
	if rd := b.Read(Rule{Kind: KindDM1, Code: 110}, time.Time{}); rd.Evidence.Tool != "j1939_faults" || rd.Evidence.Figures["can0/sa0/fmi0/oc"] != 3 {
		t.Errorf("evidence %+v", rd.Evidence)
	}
	if rd := (Box{}).Read(Rule{Kind: KindJ1587}, time.Time{}); rd.OK || rd.Why != "no J1587 store" {
		t.Errorf("without a store: %+v", rd)
	}
}
