package j1587

import "testing"

func TestCatalogues(t *testing.T) {
	pids := PIDs()
	if len(pids) != len(defs) {
		t.Fatalf("%d PIDs, table has %d", len(pids), len(defs))
	}
	for _, p := range pids {
		d, ok := Lookup(p.PID)
		if !ok || d.Name != p.Name || d.Kind.String() != p.Kind {
			t.Errorf("catalogue row %+v disagrees with Lookup %+v", p, d)
		}
	}
	byPID := map[uint16]PIDInfo{}
	for _, p := range pids {
		byPID[p.PID] = p
	}
	for _, tc := range []struct {
		pid    uint16
		length string
		scale  float64
		unit   string
	}{
		{pid: PIDRoadSpeed, length: lengthOne, scale: 0.5, unit: "mph"},
		{pid: PIDEngineSpeed, length: lengthTwo, scale: 0.25, unit: "rpm"},
		{pid: PIDFaults, length: lengthVariable},
		{pid: PIDVIN, length: lengthVariable},
	} {
		p := byPID[tc.pid]
		if p.Length != tc.length || p.Unit != tc.unit || (tc.scale != 0) != (p.Scale != nil) || (p.Scale != nil && *p.Scale != tc.scale) {
			t.Errorf("PID %d = %+v", tc.pid, p)
		}
	}
	mids := MIDs()
	if len(mids) != 128 || mids[0].MID != 128 || mids[0].Name != MIDName(128) || mids[127].MID != 255 {
		t.Fatalf("MIDs %d rows, first %+v", len(mids), mids[0])
	}
	trailer := J2497MIDs()
	want := map[uint8]bool{133: true, 137: true, 138: true, 139: true, 147: true, 151: true, 155: true, 167: true, 168: true, 169: true, 217: true, 218: true, 246: true, 247: true}
	got := map[uint8]bool{}
	for _, m := range trailer {
		got[m.MID] = true
	}
	for mid := range want {
		if !got[mid] {
			t.Errorf("J2497 MIDs miss %d %q", mid, MIDName(mid))
		}
	}
	for mid := range got {
		if !want[mid] {
			t.Errorf("J2497 MIDs hold %d %q", mid, MIDName(mid))
		}
	}
}
