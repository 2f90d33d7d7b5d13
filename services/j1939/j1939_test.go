package j1939

import (
	"testing"
	"time"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		name string
		id   uint32
		want ID
	}{
		{name: "PDU2 EEC1", id: 0x0CF00400, want: ID{Priority: 3, PF: 0xF0, PS: 0x04, PGN: 61444, SA: 0, DA: AddrGlobal}},
		{name: "PDU1 request", id: 0x18EA00F9, want: ID{Priority: 6, PF: 0xEA, PS: 0x00, PGN: PGNRequest, SA: 0xF9, DA: 0}},
		{name: "DP set", id: 0x19FECA00, want: ID{Priority: 6, DP: 1, PF: 0xFE, PS: 0xCA, PGN: 0x1FECA, SA: 0, DA: AddrGlobal}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseID(tc.id); got != tc.want {
				t.Errorf("ParseID(%#x) = %+v, want %+v", tc.id, got, tc.want)
			}
		})
	}
}

func TestParseDM(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		wantOK   bool
		mil      uint8
		dtcs     []DTC
		noActive bool
	}{
		// PROVENANCE trap 1: the real-log oracles.
		{name: "Kenworth SA49", data: []byte{0xC0, 0xFF, 0xA8, 0x00, 0x11, 0x7E, 0xFF, 0xFF}, wantOK: true, mil: LampNotAvailable,
			dtcs: []DTC{{SPN: 168, FMI: 17, OC: 126}}},
		{name: "MaxxForce MIL on", data: []byte{0x40, 0xFF, 0x66, 0x00, 0x03, 0x01, 0xFF, 0xFF}, wantOK: true, mil: LampOn,
			dtcs: []DTC{{SPN: 102, FMI: 3, OC: 1}}},
		// CANarchy's fixture is not SAE layout: decoding it SAE-style gives this.
		{name: "CANarchy spn175 fixture", data: []byte{0, 0, 0, 0, 0xAF, 0, 5, 1}, wantOK: true,
			dtcs: []DTC{{SPN: 327680, FMI: 15}}},
		{name: "no active", data: []byte{0, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF}, wantOK: true, dtcs: []DTC{{}}, noActive: true},
		{name: "high SPN bits and CM", data: []byte{0, 0, 0xFF, 0xFF, 0xE3, 0x81}, wantOK: true, dtcs: []DTC{{SPN: 0x7FFFF, FMI: 3, OC: 1, CM: 1}}},
		{name: "empty", data: nil},
		{name: "lamps only", data: []byte{0x04, 0}, wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dm DM
			ok := ParseDM(tc.data, &dm)
			if ok != tc.wantOK || dm.Lamps.MIL != tc.mil || dm.NoActive != tc.noActive || len(dm.DTCs) != len(tc.dtcs) {
				t.Fatalf("ParseDM = %v %+v", ok, dm)
			}
			for i := range tc.dtcs {
				if dm.DTCs[i] != tc.dtcs[i] {
					t.Errorf("DTC %d = %+v, want %+v", i, dm.DTCs[i], tc.dtcs[i])
				}
			}
		})
	}
}

func TestParseName(t *testing.T) {
	// KWTruck SA 3: NAME 6400400000030310 = id 100, mfr 2, func 3, vs 1, ind.grp 1.
	n, ok := ParseName([]byte{0x64, 0x00, 0x40, 0x00, 0x00, 0x03, 0x03, 0x10})
	if !ok || n.IdentityNumber != 100 || n.ManufacturerCode != 2 || n.Function != 3 || n.VehicleSystem != 1 || n.IndustryGroup != 1 || n.ArbitraryAddressCap || n.Hex != "6400400000030310" {
		t.Errorf("ParseName = %+v", n)
	}
	if _, ok := ParseName([]byte{1, 2}); ok {
		t.Error("short NAME accepted")
	}
}

func TestSPNDecode(t *testing.T) {
	eec1 := []byte{0xF0, 0x7D, 0x7D, 0x00, 0x1A, 0x00, 0xFF, 0x7D} // 0x1A00 × 0.125 = 832 rpm
	tests := []struct {
		name   string
		spn    uint32
		data   []byte
		value  float64
		status string
	}{
		{name: "engine speed", spn: 190, data: eec1, value: 832, status: StatusOK},
		{name: "torque offset", spn: 513, data: eec1, value: 0, status: StatusOK},
		{name: "not available", spn: 1483, data: []byte{0, 0, 0, 0, 0, 0xFF}, status: StatusNotAvailable},
		{name: "coolant", spn: 110, data: []byte{0x7D}, value: 85, status: StatusOK},
		{name: "error", spn: 110, data: []byte{0xFE}, status: StatusError},
		{name: "short", spn: 84, data: []byte{0}, status: StatusMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := LookupSPN(tc.spn)
			if !ok {
				t.Fatal("no definition")
			}
			v := d.Decode(tc.data)
			if v.Status != tc.status || (tc.status == StatusOK && v.Value != tc.value) {
				t.Errorf("Decode = %+v", v)
			}
		})
	}
}

