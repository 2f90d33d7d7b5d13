// Package canbustest fills canbus ports from candump logs for the tests of
// the analysers that read a port's frame ring (isotp, j1939 windows, dbc,
// canre): the frames a real port would have stored, in file order.
package canbustest

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// MaxFrames is the ring size Load gives a port: larger than every
// reference log (the biggest holds ~30 000 frames), so nothing is evicted.
const MaxFrames = 1 << 20

// Load reads the candump log at path (-l or pretty format) into a new
// port named port; lines that are not frames are skipped and counted in
// the second result. A file that cannot be read fails the test.
func Load(t testing.TB, path, port string) (*canbus.Port, int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return LoadBytes(t, raw, port)
}

// LoadBytes is Load over a log already in memory.
func LoadBytes(t testing.TB, log []byte, port string) (*canbus.Port, int) {
	t.Helper()
	s, err := canbus.New(ring.Limits{Items: MaxFrames, Bytes: MaxFrames * canbus.FrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Port(port, 0)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	var r wire.CandumpRecord
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		if wire.DecodeCandump(sc.Bytes(), &r) != nil {
			skipped++
			continue
		}
		p.Add(r.Time, r.ID, r.Payload())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p, skipped
}
