package j1708gen

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/tools/refdata"
)

// logLine is one "(seconds) j1708 HEX" line.
var logLine = regexp.MustCompile(`^\((-?)(\d+)\.(\d{6})\) j1708 ((?:[0-9A-F]{2})+)$`)

// parseLine returns a line's offset and bytes.
func parseLine(l string) (time.Duration, []byte, bool) {
	m := logLine.FindStringSubmatch(l)
	if m == nil {
		return 0, nil, false
	}
	sec, _ := strconv.ParseInt(m[2], 10, 64)
	us, _ := strconv.ParseInt(m[3], 10, 64)
	d := time.Duration(sec)*time.Second + time.Duration(us)*time.Microsecond
	if m[1] == "-" {
		d = -d
	}
	data, err := hex.DecodeString(m[4])
	return d, data, err == nil
}

func TestLogParsesBack(t *testing.T) {
	o := Options{Seed: 7, Start: t0.Add(1688 * time.Millisecond), Duration: 20 * time.Second}
	tests := []struct {
		name string
		t0   time.Time
	}{
		{name: "from start", t0: o.Start},
		{name: "from an earlier origin", t0: t0},
		{name: "from a later origin", t0: o.Start.Add(5 * time.Second)},
	}
	ms := collect(t, o)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteLog(&b, o, tc.t0); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != len(ms) {
				t.Fatalf("%d lines for %d messages", len(lines), len(ms))
			}
			for i, l := range lines {
				d, data, ok := parseLine(l)
				want := ms[i].Time.Sub(tc.t0).Truncate(time.Microsecond)
				if !ok || d != want || !bytes.Equal(data, ms[i].Data) {
					t.Fatalf("line %d %q; want %v: % X", i+1, l, want, ms[i].Data)
				}
			}
		})
	}
}

// TestReferenceFormat parses the real school-bus log with the same
// parser, so the two formats cannot drift apart.
func TestReferenceFormat(t *testing.T) {
	const (
		ref      = "jdaily_schoolbus_vspy.j1708"
		messages = 10018 // PROVENANCE.md reference answers
		valid    = 10008
	)
	f, err := os.Open(refdata.File(t, "j1708", ref))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, ok := 0, 0
	for s := bufio.NewScanner(f); s.Scan(); n++ {
		_, data, parsed := parseLine(s.Text())
		if !parsed {
			t.Fatalf("%s line %d %q does not parse", ref, n+1, s.Text())
		}
		var sum byte
		for _, b := range data {
			sum += b
		}
		if sum == 0 {
			ok++
		}
	}
	if n != messages || ok != valid {
		t.Fatalf("%s: %d messages, %d checksum-valid; want %d and %d", ref, n, ok, messages, valid)
	}
}
