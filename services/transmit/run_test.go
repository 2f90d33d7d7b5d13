package transmit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
)

const vin = "1FUJGLDR9CLBP8834*"

// vinByBAM is an ECU at 0x00 that answers a VIN request with a BAM.
func vinByBAM(b *bus, id uint32, data []byte) {
	if id&0x00FF0000 != 0x00EA0000 || len(data) < 3 || data[0] != 0xEC || data[1] != 0xFE {
		return
	}
	n := len(vin)
	packets := (n + 6) / 7
	b.emit(wire.CANEFF|0x1CECFF00, []byte{0x20, byte(n), 0, byte(packets), 0xFF, 0xEC, 0xFE, 0x00})
	for i := range packets {
		chunk := []byte{byte(i + 1), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
		copy(chunk[1:], vin[i*7:min(n, i*7+7)])
		time.Sleep(5 * time.Millisecond)
		b.emit(wire.CANEFF|0x1CEBFF00, chunk)
	}
}

func busRig(t *testing.T, b *bus) (*Service, *memAudit, *modeLog, *armFlag) {
	a, m, arm := &memAudit{}, &modeLog{}, armed()
	s, err := New(Options{
		Ports: []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Transmit: true, Writer: b, Listener: b, Mode: m}},
		Arm:   arm, Audit: a, BundleLoaded: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, a, m, arm
}

func TestVINAnsweredByBAM(t *testing.T) {
	b := newBus(vinByBAM)
	s, _, modes, _ := busRig(t, b)
	sp, _ := J1939Request{Port: "can0", PGN: 65260, Destination: 0xFF, Source: 0xF9, Priority: 6}.Spec()
	sp.Expect.Timeout = 300 * time.Millisecond
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Answers) != 1 || out.Answers[0].Text != strings.TrimSuffix(vin, "*") || out.Answers[0].Via != "tp-BAM" || out.Answers[0].From != "00" {
		t.Fatalf("answers %+v, warnings %v", out.Answers, out.Warnings)
	}
	if got := modes.modes; len(got) != 2 || got[0] != ModeActive || got[1] != ModeListenOnly {
		t.Errorf("modes %v, want active then listen-only", got)
	}
}

// udsECU answers 0x22 F190 with a 20-byte VIN over ISO-TP, waiting for
// the tester's flow control; it answers 0x22 F18C negatively.
func udsECU(b *bus, id uint32, data []byte) {
	if id != 0x7E0 {
		return
	}
	f, err := isotp.Parse(data)
	if err != nil {
		return
	}
	switch {
	case f.Type == isotp.TypeSingle && string(f.Data) == "\x22\xF1\x90":
		frames, _ := isotp.Segment(append([]byte{0x62, 0xF1, 0x90}, "1FUJGLDR9CLBP8834"...), true)
		// Pending before the first frame goes out: the tester's flow
		// control can come back (on another goroutine) at once.
		ecuPending.Store(&frames)
		b.emit(0x7E8, frames[0])
	case f.Type == isotp.TypeFlowControl:
		if p := ecuPending.Swap(nil); p != nil {
			for _, fr := range (*p)[1:] {
				b.emit(0x7E8, fr)
			}
		}
	case f.Type == isotp.TypeSingle && string(f.Data) == "\x22\xF1\x8C":
		b.emit(0x7E8, []byte{0x03, 0x7F, 0x22, 0x31, 0xAA, 0xAA, 0xAA, 0xAA})
	case f.Type == isotp.TypeFirst:
		b.emit(0x7E8, isotp.FlowControl(isotp.FlowContinue, 0, 0, true))
	case f.Type == isotp.TypeConsecutive && f.Seq == 1:
		b.emit(0x7E8, []byte{0x03, 0x7F, 0x22, 0x13, 0xAA, 0xAA, 0xAA, 0xAA})
	}
}

func TestUDSMultiFrameAnswerWithFlowControl(t *testing.T) {
	b := newBus(udsECU)
	s, _, _, _ := busRig(t, b)
	sp, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: isotp.ReadDataByID(0xF190), Pad: true}.Spec()
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Answers) != 1 || out.Answers[0].UDS == nil || out.Answers[0].UDS.DataText != "1FUJGLDR9CLBP8834" {
		t.Fatalf("answers %+v, warnings %v", out.Answers, out.Warnings)
	}
	// Request SF, then the planned flow control 30 00 00.
	if out.Sent != 2 || b.frames[1].ID != 0x7E0 || b.frames[1].Data[0] != 0x30 {
		t.Errorf("sent %d: %+v", out.Sent, b.frames)
	}
}

