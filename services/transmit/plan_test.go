package transmit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// TestVINRequestPlan is the example: PGN 65260 to 0x00 from 0xF9
// is exactly one frame, 18EA00F9, data EC FE 00.
func TestVINRequestPlan(t *testing.T) {
	sp, err := J1939Request{Port: "can0", PGN: 65260, Destination: 0x00, Source: 0xF9, Priority: DefaultRequestPriority}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Writer: touchFails{t}}}})
	p, err := s.Plan(context.Background(), Caller{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 1 || len(p.Frames) != 1 {
		t.Fatalf("%d frames", p.Count)
	}
	f := p.Frames[0]
	if f.ID != wire.CANEFF|0x18EA00F9 || !bytes.Equal(f.Data, []byte{0xEC, 0xFE, 0x00}) {
		t.Errorf("frame %s % X", f.IDHex(), f.Data)
	}
	b, _ := json.Marshal(p)
	for _, want := range []string{`"id":"18EA00F9"`, `"data":"ECFE00"`, `"dlc":3`, `"risk":"read"`, `"cannot_know":[`, `"estimated_added_bus_load":0.000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plan JSON lacks %s: %s", want, b)
		}
	}
	if p.Expires.Sub(p.Created) != DefaultPlanTTL {
		t.Errorf("ttl %v", p.Expires.Sub(p.Created))
	}
}

// TestDryRunNeverTouchesWriter: planning every kind needs no arming and
// never reaches the writer (touchFails fails the test if it does).
func TestDryRunNeverTouchesWriter(t *testing.T) {
	s, _ := New(Options{Ports: []Port{
		{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Writer: touchFails{t}, Transmit: true},
		{Name: "j1708", Medium: MediumJ1708, Writer: touchFails{t}, Transmit: true},
	}})
	j, _ := J1939Request{Port: "can0", PGN: 65260, Destination: 0xFF, Source: 0xF9, Priority: 6}.Spec()
	dm, _ := J1939RequestDM("can0", "DM1", 0xFF, 0xF9, 6)
	u, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: []byte{0x22, 0xF1, 0x90}, Pad: true}.Spec()
	m, _ := J1708Send("j1708", 172, []byte{0, 84})
	for _, sp := range []Spec{j, dm, u, m, CANSend("can0", []Frame{{ID: 0x123, Data: []byte{1}}})} {
		if _, err := s.Plan(context.Background(), Caller{}, sp); err != nil {
			t.Errorf("%s: %v", sp.Tool, err)
		}
	}
	if got := len(s.Plans(Owner{})); got != 5 {
		t.Errorf("%d plans stored", got)
	}
}

func TestPlanExpiresAndStoreIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	r := openRig(t)
	r.o.Now = func() time.Time { return now }
	s, _ := New(r.o)
	p, _ := s.Plan(context.Background(), r.caller, r.spec)
	now = now.Add(DefaultPlanTTL)
	if s.Get(r.caller.Owner(), p.ID) != nil {
		t.Error("plan outlived its TTL")
	}
	if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); !isGate(err, GatePlan) || r.w.count() != 0 {
		t.Errorf("expired plan: %v", err)
	}
	for range MaxPlansPerOwner + 5 {
		now = now.Add(time.Millisecond)
		s.Plan(context.Background(), r.caller, r.spec)
	}
	if st := s.Status(r.caller.Owner()); st.Plans != MaxPlansPerOwner || st.PlansEvicted != 5 || st.PlansExpired != 1 {
		t.Errorf("store: %d plans, %d evicted, %d expired", st.Plans, st.PlansEvicted, st.PlansExpired)
	}
}

func TestPlanRefusesBadSpecs(t *testing.T) {
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}, {Name: "j1708", Medium: MediumJ1708}}})
	many := make([]Frame, MaxFrames+1)
	for i := range many {
		many[i] = Frame{ID: 1, Data: []byte{1}}
	}
	for name, sp := range map[string]Spec{
		"unknown port":    CANSend("can9", []Frame{{ID: 1}}),
		"too many":        CANSend("can0", many),
		"9 bytes":         CANSend("can0", []Frame{{ID: 1, Data: make([]byte, 9)}}),
		"11-bit overflow": CANSend("can0", []Frame{{ID: 0x800, Data: []byte{1}}}),
		"flags":           CANSend("can0", []Frame{{ID: 0x40000001, Data: []byte{1}}}),
		"medium":          CANSend("j1708", []Frame{{ID: 1, Data: []byte{1}}}),
		"delay":           CANSend("can0", []Frame{{ID: 1, Delay: MaxDelay + 1}}),
	} {
		if _, err := s.Plan(context.Background(), Caller{}, sp); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestClassifyFromFrames(t *testing.T) {
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}}})
	for _, tc := range []struct {
		name string
		f    Frame
		want Risk
	}{
		{"raw DM11 request", Frame{ID: wire.CANEFF | 0x18EA00F9, Data: []byte{0xD3, 0xFE, 0x00}}, RiskErase},
		{"raw DM3 request", Frame{ID: wire.CANEFF | 0x18EAFFF9, Data: []byte{0xCC, 0xFE, 0x00}}, RiskErase},
		{"raw UDS clear", Frame{ID: 0x7DF, Data: []byte{0x04, 0x14, 0xFF, 0xFF, 0xFF}}, RiskErase},
		{"raw OBD-II clear", Frame{ID: 0x7DF, Data: []byte{0x01, 0x04}}, RiskErase},
		{"raw VIN request", Frame{ID: wire.CANEFF | 0x18EA00F9, Data: []byte{0xEC, 0xFE, 0x00}}, RiskRead},
		{"raw UDS read", Frame{ID: 0x7E0, Data: []byte{0x03, 0x22, 0xF1, 0x90}}, RiskRead},
		{"raw UDS write memory", Frame{ID: 0x7E0, Data: []byte{0x05, 0x3D, 0x14, 0x10, 0x00, 0x01}}, RiskActuate},
		{"raw UDS session", Frame{ID: 0x7E0, Data: []byte{0x02, 0x10, 0x03}}, RiskActuate},
		{"engine speed frame", Frame{ID: wire.CANEFF | 0x0CF00400, Data: []byte{0xF0, 0x7D, 0x7D, 0x00, 0x1A, 0x00, 0x0F, 0x7D}}, RiskActuate},
		{"request bytes on a non-diagnostic id", Frame{ID: 0x123, Data: []byte{0x03, 0x22, 0xF1, 0x90}}, RiskActuate},
		{"29-bit UDS read", Frame{ID: wire.CANEFF | 0x18DA00F1, Data: []byte{0x03, 0x22, 0xF1, 0x90}}, RiskRead},
		{"short request", Frame{ID: wire.CANEFF | 0x18EA00F9, Data: []byte{0xEC}}, RiskActuate},
	} {
		p, err := s.Plan(context.Background(), Caller{}, CANSend("can0", []Frame{tc.f}))
		if err != nil {
			t.Fatal(err)
		}
		if p.Risk != tc.want {
			t.Errorf("%s: risk %s, want %s", tc.name, p.Risk, tc.want)
		}
	}
}

// TestSameFramesSameClass plans the frames each planner makes through
// can_send too: the class depends on the frames, not on the tool.
func TestSameFramesSameClass(t *testing.T) {
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}}})
	var specs []Spec
	for _, dm := range DMNames() {
		sp, err := J1939RequestDM("can0", dm, 0x00, 0xF9, 6)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	vin, _ := J1939Request{Port: "can0", PGN: 65260, Destination: 0xFF, Source: 0xF9, Priority: 6}.Spec()
	specs = append(specs, vin)
	for _, payload := range [][]byte{{0x22, 0xF1, 0x90}, {0x10, 0x03}, {0x14, 0xFF, 0xFF, 0xFF}, {0x2E, 0xF1, 0x90, 1, 2, 3, 4, 5, 6, 7, 8}, {0x19, 0x02, 0xFF}} {
		u, err := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: payload, Pad: true}.Spec()
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, u)
	}
	for _, sp := range specs {
		byTool, err := s.Plan(context.Background(), Caller{}, sp)
		if err != nil {
			t.Fatal(err)
		}
		raw := CANSend("can0", sp.Frames)
		byRaw, err := s.Plan(context.Background(), Caller{}, raw)
		if err != nil {
			t.Fatal(err)
		}
		if byTool.Risk != byRaw.Risk {
			t.Errorf("%s: %s through %s, %s through can_send", sp.Summary, byTool.Risk, sp.Tool, byRaw.Risk)
		}
	}
}

func TestPlanJSONRoundTrip(t *testing.T) {
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}, {Name: "j1708", Medium: MediumJ1708}}})
	u, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: []byte{0x22, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Pad: true}.Spec()
	m, _ := J1708Send("j1708", 172, []byte{0, 84})
	for _, sp := range []Spec{u, m} {
		p, err := s.Plan(context.Background(), Caller{}, sp)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p.Frames)
		var back []Frame
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if hashFrames(p.Port, back) != p.Hash {
			t.Errorf("%s: frames changed in a JSON round trip: %s", sp.Tool, b)
		}
	}
}

func TestJ1708Checksum(t *testing.T) {
	sp, err := J1708Send("j1708", 172, []byte{0x00, 0xC2})
	if err != nil {
		t.Fatal(err)
	}
	var sum byte
	for _, b := range sp.Frames[0].Data {
		sum += b
	}
	if sum != 0 || len(sp.Frames[0].Data) != 4 || sp.Frames[0].Data[0] != 172 {
		t.Errorf("message % X sums to %d", sp.Frames[0].Data, sum)
	}
	if _, err := J1708Send("j1708", 172, make([]byte, 20)); err == nil {
		t.Error("22-byte message accepted")
	}
}

func TestReplayWindow(t *testing.T) {
	st, err := canbus.New(ring.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := st.Port("can0", 0)
	t0 := time.Unix(100, 0)
	for i := range 5 {
		port.Add(t0.Add(time.Duration(i)*10*time.Millisecond), wire.CANEFF|0x0CF00400, []byte{byte(i)})
		port.Add(t0.Add(time.Duration(i)*10*time.Millisecond+time.Millisecond), 0x123, []byte{0xAA})
	}
	sp, err := Replay(port, "can0", Window{ID: 0x0CF00400, Mask: wire.CANEFFMask, Since: t0.Add(10 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Frames) != 4 || sp.Frames[1].Delay != 10*time.Millisecond || sp.Frames[0].Data[0] != 1 || sp.Frames[0].ID != wire.CANEFF|0x0CF00400 {
		t.Errorf("replay plan %+v", sp.Frames)
	}
	if _, err := Replay(port, "can0", Window{Max: 3}); err == nil {
		t.Error("a window larger than Max was cut silently")
	}
}

// TestDMNamesAreThePlannedOnes keeps the list the MCP schema offers equal
// to what J1939RequestDM plans.
func TestDMNamesAreThePlannedOnes(t *testing.T) {
	if len(DMNames()) != len(dmPGNs) {
		t.Fatalf("DMNames %v, planner knows %d", DMNames(), len(dmPGNs))
	}
	for _, dm := range DMNames() {
		if _, err := J1939RequestDM("can0", dm, 0xFF, DefaultToolAddress, DefaultRequestPriority); err != nil {
			t.Errorf("%s: %v", dm, err)
		}
	}
}
