package filesource

import (
	"bufio"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// TestDescribePcapMatchesTshark: the first and last frame times Describe
// gives a reference pcap and pcapng are tshark's first and last
// frame.time_epoch.
func TestDescribePcapMatchesTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark (Debian package tshark) is not installed")
	}
	for name, container := range map[string]pcapfile.Format{"SIP_CALL_RTP_G711.pcap": pcapfile.FormatPcap, "branch-scenario-sipp.pcapng": pcapfile.FormatPcapng} {
		path := refdata.File(t, "sip", name)
		d, err := Describe(path, MaxScanBytes)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.time_epoch").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Fields(string(out))
		first, last := epoch(t, lines[0]), epoch(t, lines[len(lines)-1])
		if d.Format != FormatPcap || d.Container != container || !d.First.Equal(first) || !d.Last.Equal(last) {
			t.Errorf("%s: %+v; tshark: %s to %s over %d frames", name, d, first, last, len(lines))
		}
		t.Logf("%s: %s, %s to %s (%d frames)", name, d.Container, d.First.Format(time.RFC3339Nano), d.Last.Format(time.RFC3339Nano), len(lines))
	}
}

func epoch(t *testing.T, s string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Unix(n, ns)
}

// TestDescribeTextLogs: a candump log's and a J1708 log's span is the
// time of their first and last lines that parse, read by hand here.
func TestDescribeTextLogs(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		format    Format
		at        func([]byte) (time.Time, bool)
	}{
		{"can", "canarchy_j1939_large_benchmark.candump", FormatCandump, candumpTime},
		{"j1708", "jdaily_schoolbus_vspy.j1708", FormatJ1708, j1708Time},
	} {
		path := refdata.File(t, c.dir, c.name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var first, last time.Time
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if tm, ok := c.at(sc.Bytes()); ok {
				if first.IsZero() {
					first = tm
				}
				last = tm
			}
		}
		f.Close()
		d, err := Describe(path, MaxScanBytes)
		if err != nil {
			t.Fatal(err)
		}
		if d.Format != c.format || first.IsZero() || !d.First.Equal(first) || !d.Last.Equal(last) {
			t.Errorf("%s: %+v; by hand %s to %s", c.name, d, first, last)
		}
		t.Logf("%s: %s, %s to %s", c.name, d.Format, d.First.Format(time.RFC3339Nano), d.Last.Format(time.RFC3339Nano))
	}
}

// TestDescribeBoundsAndRefusals: a pcap over MaxScanBytes has its first
// frame and says why it has no last; a file that is no capture carries
// Detect's reason.
func TestDescribeBoundsAndRefusals(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pcap")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0).UTC()
	// A microsecond pcap of Ethernet frames, written by hand.
	bw := bufio.NewWriter(f)
	le := binary.LittleEndian
	bw.Write(le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint16(le.AppendUint16(le.AppendUint32(nil, 0xa1b2c3d4), 2), 4), 0), 0), 65535), 1))
	frame := make([]byte, 1400)
	for i := 0; int64(i)*1416 <= MaxScanBytes; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		bw.Write(le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, uint32(at.Unix())), uint32(at.Nanosecond()/1000)), 1400), 1400))
		bw.Write(frame)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := Describe(big, MaxScanBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !d.First.Equal(t0) || !d.Last.IsZero() || !strings.Contains(d.LastNotComputed, "no index") {
		t.Errorf("big pcap: %+v", d)
	}
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("these are my notes\n"), 0o600)
	if d, err := Describe(notes, MaxScanBytes); err != nil || d.Format != "" || !strings.Contains(d.Refused, "not a capture") {
		t.Errorf("notes: %+v %v", d, err)
	}
	var log []byte
	for i := range 3 {
		log = wire.AppendCandump(log, t0.Add(time.Duration(i)*time.Second), "can0", 0x123, []byte{1})
	}
	os.WriteFile(filepath.Join(dir, "a.log"), append(log, "(17"...), 0o600) // a cut last line
	if d, _ := Describe(filepath.Join(dir, "a.log"), MaxScanBytes); !d.First.Equal(t0) || !d.Last.Equal(t0.Add(2*time.Second)) {
		t.Errorf("cut candump: %+v", d)
	}
}

// FuzzDescribe describes anything written to a file: no input panics,
// and a last time is never before the first.
func FuzzDescribe(f *testing.F) {
	f.Add([]byte("(1.000000) can0 123#01\n(2.000000) can0 123#02\n"))
	f.Add([]byte("(1.688000) j1708 80020028FF55007900B72600B80000F4\n(2.0) j1708 80\n"))
	f.Add([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0})
	f.Add([]byte("(1.000000) can0 123#01\n\n# x\n(0.5) can0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := Describe(p, MaxScanBytes)
		if err != nil {
			t.Fatal(err)
		}
		if d.Format == "" && d.Refused == "" {
			t.Errorf("neither a format nor a reason: %+v", d)
		}
	})
}
