package mcp

import (
	"bufio"
	"bytes"
	"os"
	"testing"
	"time"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
)

// vehicleFrames is what a vehicle test feeds: frames of one port, in
// order, as the daemon's feedCAN hands them to every CAN store.
type vehicleFrame struct {
	t    time.Time
	id   uint32 // with wire.CAN* flags
	data []byte
}

// vehicleMaxFrames is larger than every reference log, so nothing is
// evicted and the independent counts apply to the whole file.
const vehicleMaxFrames = 1 << 17

// vehicleDeps is d with CAN, J1939, UDS stores and a DBC registry over
// dataDir, fed frames on port "can0" as feedCAN feeds them.
func vehicleDeps(t testing.TB, dataDir string, frames []vehicleFrame) Deps {
	t.Helper()
	return vehiclePorts(t, dataDir, portFrames{"can0", frames})
}

// portFrames is one port's frames.
type portFrames struct {
	name   string
	frames []vehicleFrame
}

// vehiclePorts is vehicleDeps over several ports (two captures are two
// ports), in order.
func vehiclePorts(t testing.TB, dataDir string, feeds ...portFrames) Deps {
	t.Helper()
	cs, err := canbus.New(ring.Limits{Items: vehicleMaxFrames, Bytes: vehicleMaxFrames * canbus.FrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	js, err := j1939.New(j1939.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	us, err := isotp.New(isotp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	d := testDeps()
	var listed fakePorts
	for _, pf := range feeds {
		p, err := cs.Port(pf.name, 0)
		if err != nil {
			t.Fatal(err)
		}
		jf, err := js.Feeder(pf.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range pf.frames {
			p.Add(f.t, f.id, f.data)
			if f.id&(wire.CANRTR|wire.CANERR) == 0 {
				jf.Feed(f.t, f.id&wire.CANEFFMask, f.id&wire.CANEFF != 0, f.data)
			}
			if err := us.Feed(pf.name, f.t, f.id, f.data); err != nil {
				t.Fatal(err)
			}
		}
		listed = append(listed, ports.Status{Name: pf.name, Kind: "can", Live: true})
	}
	d = withPorts(d, listed)
	d.CAN, d.J1939, d.UDS, d.DBC = cs, js, us, dbc.NewRegistry(dataDir)
	return d
}

// simTruck is one 60 s pass of the sim board's truck with its workshop
// session (board/sim/j1939gen, the generator the sim board plays).
func simTruck(t testing.TB) []vehicleFrame {
	t.Helper()
	var out []vehicleFrame
	err := j1939gen.Generate(j1939gen.Options{Seed: 1, Start: time.Unix(1e9, 0).UTC(), Duration: 60 * time.Second, Workshop: true},
		func(f j1939gen.Frame) error {
			out = append(out, vehicleFrame{t: f.Time, id: f.ID | wire.CANEFF, data: f.Data})
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// candumpFrames reads a candump log; a line that is not a frame fails.
func candumpFrames(t testing.TB, path string) []vehicleFrame {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []vehicleFrame
	var r wire.CandumpRecord
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := wire.DecodeCandump(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, vehicleFrame{t: r.Time, id: r.ID, data: append([]byte(nil), r.Payload()...)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
