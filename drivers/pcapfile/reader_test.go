package pcapfile

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

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
	if recs[4].Link != layers.LinkTypeEthernet || len(recs[4].Data) != 64 || recs[4].Data[0] != 4 {
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
	if recs[0].Link != layers.LinkTypeEthernet || recs[1].Link != layers.LinkTypeLinuxSLL {
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
