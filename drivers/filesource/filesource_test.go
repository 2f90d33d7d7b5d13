package filesource

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/capture"
)

func TestOpenDetectsByContent(t *testing.T) {
	dir := t.TempDir()
	pcapHeader := []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0}
	for _, tc := range []struct {
		name    string
		content []byte
		kind    capture.Kind
	}{
		// Names lie on purpose: only the content decides.
		{"a.log", pcapHeader, capture.KindEthernet},
		{"b.pcap", []byte("(1608041700.316550) can0 18FECA00#0102\n"), capture.KindCAN},
		{"c.txt", []byte("\n(1.688000) j1708 80020028FF55007900B72600B80000F4\n"), capture.KindJ1708},
		{"d.log", []byte("date Wed Jun 12 03:04:56.789 pm 2019\nbase hex  timestamps absolute\n"), capture.KindCAN},
		{"e.asc", []byte("\xEF\xBB\xBF// exported\r\ndate Wed Jun 12 03:04:56 2019\r\n"), capture.KindCAN},
		{"f.txt", append([]byte("LOGG\x90\x00\x00\x00"), make([]byte, 136)...), capture.KindCAN},
		{"g.csv", []byte(";$FILEVERSION=2.1\r\n"), capture.KindCAN},
		{"h.trc", []byte(strings.Repeat(";   header line\n", 20) + "     1)      1841  0001  8  00 00 00 00 00 00 00 00\n"), capture.KindCAN},
		{"i.log", []byte("Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n"), capture.KindCAN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := Open("file1", p, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if src.Kind() != tc.kind || src.Live() || src.Name() != "file1" {
				t.Errorf("got kind %s live %v name %s", src.Kind(), src.Live(), src.Name())
			}
		})
	}
}

func TestDetectNamesVendorFormats(t *testing.T) {
	for content, want := range map[string]Format{
		"date Wed Jun 12 03:04:56.789 pm 2019\n":   FormatASC,
		"LOGG\x90\x00\x00\x00":                     FormatBLF,
		";$FILEVERSION=1.3\n":                      FormatTRC,
		"Time Stamp,ID,Extended,Bus,LEN,D1\n":      FormatSavvyCSV,
		"(1608041700.316550) can0 18FECA00#0102\n": FormatCandump,
	} {
		if got, err := Detect(strings.NewReader(content)); got != want || err != nil {
			t.Errorf("Detect(%.20q) = %q, %v; want %q", content, got, err, want)
		}
	}
	_, err := Detect(strings.NewReader(strings.Repeat(";\n", sniffCommentLines+1)))
	if err == nil || !strings.Contains(err.Error(), "comment lines") {
		t.Errorf("a file of comments only: %v", err)
	}
}

func TestOpenRejectsUnknownContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.pcap")
	os.WriteFile(p, bytes.Repeat([]byte("hello world\n"), 3), 0o644)
	_, err := Open("file1", p, slog.Default())
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "byte offset 0") {
		t.Fatalf("err = %v, want an error naming the file and offset", err)
	}
}
