package pcapfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

func pcapBytes(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		data := bytes.Repeat([]byte{byte(i)}, 60+i)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func pcapngBytes(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, SnapLength: 65535, TimestampResolution: 9}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface(pcapgo.NgInterface{LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535, TimestampResolution: 6}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		data := bytes.Repeat([]byte{byte(i)}, 60+i)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(data), Length: len(data) + 4, InterfaceIndex: i % 2}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t *testing.T, b []byte) ([]Record, error) {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		rec.Data = bytes.Clone(rec.Data)
		out = append(out, rec)
	}
}

func TestReadPcapNanos(t *testing.T) {
	recs, err := readAll(t, pcapBytes(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("got %d records, want 5", len(recs))
	}
	if !recs[0].Time.Equal(t0) {
		t.Errorf("time = %v, want %v (nanoseconds kept)", recs[0].Time, t0)
	}
	if recs[4].Link != wire.LinkEthernet || len(recs[4].Data) != 64 || recs[4].Data[0] != 4 {
		t.Errorf("record 4 = %+v", recs[4])
	}
}

func TestReadPcapngInterfaces(t *testing.T) {
	recs, err := readAll(t, pcapngBytes(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	if recs[0].Link != wire.LinkEthernet || recs[1].Link != wire.LinkLinuxSLL {
		t.Errorf("links = %v, %v: each interface keeps its own link type", recs[0].Link, recs[1].Link)
	}
	if !recs[0].Time.Equal(t0) {
		t.Errorf("ns interface time = %v, want %v", recs[0].Time, t0)
	}
	// pcapgo writes every interface at nanosecond resolution; microsecond
	// files are covered by TestReferenceCaptures.
	if want := t0.Add(time.Millisecond); !recs[1].Time.Equal(want) {
		t.Errorf("second interface time = %v, want %v", recs[1].Time, want)
	}
	if recs[2].OrigLen != 66 {
		t.Errorf("orig len = %d, want 66", recs[2].OrigLen)
	}
}

// TestBigEndianFiles reads the same packets from files written
// big-endian, as a big-endian host's capture tools write them: every
// field the reader decodes must come out the same.
func TestBigEndianFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
		swap func(t *testing.T, le []byte) []byte
	}{
		{"pcap", pcapBytes(t, 5), swapPcap},
		{"pcapng", pcapngBytes(t, 5), swapPcapng},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := readAll(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			be := tc.swap(t, tc.file)
			if rd, err := NewReader(bytes.NewReader(be)); err != nil || rd.order != bigEndian {
				t.Fatalf("swapped file not read as big-endian (err %v)", err)
			}
			got, err := readAll(t, be)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("big-endian file gave %d records, little-endian %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if !g.Time.Equal(w.Time) || g.Link != w.Link || g.Interface != w.Interface || !bytes.Equal(g.Data, w.Data) || g.OrigLen != w.OrigLen || g.Offset != w.Offset {
					t.Errorf("record %d: big-endian %+v, little-endian %+v", i, g, w)
				}
			}
		})
	}
}

// swapPcap rewrites a little-endian pcap file big-endian.
func swapPcap(t *testing.T, le []byte) []byte {
	be := bytes.Clone(le)
	swap32(be[0:])
	swap16(be[4:])
	swap16(be[6:])
	for off := 8; off < 24; off += 4 {
		swap32(be[off:])
	}
	for off := 24; off < len(be); {
		incl := int(binary.LittleEndian.Uint32(le[off+8:]))
		for f := 0; f < 16; f += 4 {
			swap32(be[off+f:])
		}
		off += 16 + incl
	}
	return be
}

// swapPcapng rewrites a little-endian pcapng file of section header,
// interface description and enhanced packet blocks big-endian.
func swapPcapng(t *testing.T, le []byte) []byte {
	be := bytes.Clone(le)
	for off := 0; off < len(le); {
		btype, blen := binary.LittleEndian.Uint32(le[off:]), int(binary.LittleEndian.Uint32(le[off+4:]))
		body, opts := off+8, 0
		switch btype {
		case blockSHB:
			swap32(be[body:]) // byte-order magic
			swap16(be[body+4:])
			swap16(be[body+6:])
			swap64(be[body+8:])
			opts = body + 16
		case blockIDB:
			swap16(be[body:])
			swap16(be[body+2:])
			swap32(be[body+4:])
			opts = body + 8
		case blockEPB:
			for f := 0; f < 20; f += 4 {
				swap32(be[body+f:])
			}
			opts = body + 20 + (int(binary.LittleEndian.Uint32(le[body+12:]))+3)&^3
		default:
			t.Fatalf("block type %d at %d: not one the test swaps", btype, off)
		}
		for opts < off+blen-4 {
			olen := int(binary.LittleEndian.Uint16(le[opts+2:]))
			swap16(be[opts:])
			swap16(be[opts+2:])
			opts += 4 + (olen+3)&^3
		}
		if btype != blockSHB {
			swap32(be[off:])
		}
		swap32(be[off+4:])
		swap32(be[off+blen-4:])
		off += blen
	}
	return be
}

func swap16(b []byte) { binary.BigEndian.PutUint16(b, binary.LittleEndian.Uint16(b)) }
func swap32(b []byte) { binary.BigEndian.PutUint32(b, binary.LittleEndian.Uint32(b)) }
func swap64(b []byte) { binary.BigEndian.PutUint64(b, binary.LittleEndian.Uint64(b)) }

func TestTruncatedFileNamesOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"pcap", pcapBytes(t, 3)},
		{"pcapng", pcapngBytes(t, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut := tc.file[:len(tc.file)-10]
			recs, err := readAll(t, cut)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FormatError", err)
			}
			if len(recs) != 2 {
				t.Errorf("read %d records before the fault, want 2", len(recs))
			}
			if fe.Offset <= 0 || fe.Offset >= int64(len(cut)) {
				t.Errorf("offset %d outside the file (len %d)", fe.Offset, len(cut))
			}
		})
	}
}

func TestNotACapture(t *testing.T) {
	_, err := NewReader(bytes.NewReader([]byte("hello, this is text\n")))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 0 {
		t.Fatalf("err = %v, want FormatError at offset 0", err)
	}
}

func TestOversizeRecordRefused(t *testing.T) {
	b := pcapBytes(t, 1)
	// Rewrite the first record's captured length to 2 GiB.
	b[24+8], b[24+9], b[24+10], b[24+11] = 0, 0, 0, 0x80
	_, err := readAll(t, b)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 24 {
		t.Fatalf("err = %v, want FormatError at offset 24", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(pcapBytes(f, 2))
	f.Add(pcapngBytes(f, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for range 10000 {
			if _, err := rd.Next(); err != nil {
				return
			}
		}
	})
}
