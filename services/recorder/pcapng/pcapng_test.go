package pcapng

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

// sample is a section with two interfaces and three packets, one with a
// comment, and the offsets where each block ends.
func sample() ([]byte, []int) {
	var b []byte
	var ends []int
	mark := func() { ends = append(ends, len(b)) }
	b = AppendSHB(b, "fieldtap test")
	mark()
	b = AppendIDB(b, Interface{Link: 1, SnapLen: 262144, Name: "span0"})
	mark()
	b = AppendIDB(b, Interface{Link: 227, SnapLen: 16, Name: "can0", Description: "J1939"})
	mark()
	b = AppendEPB(b, Packet{Interface: 0, Time: t0, Data: []byte{1, 2, 3, 4, 5}, OrigLen: 60})
	mark()
	b = AppendEPB(b, Packet{Interface: 1, Time: t0.Add(time.Millisecond), Data: []byte{0x98, 0xfe, 0xca, 0, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}})
	mark()
	b = AppendEPB(b, Packet{Interface: 0, Time: t0.Add(2 * time.Millisecond), Data: []byte{9}, Comment: "3 frames not recorded"})
	mark()
	return b, ends
}

func scanAll(b []byte) ([]Record, int64, error) {
	s := NewScanner(bytes.NewReader(b))
	var out []Record
	for {
		r, err := s.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, s.Offset(), err
		}
		r.Packet.Data = bytes.Clone(r.Packet.Data)
		out = append(out, r)
	}
}

func TestRoundTrip(t *testing.T) {
	b, ends := sample()
	recs, off, err := scanAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if off != int64(len(b)) || len(recs) != len(ends) {
		t.Fatalf("offset %d of %d, %d records of %d", off, len(b), len(recs), len(ends))
	}
	want := []struct {
		kind string
		name string
		data []byte
		orig int
		at   time.Time
		note string
	}{
		{kind: KindSection},
		{kind: KindInterface, name: "span0"},
		{kind: KindInterface, name: "can0"},
		{kind: KindPacket, name: "span0", data: []byte{1, 2, 3, 4, 5}, orig: 60, at: t0},
		{kind: KindPacket, name: "can0", data: []byte{0x98, 0xfe, 0xca, 0, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, orig: 16, at: t0.Add(time.Millisecond)},
		{kind: KindPacket, name: "span0", data: []byte{9}, orig: 1, at: t0.Add(2 * time.Millisecond), note: "3 frames not recorded"},
	}
	for i, w := range want {
		r := recs[i]
		if r.Kind != w.kind || r.Interface.Name != w.name {
			t.Errorf("record %d: %s %q, want %s %q", i, r.Kind, r.Interface.Name, w.kind, w.name)
		}
		if w.kind != KindPacket {
			continue
		}
		if !bytes.Equal(r.Packet.Data, w.data) || r.Packet.OrigLen != w.orig || !r.Packet.Time.Equal(w.at) || r.Packet.Comment != w.note {
			t.Errorf("packet %d = %+v", i, r.Packet)
		}
	}
	if recs[2].Interface.Link != 227 || recs[2].Interface.Description != "J1939" || recs[2].Interface.SnapLen != 16 {
		t.Errorf("can0 interface = %+v", recs[2].Interface)
	}
}

// TestTornTailIsCutAtTheLastWholeBlock cuts the file at every byte: the
// scan keeps exactly the blocks that end at or before the cut.
func TestTornTailIsCutAtTheLastWholeBlock(t *testing.T) {
	b, ends := sample()
	for cut := 0; cut <= len(b); cut++ {
		recs, off, err := scanAll(b[:cut])
		whole := 0
		for _, e := range ends {
			if e <= cut {
				whole = e
			}
		}
		if off != int64(whole) {
			t.Fatalf("cut %d: offset %d, want %d", cut, off, whole)
		}
		clean := cut == whole
		if clean != (err == nil) {
			t.Fatalf("cut %d at block end %v: err %v", cut, clean, err)
		}
		var ce *CorruptError
		if err != nil && (!errors.As(err, &ce) || ce.Offset != int64(whole)) {
			t.Fatalf("cut %d: err %v, want a CorruptError at %d", cut, err, whole)
		}
		n := 0
		for _, e := range ends {
			if e <= cut {
				n++
			}
		}
		if len(recs) != n {
			t.Fatalf("cut %d: %d records, want %d", cut, len(recs), n)
		}
	}
}

func TestBadBlocksAreRefused(t *testing.T) {
	b, ends := sample()
	last := ends[len(ends)-2] // start of the last packet
	mutate := func(b []byte, fn func(c []byte)) []byte { c := bytes.Clone(b); fn(c); return c }
	cases := []struct {
		name   string
		data   []byte
		reason string
	}{
		{name: "trailing length differs", data: mutate(b, func(c []byte) { c[len(c)-4]++ }), reason: "trailing length"},
		{name: "length below 12", data: mutate(b, func(c []byte) { le.PutUint32(c[last+4:], 8) }), reason: "below the minimum"},
		{name: "length not a multiple of 4", data: mutate(b, func(c []byte) { le.PutUint32(c[last+4:], 42) }), reason: "multiple of 4"},
		{name: "zeros after the last block", data: append(bytes.Clone(b), make([]byte, 4096)...), reason: "below the minimum"},
		{name: "unknown interface", data: mutate(b, func(c []byte) { le.PutUint32(c[last+8:], 7) }), reason: "interface 7 of 2"},
		{name: "no section header", data: b[ends[0]:], reason: "not a section header"},
		{name: "huge length", data: mutate(b, func(c []byte) { le.PutUint32(c[last+4:], 1<<30) }), reason: "exceeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := scanAll(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("err %v, want one saying %q", err, tc.reason)
			}
		})
	}
}

