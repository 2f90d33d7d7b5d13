package transmit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"fieldtap/services/isotp"
)

// scanECU answers a session change positively (and remembers it), reads
// F190 as udsECU does (a multi-frame VIN after the tester's flow control),
// answers F187 only in the extended session, F18C negatively, and ignores
// every other DID. 0x7E1 is an ECU that is not there.
type scanECU struct {
	mu      sync.Mutex
	session byte
	asked   []string
}

func (e *scanECU) answer(b *bus, id uint32, data []byte) {
	if id != 0x7E0 {
		return
	}
	f, err := isotp.Parse(data)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if f.Type == isotp.TypeSingle {
		e.asked = append(e.asked, strings.ToUpper(string(hexBytes(f.Data))))
	}
	switch {
	case f.Type == isotp.TypeSingle && len(f.Data) == 2 && f.Data[0] == 0x10:
		e.session = f.Data[1]
		b.emit(0x7E8, []byte{0x06, 0x50, f.Data[1], 0x00, 0x32, 0x01, 0xF4, 0xAA})
	case f.Type == isotp.TypeSingle && string(f.Data) == "\x22\xF1\x87":
		if e.session == 0x03 {
			b.emit(0x7E8, []byte{0x06, 0x62, 0xF1, 0x87, 'A', 'B', 'C', 0xAA})
		} else {
			b.emit(0x7E8, []byte{0x03, 0x7F, 0x22, 0x7F, 0xAA, 0xAA, 0xAA, 0xAA})
		}
	default:
		udsECU(b, id, data)
	}
}

func hexBytes(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return out
}

func TestUDSScan(t *testing.T) {
	ecu := &scanECU{}
	b := newBus(ecu.answer)
	s, audit, _, _ := busRig(t, b)
	sp, err := UDSScan{Port: "can0", ECUs: []ScanECU{{0x7E0, 0x7E8}, {0x7E1, 0x7E9}}, Sessions: []string{"default", "extended"},
		DIDs: []DIDRange{{0xF18C, 0xF18C}, {0xF187, 0xF187}, {0xF190, 0xF190}}, Pad: true}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(context.Background(), Caller{Via: ViaCLI, Transport: "terminal"}, sp)
	if err != nil {
		t.Fatal(err)
	}
	// Per ECU: 10 01, three reads, 10 03, three reads, back to 10 01.
	if p.Count != 2*9 || p.Risk != RiskActuate || !strings.Contains(p.Text(), "never sent by this plan: fault clears (0x14)") {
		t.Fatalf("plan: %d frames, risk %s\n%s", p.Count, p.Risk, p.Text())
	}
	// One confirmation for the whole scan.
	who := Caller{Via: ViaCLI, Transport: "terminal"}
	q, err := s.Execute(context.Background(), who, p.ID, true, Confirmation{CanAsk: true})
	if err != nil || q.Status != StatusNeedsConfirmation {
		t.Fatalf("first call: %+v, %v", q, err)
	}
	out, err := s.Execute(context.Background(), who, p.ID, true, Confirmation{CanAsk: true, Reply: ReplyAccept, Token: q.Token})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1001", "22F18C", "22F187", "22F190", "1003", "22F18C", "22F187", "22F190", "1001"}; !slices.Equal(ecu.asked, want) {
		t.Errorf("the ECU was asked %v, want %v, each after the previous answer", ecu.asked, want)
	}
	rows := ScanTally(p, out)
	if len(rows) != 18 {
		t.Fatalf("%d tally rows, want 18: %+v", len(rows), rows)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.RequestID+" "+r.Service+" "+r.DID+" s"+string(rune('0'+r.Session))] = r.Outcome + " " + r.NRC + " " + r.Text
	}
	for k, want := range map[string]string{
		"7E0 read_did 0xF18C s1": "negative 0x31 ",
		"7E0 read_did 0xF187 s1": "negative 0x7F ",
		"7E0 read_did 0xF187 s3": "positive  ABC",
		"7E0 read_did 0xF190 s3": "positive  1FUJGLDR9CLBP8834",
		"7E0 session  s3":        "positive  ",
		"7E1 read_did 0xF190 s0": "no_answer  ",
		"7E1 session  s3":        "no_answer  ",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	if len(out.Silent) != 9 || !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "9 request(s) had no answer") }) {
		t.Errorf("silent %v, warnings %q", out.Silent, out.Warnings)
	}
	sent := 0
	for _, r := range audit.recs {
		if r.Event == EventSent {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("%d sent records, want the one of the one plan", sent)
	}
}

func TestUDSScanBounds(t *testing.T) {
	for name, sc := range map[string]UDSScan{
		"no ECU":              {DIDs: []DIDRange{{1, 1}}},
		"no DID":              {ECUs: []ScanECU{{0x7E0, 0x7E8}}},
		"backwards":           {ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{2, 1}}},
		"programming session": {ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{1, 1}}, Sessions: []string{"programming"}},
		"too many":            {ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{0xF100, 0xF1FF}}, Sessions: []string{"extended"}},
		"same ids":            {ECUs: []ScanECU{{0x7E0, 0x7E0}}, DIDs: []DIDRange{{1, 1}}},
		"gap below the floor": {ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{1, 1}}, Gap: MinScanGap / 2},
	} {
		if _, err := sc.Spec(); err == nil {
			t.Errorf("%s: planned", name)
		}
	}
	sp, err := UDSScan{Port: "can0", ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{0xF100, 0xF1FF}}}.Spec()
	if err != nil || len(sp.Frames) != 256 {
		t.Fatalf("256 reads in the current session: %d frames, %v", len(sp.Frames), err)
	}
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}}})
	p, err := s.Plan(context.Background(), Caller{}, sp)
	if err != nil || p.Risk != RiskRead {
		t.Errorf("a reads-only scan: risk %v, %v", p, err)
	}
}

// A scan on a port that delivers no frames cannot wait for answers: it
// is refused before its first frame.
func TestUDSScanNeedsTheReceivePath(t *testing.T) {
	r := openRig(t)
	s, _ := New(r.o)
	sp, _ := UDSScan{Port: "can0", ECUs: []ScanECU{{0x7E0, 0x7E8}}, DIDs: []DIDRange{{0xF190, 0xF190}}}.Spec()
	p, _ := s.Plan(context.Background(), r.caller, sp)
	_, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{})
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Gate != GatePortConfig || r.w.count() != 0 {
		t.Errorf("err %v, %d frames sent", err, r.w.count())
	}
}
