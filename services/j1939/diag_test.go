package j1939

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

var d0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type frame struct {
	ms   int
	id   uint32
	data []byte
}

func portOf(t *testing.T, fs []frame) *canbus.Port {
	t.Helper()
	cs, _ := canbus.New(ring.Limits{})
	p, err := cs.Port("can0", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		p.Add(d0.Add(time.Duration(f.ms)*time.Millisecond), f.id|wire.CANEFF, f.data)
	}
	return p
}

// dm is a DM1/DM2 payload: lamps 0x04 (amber on) and the DTCs (SPN, FMI, OC).
func dm(dtcs ...[3]int) []byte {
	b := []byte{0x04, 0xFF}
	if len(dtcs) == 0 {
		return append(b, 0, 0, 0, 0, 0xFF, 0xFF)
	}
	for _, d := range dtcs {
		b = append(b, byte(d[0]), byte(d[0]>>8), byte(d[0]>>16)<<5|byte(d[1]), byte(d[2]))
	}
	for len(b) < 8 {
		b = append(b, 0xFF)
	}
	return b
}

func TestDiagnosticsClears(t *testing.T) {
	const tool, engine, brakes = 0xF9, 0x00, 0x0B
	coolant, oil := [3]int{110, 0, 3}, [3]int{100, 1, 1}
	p := portOf(t, []frame{
		{0, 0x18FECA00, dm(oil)}, // one DTC per frame: two need a transfer
		{10, 0x18FECA0B, dm()},
		{100, 0x18EEFFF9, []byte{1, 2, 3, 4, 5, 6, 7, 8}},                          // the tool's address claim
		{200, 0x18EA00F9, []byte{0xCB, 0xFE, 0x00}},                                // request DM2 from the engine
		{210, 0x18FECB00, dm([3]int{190, 2, 5})},                                   // DM2: one previously active
		{300, 0x18EA00F9, []byte{0xD3, 0xFE, 0x00}},                                // request DM11 (clear active) from the engine
		{310, 0x18E8FF00, []byte{0, 0xFF, 0xFF, 0xFF, 0xF9, 0xD3, 0xFE, 0x00}},     // ack
		{1000, 0x18FECA00, dm(coolant)},                                            // the coolant fault is back
		{2000, 0x18FECCF9, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, // DM3 sent directly to all
		{2005, 0x18E8FF0B, []byte{1, 0xFF, 0xFF, 0xFF, 0xF9, 0xCC, 0xFE, 0x00}},    // the brakes refuse
		{2100, 0x18FECB00, dm()},
		{2200, 0x18FECB0B, dm()},
	})
	d := DiagnosticsOf("can0", p.Frames(), Window{}, nil)
	if d.ClearsTotal != 2 || len(d.Clears) != 2 {
		t.Fatalf("clears %+v", d.Clears)
	}
	c := d.Clears[0]
	if c.Kind != ClearDM11 || c.Via != "request" || c.Requester != tool || c.Target != engine || c.Name == nil || c.Name.Hex != "0102030405060708" {
		t.Errorf("DM11 %+v", c)
	}
	if len(c.Acks) != 1 || c.Acks[0].Control != "ack" || c.Acks[0].From != engine {
		t.Errorf("DM11 acks %+v", c.Acks)
	}
	if len(c.Targets) != 1 || c.Targets[0].Before == nil || len(c.Targets[0].Before.DTCs) != 1 || c.Targets[0].After == nil ||
		len(c.Targets[0].Cleared) != 1 || c.Targets[0].Cleared[0].SPN != 100 || len(c.Targets[0].Remaining) != 0 {
		t.Errorf("DM11 target %+v", c.Targets)
	}
	c = d.Clears[1]
	if c.Kind != ClearDM3 || c.Via != "direct" || c.Target != AddrGlobal || len(c.Acks) != 1 || c.Acks[0].Control != "nack" || c.Acks[0].From != brakes {
		t.Errorf("DM3 %+v", c)
	}
	if len(c.Targets) != 2 || c.Targets[0].SA != engine || len(c.Targets[0].Cleared) != 1 || c.Targets[0].Cleared[0].SPN != 190 ||
		c.Targets[1].SA != brakes || c.Targets[1].Before != nil || c.Targets[1].BeforeReason == "" {
		t.Errorf("DM3 targets %+v", c.Targets)
	}
	var dm2 *SourceDMs
	for i := range d.Sources {
		if d.Sources[i].SA == engine {
			dm2 = &d.Sources[i]
		}
	}
	if dm2 == nil || dm2.DM2Messages != 2 || dm2.DM1Messages != 2 || len(dm2.DM2.DTCs) != 0 || len(dm2.DM1.DTCs) != 1 {
		t.Errorf("engine lists %+v", dm2)
	}
	// oil appeared, DM2 190 appeared, oil gone and coolant appeared, 190 gone.
	if d.ChangesTotal != 5 {
		t.Errorf("changes %+v", d.Changes)
	}
}
