package j1939

import (
	"cmp"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// TestFaultCodesAgainstGroundTruth feeds every reference log with J1939
// through a Store and checks its fault codes against GROUND_TRUTH.json's
// dm1_dtcs (an independent SAE-layout decode; CANarchy's fixtures are
// decoded the SAE way there too, PROVENANCE "Known traps" 1): one DM1 row
// per (source, SPN, FMI) the truth lists, counted over the same messages,
// with the occurrence count last listed among the truth's, and no row
// for the SPN 0/FMI 0 "no active DTC" entry.
func TestFaultCodesAgainstGroundTruth(t *testing.T) {
	dir, logs := groundTruth(t)
	type key struct{ sa, spn, fmi int }
	placeholderLogs, rows := 0, 0
	for _, want := range logs {
		if want.J1939 == nil {
			continue
		}
		t.Run(want.File, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, want.File)); err != nil {
				t.Skipf("%s is listed but held back from the folder", want.File)
			}
			wantN, wantOC := map[key]uint64{}, map[key]map[uint8]bool{}
			placeholder := false
			for _, d := range want.J1939.DTCs {
				if d.SPN == 0 && d.FMI == 0 {
					placeholder = true
					continue
				}
				k := key{d.SA, d.SPN, d.FMI}
				wantN[k] += uint64(d.Count)
				if wantOC[k] == nil {
					wantOC[k] = map[uint8]bool{}
				}
				wantOC[k][uint8(d.OC)] = true
			}
			if placeholder {
				placeholderLogs++
			}
			s, err := New(Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var r wire.CandumpRecord
			for _, l := range readLines(t, want.File) {
				if wire.DecodeCandump(l, &r) != nil || r.ID&(wire.CANRTR|wire.CANERR) != 0 {
					continue
				}
				s.Feed(string(r.Interface), r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
			}
			got := map[key]uint64{}
			for _, f := range s.FaultCodes() {
				if f.Kind != "DM1" {
					continue
				}
				rows++
				k := key{f.SA, int(f.SPN), int(f.FMI)}
				if f.SPN == 0 && f.FMI == 0 {
					t.Errorf("SA %d: a row for the 'no active DTC' placeholder: %+v", f.SA, f)
				}
				got[k] = f.Messages
				if !wantOC[k][f.OC] {
					t.Errorf("%+v: oc %d, not one the truth lists (%v)", k, f.OC, wantOC[k])
				}
				if f.First.After(f.Last) || f.ECU == "" || FMIText(f.FMI) == "" {
					t.Errorf("%+v: first %v after last %v, or no ECU or FMI text", k, f.First, f.Last)
				}
			}
			for k, n := range wantN {
				if got[k] != n {
					t.Errorf("%+v listed in %d DM1s, want %d", k, got[k], n)
				}
			}
			for k := range got {
				if _, ok := wantN[k]; !ok {
					t.Errorf("unexpected DTC %+v", k)
				}
			}
		})
	}
	t.Logf("%d DM1 fault rows over the logs; %d logs send the placeholder, none has a row for it", rows, placeholderLogs)
}

// dm1Frame is a single-frame DM1 of sa with lamps and one DTC (or the
// placeholder, spn 0 fmi 0).
func dm1Frame(s *Store, t time.Time, sa uint8, lamps byte, spn uint32, fmi, oc uint8) {
	d := []byte{lamps, 0xFF, byte(spn), byte(spn >> 8), byte(spn>>16)<<5 | fmi, oc, 0xFF, 0xFF}
	s.Feed("can0", t, 0x18FECA00|uint32(sa), true, d)
}

