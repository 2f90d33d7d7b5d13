package slcan

import (
	"bytes"
	"errors"
	"fieldtap/drivers/wire"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		id     uint32
		data   []byte
		ts     int
		reason string // "" = valid
	}{
		{name: "standard", line: "t1238DEADBEEF01020304", id: 0x123, data: []byte{0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4}, ts: -1},
		{name: "standard lower hex", line: "t7ff2abcd", id: 0x7FF, data: []byte{0xAB, 0xCD}, ts: -1},
		{name: "standard empty", line: "t0000", id: 0, data: []byte{}, ts: -1},
		{name: "standard timestamp", line: "t12320102EA5F", id: 0x123, data: []byte{1, 2}, ts: 0xEA5F},
		{name: "extended J1939", line: "T18FECA008FFFF0000FFFFFFFF", id: wire.CANEFF | 0x18FECA00, data: []byte{0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}, ts: -1},
		{name: "extended timestamp", line: "T0CF004003F0FFFF1234", id: wire.CANEFF | 0x0CF00400, data: []byte{0xF0, 0xFF, 0xFF}, ts: 0x1234},
		{name: "remote standard", line: "r1230", id: wire.CANRTR | 0x123, data: []byte{}, ts: -1},
		{name: "remote extended with dlc and timestamp", line: "R18EAFF0030010", id: wire.CANEFF | wire.CANRTR | 0x18EAFF00, data: []byte{}, ts: 0x10},
		{name: "empty", line: "", reason: ReasonShort},
		{name: "version reply", line: "V1013", reason: ReasonUnknown},
		{name: "short id", line: "t12", reason: ReasonShort},
		{name: "bad id hex", line: "t1G30", reason: ReasonBadHex},
		{name: "bad dlc hex", line: "t123X", reason: ReasonBadHex},
		{name: "dlc 9", line: "t1239000000000000000000", reason: ReasonDLC},
		{name: "missing data", line: "t1234DEAD", reason: ReasonLength},
		{name: "odd trailing", line: "t1231AB1", reason: ReasonLength},
		{name: "bad data hex", line: "t1232ZZ00", reason: ReasonBadHex},
		{name: "bad timestamp hex", line: "t1231AB12G4", reason: ReasonBadHex},
		{name: "timestamp at wrap", line: "t1231ABEA60", reason: ReasonTimestamp},
		{name: "11-bit id too large", line: "t8000", reason: ReasonIDRange},
		{name: "29-bit id too large", line: "T200000000", reason: ReasonIDRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseLine([]byte(tc.line))
			if tc.reason != "" {
				var le *LineError
				if !errors.As(err, &le) || le.Reason != tc.reason {
					t.Fatalf("err = %v, want reason %q", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.ID != tc.id || !bytes.Equal(f.Payload(), tc.data) || f.Timestamp != tc.ts {
				t.Errorf("got id %#x data % x ts %d, want %#x % x %d", f.ID, f.Payload(), f.Timestamp, tc.id, tc.data, tc.ts)
			}
		})
	}
}

func TestParseLineDoesNotAllocate(t *testing.T) {
	line := []byte("T18FECA008FFFF0000FFFFFFFF1234")
	if n := testing.AllocsPerRun(100, func() { _, _ = parseLine(line) }); n != 0 {
		t.Errorf("%v allocs per line, want 0", n)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"t1238DEADBEEF01020304", "t12320102EA5F", "T18FECA008FFFF0000FFFFFFFF",
		"T0CF004003F0FFFF1234", "r1230", "R18EAFF0030010", "t0000", "V1013",
		"t1239000000000000000000", "t8000", "T200000000", "z", "F00", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := parseLine(b)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Reason == "" {
				t.Fatalf("error %v carries no reason", err)
			}
			return
		}
		if fr.Len > maxData {
			t.Fatalf("len %d", fr.Len)
		}
		if len(b) > maxLine {
			t.Fatalf("accepted a %d-byte line, longer than maxLine %d", len(b), maxLine)
		}
		if fr.ID&wire.CANEFF == 0 && fr.ID&wire.CANEFFMask > 0x7FF {
			t.Fatalf("standard id %#x", fr.ID)
		}
		if _, err := wire.EncodeCAN(fr.ID, fr.Payload()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSplitter(t *testing.T) {
	type tok struct {
		k    tokenKind
		line string
	}
	long := bytes.Repeat([]byte{'A'}, maxLine+5)
	tests := []struct {
		name string
		in   []byte
		want []tok
	}{
		{name: "lines", in: []byte("t1230\rT000000010\r"), want: []tok{{tokLine, "t1230"}, {tokLine, "T000000010"}}},
		{name: "cr lf", in: []byte("t1230\r\n"), want: []tok{{tokLine, "t1230"}}},
		{name: "plain ack", in: []byte("\r"), want: []tok{{k: tokAck}}},
		{name: "z ack glued", in: []byte("zt1230\rZ\r"), want: []tok{{k: tokAck}, {tokLine, "t1230"}, {k: tokAck}}},
		{name: "z then its CR is one ack", in: []byte("z\rz\r\r"), want: []tok{{k: tokAck}, {k: tokAck}, {k: tokAck}}},
		{name: "bell", in: []byte("\at1230\r"), want: []tok{{k: tokBell}, {tokLine, "t1230"}}},
		{name: "bell ends a partial line", in: []byte("t12\a"), want: []tok{{tokLine, "t12"}, {k: tokBell}}},
		{name: "overlong then line", in: append(append(long, '\r'), "t1230\r"...), want: []tok{{k: tokOverlong}, {tokLine, "t1230"}}},
		{name: "partial stays pending", in: []byte("t123"), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s splitter
			var got []tok
			// Feed a byte at a time: reads split lines anywhere.
			for i := range tc.in {
				s.feed(tc.in[i:i+1], func(k tokenKind, line []byte) { got = append(got, tok{k, string(line)}) })
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("token %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
