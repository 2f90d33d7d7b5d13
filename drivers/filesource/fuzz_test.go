package filesource

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/drivers/canfiles"
	"fieldtap/drivers/canlog"
	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// fuzzSeedBytes bounds a seed: detection reads only a file's head.
const fuzzSeedBytes = 2 << 10

// FuzzDetect detects the kind of anything: no input panics, and a kind
// Detect names is one the head really has (the magic number, or a first
// deciding line its reader takes), so Open never hands a file to the
// wrong reader.
func FuzzDetect(f *testing.F) {
	for _, dir := range []string{"sip", "can", "j1708"} {
		paths, _ := filepath.Glob(filepath.Join(refdata.Path(f, dir), "*"))
		for _, p := range paths {
			if fh, err := os.Open(p); err == nil {
				b, _ := io.ReadAll(io.LimitReader(fh, fuzzSeedBytes))
				fh.Close()
				f.Add(b)
			}
		}
	}
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0})
	f.Add([]byte("# comment\n\n(1608041700.316550) can0 18FECA00#0102\n"))
	f.Add([]byte("\n(1.688000) j1708 80020028FF55007900B72600B80000F4\n"))
	f.Add([]byte("these are my notes\n"))
	f.Add([]byte("\xEF\xBB\xBF// exported\r\ndate Wed Jun 12 03:04:56 2019\r\n"))
	f.Add([]byte(";$FILEVERSION=2.1\r\n;$STARTTIME=43628.6284\r\n"))
	f.Add([]byte(";####\n     1)      1841  0001  8  00 00 00 00 00 00 00 00\n"))
	f.Add([]byte("Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n"))
	f.Add([]byte("LOGG\x90\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		format, err := Detect(bytes.NewReader(b))
		if err != nil {
			if format != "" {
				t.Fatalf("an error with a format %q", format)
			}
			return
		}
		switch format {
		case FormatPcap:
			if pcapfile.Sniff(b) == "" {
				t.Fatal("pcap detected without a magic number")
			}
			return
		case FormatBLF:
			if canfiles.Sniff(b) != canfiles.BLF {
				t.Fatal("BLF detected without its signature")
			}
			return
		}
		// The first line that is not blank or a comment decides; ; and //
		// lines are comments before a vendor log's first line.
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := bytes.TrimSpace(bytes.TrimPrefix(sc.Bytes(), []byte("\xEF\xBB\xBF")))
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			if v := canfiles.SniffLine(line); v != canfiles.NotVendor && !canlog.Looks(line) {
				if _, j1708err := wire.ParseJ1708Line(line); j1708err != nil && Format(v) != format {
					t.Fatalf("detected %s from a first %s line %q", format, v, line)
				}
				return
			}
			if line[0] == ';' || bytes.HasPrefix(line, []byte("//")) {
				continue
			}
			_, j1708err := wire.ParseJ1708Line(line)
			if (format == FormatCandump) != canlog.Looks(line) || (format == FormatJ1708 && j1708err != nil) {
				t.Fatalf("detected %s from a first line %q", format, line)
			}
			return
		}
	})
}