// feedBAM sends a BAM of n bytes of pgn from sa, one DT every 50 ms.
func feedBAM(d *Decoder, t time.Time, sa uint8, pgn uint32, payload []byte) time.Time {
	packets := (len(payload) + 6) / 7
	d.Feed(t, 0x18ECFF00|uint32(sa), true, []byte{cmBAM, byte(len(payload)), byte(len(payload) >> 8), byte(packets), 0xFF, byte(pgn), byte(pgn >> 8), byte(pgn >> 16)})
	for i := range packets {
		t = t.Add(50 * time.Millisecond)
		dt := []byte{byte(i + 1), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
		copy(dt[1:], payload[i*7:])
		d.Feed(t, 0x18EBFF00|uint32(sa), true, dt)
	}
	return t
}

func TestTPReassemblyAndTimeouts(t *testing.T) {
	d := NewDecoder()
	var got []Message
	var ended []Session
	d.OnMessage = func(m *Message) {
		if m.Via != ViaDirect {
			c := *m
			c.Data = append([]byte(nil), m.Data...)
			got = append(got, c)
		}
	}
	d.OnSession = func(s Session) { ended = append(ended, s) }
	t0 := time.Unix(0, 0)
	vin := []byte("2NKHHM6X2EM406412*")
	t1 := feedBAM(d, t0, 0, PGNVIN, vin)
	if len(got) != 1 || string(got[0].Data) != string(vin) || got[0].ID.SA != 0 || got[0].ID.PGN != PGNVIN {
		t.Fatalf("reassembled = %+v", got)
	}
	// A BAM whose DTs stop: timed out after T1 plus grace, not before.
	d.Feed(t1, 0x18ECFF05, true, []byte{cmBAM, 20, 0, 3, 0xFF, 0xCA, 0xFE, 0})
	d.Feed(t1.Add(TimeoutT1), 0x18FEF100, true, []byte{0})
	if d.OpenCount() != 1 {
		t.Fatal("session ended before its timeout")
	}
	d.Feed(t1.Add(TimeoutT1+observerGrace+sweepEvery+time.Millisecond), 0x18FEF100, true, []byte{0})
	if d.OpenCount() != 0 || d.TP().TimedOut != 1 {
		t.Fatalf("open %d, counters %+v", d.OpenCount(), d.TP())
	}
	// RTS/CTS, then an abort from the receiver.
	t2 := t1.Add(5 * time.Second)
	d.Feed(t2, 0x18EC0B00, true, []byte{cmRTS, 20, 0, 3, 3, 0xCA, 0xFE, 0})
	d.Feed(t2, 0x18EC000B, true, []byte{cmAbort, 3, 0xFF, 0xFF, 0xFF, 0xCA, 0xFE, 0})
	if c := d.TP(); c.Aborted != 1 || c.RTS != 1 {
		t.Errorf("counters %+v", c)
	}
	if len(ended) != 3 || ended[2].Status != TPAborted || ended[2].AbortReason != 3 {
		t.Errorf("ended = %+v", ended)
	}
}

// TestTPFloodIsBounded: 300 spoofed sources announce at once.
func TestTPFloodIsBounded(t *testing.T) {
	d := NewDecoder()
	t0 := time.Unix(0, 0)
	for i := range 300 {
		da := uint8(i)
		d.Feed(t0, 0x18EC0000|uint32(da)<<8|uint32(i/256), true, []byte{cmRTS, 100, 0, 15, 15, 1, 0xFE, 0})
	}
	c := d.TP()
	if d.OpenCount() != MaxOpenSessions || c.Refused != 300-MaxOpenSessions {
		t.Errorf("open %d refused %d", d.OpenCount(), c.Refused)
	}
}

func FuzzJ1939TP(f *testing.F) {
	f.Add([]byte{0x20, 0x12, 0x00, 0x03, 0xFF, 0xEC, 0xFE, 0x00, 0x01, 'a', 'b', 'c', 'd', 'e', 'f', 'g'})
	f.Add([]byte{0x10, 0x0A, 0x00, 0x02, 0x02, 0xCA, 0xFE, 0x00, 0xFF, 0x01, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder()
		d.OnMessage = func(m *Message) {
			if len(m.Data) > MaxTPSize {
				t.Fatalf("message of %d bytes", len(m.Data))
			}
		}
		tm := time.Unix(0, 0)
		// Each 9-byte chunk is one frame: a selector byte then 8 data bytes.
		for len(b) >= 9 {
			sel, data := b[0], b[1:9]
			b = b[9:]
			id := uint32(0x18EC0000)
			if sel&1 != 0 {
				id = 0x18EB0000
			}
			id |= uint32(sel>>1&3)<<8 | uint32(sel>>3&3)
			tm = tm.Add(time.Duration(sel>>5) * 300 * time.Millisecond)
			d.Feed(tm, id, true, data)
		}
		if d.OpenCount() > MaxOpenSessions {
			t.Fatalf("%d open sessions", d.OpenCount())
		}
	})
}

func FuzzParseDM1(f *testing.F) {
	f.Add([]byte{0xC0, 0xFF, 0xA8, 0x00, 0x11, 0x7E, 0xFF, 0xFF})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var dm DM
		ParseDM(b, &dm)
		if len(dm.DTCs) > MaxDTCs || len(dm.DTCs) > len(b)/dtcLen {
			t.Fatalf("%d DTCs from %d bytes", len(dm.DTCs), len(b))
		}
		for _, d := range dm.DTCs {
			if d.SPN > 0x7FFFF || d.FMI > 31 || d.OC > 127 || d.CM > 1 {
				t.Fatalf("field out of range: %+v", d)
			}
		}
	})
}
