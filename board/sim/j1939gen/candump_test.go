package j1939gen

import (
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// candumpLine is the candump -l format: (seconds.micros) iface ID#DATA.
var candumpLine = regexp.MustCompile(`^\((\d+)\.(\d{6})\) (\S+) ([0-9A-F]{8})#((?:[0-9A-F]{2}){0,8})$`)

func TestCandumpParsesBack(t *testing.T) {
	tests := []struct {
		name  string
		o     Options
		iface string
	}{
		{name: "default interface", o: Options{Seed: 1, Start: t0, Duration: 3 * time.Second}, iface: DefaultInterface},
		{name: "named interface", o: Options{Seed: 2, Start: t0.Add(time.Hour), Duration: 2 * time.Second, Interface: "vcan1"}, iface: "vcan1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := collect(t, tc.o)
			lines := strings.Split(strings.TrimSuffix(string(candump(t, tc.o)), "\n"), "\n")
			if len(lines) != len(fs) {
				t.Fatalf("%d lines for %d frames", len(lines), len(fs))
			}
			for i, l := range lines {
				m := candumpLine.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("line %d %q is not candump -l format", i+1, l)
				}
				sec, _ := strconv.ParseInt(m[1], 10, 64)
				us, _ := strconv.ParseInt(m[2], 10, 64)
				id, _ := strconv.ParseUint(m[4], 16, 32)
				data, _ := hex.DecodeString(m[5])
				f := fs[i]
				if at := time.Unix(sec, us*1000); !at.Equal(f.Time) || m[3] != tc.iface || uint32(id) != f.ID || string(data) != string(f.Data) {
					t.Fatalf("line %d %q; want frame at %v on %s: %08X#% X", i+1, l, f.Time, tc.iface, f.ID, f.Data)
				}
			}
		})
	}
}