func TestUDSNegativeNamed(t *testing.T) {
	b := newBus(udsECU)
	s, _, _, _ := busRig(t, b)
	sp, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: isotp.ReadDataByID(0xF18C), Pad: true}.Spec()
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Answers) != 1 || out.Answers[0].UDS.NRCName != "requestOutOfRange" {
		t.Fatalf("answers %+v", out.Answers)
	}
}

// TestUDSMultiFrameRequestWaitsForFlowControl: consecutive frames go out
// only after the ECU's clear-to-send.
func TestUDSMultiFrameRequestWaitsForFlowControl(t *testing.T) {
	b := newBus(udsECU)
	s, _, _, _ := busRig(t, b)
	sp, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: []byte{0x22, 0xF1, 0x90, 0xF1, 0x8C, 0xF1, 0x87, 0xF1, 0x97}, Pad: true}.Spec()
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent != 2 || len(out.Answers) != 1 || out.Answers[0].UDS.NRCName != "incorrectMessageLengthOrInvalidFormat" {
		t.Fatalf("sent %d answers %+v warnings %v", out.Sent, out.Answers, out.Warnings)
	}
	// Without an ECU, the consecutive frame is never sent.
	silent := newBus(nil)
	s2, _, _, _ := busRig(t, silent)
	p2, _ := s2.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	if _, err := s2.Execute(context.Background(), Caller{Via: ViaCLI}, p2.ID, true, Confirmation{}); !isGate(err, GateWriter) || silent.count() != 1 {
		t.Fatalf("err %v, %d frames", err, silent.count())
	}
}

// TestDisarmMidPlanStops: the key turned off between frames stops the
// plan before the next frame.
func TestDisarmMidPlanStops(t *testing.T) {
	b := newBus(nil)
	s, a, modes, arm := busRig(t, b)
	b.onWrite = func(uint32, []byte) { arm.on.Store(false) }
	frames := []Frame{{ID: 0x100, Data: []byte{1}}, {ID: 0x100, Data: []byte{2}, Delay: time.Millisecond}, {ID: 0x100, Data: []byte{3}}}
	sp := CANSend("can0", frames)
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, _ := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{CanAsk: true})
	_, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{CanAsk: true, Reply: ReplyAccept, Token: out.Token})
	var ref *Refusal
	if !isGate(err, GateDisarmed) || b.count() != 1 {
		t.Fatalf("err %v, %d frames", err, b.count())
	}
	_ = ref
	if modes.last() != ModeListenOnly {
		t.Errorf("mode after disarm: %v", modes.modes)
	}
	if ev := a.events(); !strings.Contains(strings.Join(ev, ","), EventStopped+":"+GateDisarmed) {
		t.Errorf("audit %v", ev)
	}
}

// TestRunReturnsToListenOnly: the watcher drops an active port on disarm.
func TestRunReturnsToListenOnly(t *testing.T) {
	b := newBus(nil)
	s, _, modes, arm := busRig(t, b)
	s.setMode(context.Background(), s.ports["can0"], ModeActive)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	arm.on.Store(false)
	deadline := time.Now().Add(2 * time.Second)
	for modes.last() != ModeListenOnly && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if modes.last() != ModeListenOnly {
		t.Fatalf("modes %v", modes.modes)
	}
}

// TestFileAuditHoldsEveryAttempt: plans, refusals, the pre-write record
// and the result are all lines in the file.
func TestFileAuditHoldsEveryAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transmit.jsonl")
	fa, err := OpenFileAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	r := openRig(t)
	r.o.Audit = fa
	s, _ := New(r.o)
	ctx := context.Background()
	p, _ := s.Plan(ctx, r.caller, r.spec)
	s.Execute(ctx, r.caller, p.ID, false, Confirmation{})
	r.arm.on.Store(false)
	s.Execute(ctx, r.caller, p.ID, true, Confirmation{})
	r.arm.on.Store(true)
	if _, err := s.Execute(ctx, r.caller, p.ID, true, Confirmation{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var events []string
	for _, l := range lines {
		events = append(events, between(l, `"event":"`, `"`)+":"+between(l, `"gate":"`, `"`))
	}
	want := "planned:,refused:ack_active,refused:arm,sending:,sent:"
	if strings.Join(events, ",") != want {
		t.Errorf("audit events %v, want %s", events, want)
	}
	if !strings.Contains(lines[3], `"data":"ECFE00"`) {
		t.Errorf("the pre-write record lacks the frames: %s", lines[3])
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != auditFileMode {
		t.Errorf("audit file mode %v", fi.Mode())
	}
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}