// TestFaultCodesOverTime checks first and last seen, the message count
// and listed through a DTC appearing, staying, leaving and the
// placeholder; and the ECU name from a claimed NAME and from the address.
func TestFaultCodesOverTime(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	// SA 0x80 claims function 0 (engine), instance 1: the second engine.
	name := uint64(1)<<35 | 0x1234
	claim := binary.LittleEndian.AppendUint64(nil, name)
	s.Feed("can0", at(0), 0x18EEFF80, true, claim)
	dm1Frame(s, at(1), 0x00, 0x04, 110, 0, 3) // amber on
	dm1Frame(s, at(2), 0x00, 0x04, 110, 0, 4)
	dm1Frame(s, at(3), 0x00, 0x00, 100, 1, 1)
	dm1Frame(s, at(4), 0x03, 0x00, 0, 0, 0) // the placeholder
	dm1Frame(s, at(5), 0x80, 0x40, 190, 2, 1)
	dm1Frame(s, at(6), 0x90, 0x00, 84, 9, 1)
	got := s.FaultCodes()
	// Flash byte 0xFF: every flash code "not available".
	off := Lamps{FlashMIL: 3, FlashRed: 3, FlashAmber: 3, FlashProtec: 3}
	mil := off
	mil.MIL = LampOn
	want := []FaultCode{
		{Port: "can0", SA: 0, ECU: "Engine #1", Kind: "DM1", DTC: DTC{SPN: 100, FMI: 1, OC: 1}, First: at(3), Last: at(3), Messages: 1, Listed: true, Lamps: off, Via: "direct"},
		{Port: "can0", SA: 0, ECU: "Engine #1", Kind: "DM1", DTC: DTC{SPN: 110, FMI: 0, OC: 4}, First: at(1), Last: at(2), Messages: 2, Listed: false, Lamps: off, Via: "direct"},
		{Port: "can0", SA: 0x80, ECU: "Engine #2", Kind: "DM1", DTC: DTC{SPN: 190, FMI: 2, OC: 1}, First: at(5), Last: at(5), Messages: 1, Listed: true, Lamps: mil, Via: "direct"},
		{Port: "can0", SA: 0x90, ECU: "self-configurable", Kind: "DM1", DTC: DTC{SPN: 84, FMI: 9, OC: 1}, First: at(6), Last: at(6), Messages: 1, Listed: true, Lamps: off, Via: "direct"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.First.Equal(w.First) || !g.Last.Equal(w.Last) {
			t.Errorf("row %d: first/last %v %v, want %v %v", i, g.First, g.Last, w.First, w.Last)
		}
		g.First, g.Last, w.First, w.Last = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if g != w {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	for _, f := range s.Faults() {
		if f.SA == 0x80 && f.ECU != "Engine #2" {
			t.Errorf("Faults names SA 0x80 %q, FaultCodes Engine #2: one naming", f.ECU)
		}
	}
}

// TestFaultCodesBound fills the table past MaxFaultCodes: the DTCs past
// it are counted, those held keep counting.
func TestFaultCodesBound(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	const perSA = 5
	for sa := range 256 {
		for i := range perSA {
			dm1Frame(s, t0, uint8(sa), 0, uint32(1000+i), 3, 1)
		}
	}
	dm1Frame(s, t0.Add(time.Second), 0, 0, 1000, 3, 2) // held: counts again
	codes := s.FaultCodes()
	if len(codes) != MaxFaultCodes {
		t.Fatalf("%d codes kept, want %d", len(codes), MaxFaultCodes)
	}
	if ov := s.Summary()[0].FaultOverflow; ov != 256*perSA-MaxFaultCodes {
		t.Errorf("overflow %d, want %d", ov, 256*perSA-MaxFaultCodes)
	}
	if c := codes[0]; c.SA != 0 || c.SPN != 1000 || c.Messages != 2 || c.OC != 2 || !c.Listed {
		t.Errorf("first code %+v, want SA 0 SPN 1000 listed twice, oc 2", c)
	}
}

// TestFMIText checks the J1939-73 table's ends and that every FMI has a text.
func TestFMIText(t *testing.T) {
	for fmi := range uint8(32) {
		if FMIText(fmi) == "" {
			t.Errorf("FMI %d has no text", fmi)
		}
	}
	for fmi, want := range map[uint8]string{
		0:  "Data valid but above normal operational range - most severe level",
		3:  "Voltage above normal, or shorted to high source",
		17: "Data valid but below normal operating range - least severe level",
		21: "Data drifted low",
		25: "Reserved for SAE assignment",
		31: "Condition exists",
	} {
		if got := FMIText(fmi); got != want {
			t.Errorf("FMI %d = %q, want %q", fmi, got, want)
		}
	}
}

// TestECUName: a NAME's function names the ECU wherever it sits; without
// one, or with an industry-group function (128+), the address does.
func TestECUName(t *testing.T) {
	for _, tc := range []struct {
		sa   uint8
		n    *Name
		want string
	}{
		{0, nil, "Engine #1"},
		{3, nil, "Transmission #1"},
		{0x90, nil, "self-configurable"},
		{0x90, &Name{Function: 3, FunctionInstance: 1}, "Transmission #2"},
		{0, &Name{}, "Engine #1"},
		{0x90, &Name{Function: 130}, "self-configurable"},
		{0x0B, &Name{Function: 9}, "Brakes - System Controller #1"},
	} {
		if got := ECUName(tc.sa, tc.n); got != tc.want {
			t.Errorf("ECUName(%d, %+v) = %q, want %q", tc.sa, tc.n, got, tc.want)
		}
	}
}

// FuzzFaultCodes feeds a store arbitrary claims, DM1s and DM2s (single
// frames and transfers): the fault codes stay bounded, ordered and unique,
// never hold the placeholder, and a listed code is in its source's latest
// list.
func FuzzFaultCodes(f *testing.F) {
	f.Add([]byte{6, 8, 0x04, 0xFF, 110, 0, 0, 3, 0xFF, 0xFF, 7, 8, 0, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF})
	f.Add([]byte{10, 8, 32, 10, 0, 2, 0xFF, 0xCA, 0xFE, 0, 11, 8, 1, 0x43, 0xFF, 0xBF, 0, 9, 8, 0x54, 11, 8, 2, 0, 9, 8, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := New(Limits{})
		if err != nil {
			t.Fatal(err)
		}
		at := d0
		for len(b) >= 2 {
			n := min(int(b[1])%9, len(b)-2)
			s.Feed("can0", at, fuzzIDs[int(b[0])%len(fuzzIDs)], true, b[2:2+n])
			at = at.Add(time.Duration(b[1]) * 10 * time.Millisecond)
			b = b[2+n:]
		}
		latest := map[string][]DTC{}
		for _, l := range s.Faults() {
			latest[l.Kind+strconv.Itoa(l.SA)] = l.DTCs
		}
		codes := s.FaultCodes()
		if len(codes) > MaxFaultCodes {
			t.Fatalf("%d codes", len(codes))
		}
		for i, c := range codes {
			if c.Messages == 0 || c.First.After(c.Last) {
				t.Fatalf("code %+v", c)
			}
			if i > 0 {
				p := codes[i-1]
				if cmp.Or(cmp.Compare(p.Kind, c.Kind), cmp.Compare(p.SA, c.SA), cmp.Compare(p.SPN, c.SPN), cmp.Compare(p.FMI, c.FMI)) >= 0 {
					t.Fatalf("codes out of order or twice: %+v then %+v", p, c)
				}
			}
			l := latest[c.Kind+strconv.Itoa(c.SA)]
			if len(l) == 1 && l[0].SPN == 0 && l[0].FMI == 0 && c.Listed {
				t.Fatalf("code %+v listed beside the placeholder", c)
			}
			if c.Listed && !slices.Contains(l, c.DTC) {
				t.Fatalf("code %+v listed, not in the latest %v", c, l)
			}
		}
	})
}