// TestBigEndianSection reads a section written in the other byte order.
func TestBigEndianSection(t *testing.T) {
	var b []byte
	put := func(v ...uint32) {
		for _, x := range v {
			b = append(b, byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
		}
	}
	put(BlockSHB, 28, byteOrderMagic, 1<<16, 0xFFFFFFFF, 0xFFFFFFFF, 28)
	put(BlockIDB, 20, 1<<16, 65535, 20)
	put(BlockEPB, 36, 0, 0, 1_000_000, 4, 4, 0xDEADBEEF, 36) // 1 s at the default µs resolution
	recs, _, err := scanAll(b)
	if err != nil {
		t.Fatal(err)
	}
	p := recs[2].Packet
	if !p.Time.Equal(time.Unix(1, 0)) || !bytes.Equal(p.Data, []byte{0xDE, 0xAD, 0xBE, 0xEF}) {
		t.Errorf("packet %+v", p)
	}
}

// TestTsharkReadsWhatIsWritten: an independent reader sees the same
// interfaces, times and lengths.
func TestTsharkReadsWhatIsWritten(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (apt-get install tshark)")
	}
	b, _ := sample()
	path := filepath.Join(t.TempDir(), "s.pcapng")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.interface_name", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len", "-e", "frame.comment").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("tshark read %d packets:\n%s", len(lines), out)
	}
	want := [][]string{
		{"span0", "1796119200.123456789", "60", "5"},
		{"can0", "1796119200.124456789", "16", "16"},
		{"span0", "1796119200.125456789", "1", "1", "3 frames not recorded"},
	}
	for i, w := range want {
		got := strings.Split(lines[i], "\t")
		for j := range w {
			if j >= len(got) || got[j] != w[j] {
				t.Errorf("packet %d: tshark %q, want %q", i, got, w)
				break
			}
		}
	}
}

func FuzzScan(f *testing.F) {
	b, ends := sample()
	f.Add(b)
	f.Add(b[:ends[3]+7])
	f.Add(append(bytes.Clone(b), 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, off, _ := scanAll(data)
		if off > int64(len(data)) {
			t.Fatalf("offset %d past %d bytes", off, len(data))
		}
		// What the scan kept is whole: scanning only it ends cleanly with
		// the same blocks.
		again, off2, err := scanAll(data[:off])
		if err != nil || off2 != off || len(again) != len(recs) {
			t.Fatalf("rescan of the kept %d bytes: %d records (want %d), offset %d, err %v", off, len(again), len(recs), off2, err)
		}
	})
}

func BenchmarkAppendEPB(b *testing.B) {
	buf := make([]byte, 0, 1<<20)
	data := make([]byte, 200)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(buf) > 1<<20-512 {
			buf = buf[:0]
		}
		buf = AppendEPB(buf, Packet{Interface: 0, Time: t0, Data: data})
	}
}

// TestResumeMidSection continues a scan at a packet's offset with the
// interfaces declared before it, as the recorder does from its index.
func TestResumeMidSection(t *testing.T) {
	b, ends := sample()
	all, _, err := scanAll(b)
	if err != nil {
		t.Fatal(err)
	}
	ifaces := []Interface{all[1].Interface, all[2].Interface}
	s := NewScannerAt(bytes.NewReader(b[ends[3]:]), int64(ends[3]), ifaces)
	r, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != int64(ends[3]) || r.Interface.Name != "can0" || !r.Packet.Time.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("resumed record %+v", r)
	}
}
