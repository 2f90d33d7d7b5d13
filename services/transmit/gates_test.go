package transmit

import (
	"context"
	"errors"
	"fieldtap/drivers/wire"
	"slices"
	"testing"
	"time"
)

// open returns options with every gate open for port can0, plus the
// pieces a test closes.
type rig struct {
	o      Options
	w      *recWriter
	arm    *armFlag
	audit  *memAudit
	caller Caller
	ack    bool
	conf   Confirmation
	spec   Spec
}

// rawFrames are frames the box cannot name: actuate-class whatever tool
// plans them.
var rawFrames = []Frame{{ID: 0x123, Data: []byte{0x01, 0x02, 0x03}}}

func openRig(t testing.TB) *rig {
	r := &rig{w: &recWriter{}, arm: armed(), audit: &memAudit{}, ack: true,
		caller: Caller{Via: ViaMCP, Transport: "stdio"}}
	r.o = Options{
		Ports:        []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Transmit: true, Writer: r.w}},
		Arm:          r.arm,
		Audit:        r.audit,
		BundleLoaded: true,
		BusLoad:      func(string) (float64, bool) { return 0.2, true },
	}
	var err error
	r.spec, err = J1939Request{Port: "can0", PGN: 65260, Destination: 0x00, Source: 0xF9, Priority: 6}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEachGateAlone closes one gate with every other open: the call is
// refused naming that gate, no byte reaches the writer, and the refusal is
// in the audit log.
func TestEachGateAlone(t *testing.T) {
	for _, tc := range []struct {
		gate  string
		close func(r *rig)
		// planID overrides the stored plan's id.
		planID string
	}{
		{gate: GateBundle, close: func(r *rig) { r.o.BundleLoaded = false }},
		{gate: GateScope, close: func(r *rig) {
			r.caller = Caller{Via: ViaMCP, Transport: TransportHTTP, TokenID: "ops", Scopes: []string{"read"}}
		}},
		{gate: GateAck, close: func(r *rig) { r.ack = false }},
		{gate: GatePlan, planID: "tx-doesnotexist", close: func(r *rig) {}},
		{gate: GatePortConfig, close: func(r *rig) { r.o.Ports[0].Transmit = false }},
		{gate: GateArm, close: func(r *rig) { r.arm.on.Store(false) }},
		{gate: GateBusLoad, close: func(r *rig) { r.o.BusLoad = func(string) (float64, bool) { return 0.9, true } }},
		{gate: GateRate, close: func(r *rig) { r.o.Rate = RateLimit{Plans: 1, Window: time.Minute} }},
		{gate: GateConfirmation, close: func(r *rig) { r.spec = CANSend("can0", rawFrames) }}, // actuate, client cannot ask
		{gate: GateAudit, close: func(r *rig) { r.audit.fail = true }},
	} {
		t.Run(tc.gate, func(t *testing.T) {
			r := openRig(t)
			tc.close(r)
			s, err := New(r.o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.gate == GateRate {
				s.rate.take("can0", time.Now())
			}
			p, err := s.Plan(context.Background(), r.caller, r.spec)
			if err != nil {
				t.Fatal(err)
			}
			id := p.ID
			if tc.planID != "" {
				id = tc.planID
			}
			_, err = s.Execute(context.Background(), r.caller, id, r.ack, r.conf)
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Gate != tc.gate {
				t.Fatalf("err = %v, want a refusal by gate %s", err, tc.gate)
			}
			if n := r.w.count(); n != 0 {
				t.Errorf("%d frames reached the writer", n)
			}
			if tc.gate != GateAudit && !slices.Contains(r.audit.events(), EventRefused+":"+tc.gate) {
				t.Errorf("audit = %v, want the refusal recorded", r.audit.events())
			}
			if st := s.Status(r.caller.Owner()); len(st.Recent) == 0 || st.Recent[len(st.Recent)-1].Gate != tc.gate {
				t.Errorf("transmit_status history = %+v", st.Recent)
			}
		})
	}
}

// TestAllGatesOpenSends is the control for TestEachGateAlone.
func TestAllGatesOpenSends(t *testing.T) {
	r := openRig(t)
	s, _ := New(r.o)
	p, _ := s.Plan(context.Background(), r.caller, r.spec)
	out, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent != 1 || r.w.count() != 1 {
		t.Fatalf("sent %d, writer saw %d", out.Sent, r.w.count())
	}
	got := r.w.frames[0]
	if got.ID != wire.CANEFF|0x18EA00F9 || string(got.Data) != "\xEC\xFE\x00" {
		t.Errorf("wire frame %X % X", got.ID, got.Data)
	}
	ev := r.audit.events()
	if i, j := slices.Index(ev, EventSending+":"), slices.Index(ev, EventSent+":"); i < 0 || j < i {
		t.Errorf("audit = %v, want sending before sent", ev)
	}
	// A plan runs once.
	if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); !isGate(err, GatePlan) {
		t.Errorf("second run: %v", err)
	}
}

// TestHTTPWithScopeSends: the scope gate opens for a transmit token.
func TestHTTPWithScopeSends(t *testing.T) {
	r := openRig(t)
	s, _ := New(r.o)
	c := Caller{Via: ViaMCP, Transport: TransportHTTP, TokenID: "tech", Scopes: []string{"read", ScopeTransmit}}
	p, _ := s.Plan(context.Background(), c, r.spec)
	if _, err := s.Execute(context.Background(), c, p.ID, true, Confirmation{}); err != nil {
		t.Fatal(err)
	}
}

// TestCLIIgnoresBundle: the bundle gate is for MCP callers; the terminal
// path still meets every other gate.
func TestCLIIgnoresBundle(t *testing.T) {
	r := openRig(t)
	r.o.BundleLoaded = false
	s, _ := New(r.o)
	c := Caller{Via: ViaCLI, Transport: "terminal"}
	p, _ := s.Plan(context.Background(), c, r.spec)
	if _, err := s.Execute(context.Background(), c, p.ID, true, Confirmation{}); err != nil {
		t.Fatal(err)
	}
	r.arm.on.Store(false)
	p, _ = s.Plan(context.Background(), c, r.spec)
	if _, err := s.Execute(context.Background(), c, p.ID, true, Confirmation{}); !isGate(err, GateArm) {
		t.Fatalf("CLI with the key off: %v", err)
	}
}

func TestNoWriterIsPortConfig(t *testing.T) {
	r := openRig(t)
	r.o.Ports[0].Writer = nil
	s, _ := New(r.o)
	p, _ := s.Plan(context.Background(), r.caller, r.spec)
	if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); !isGate(err, GatePortConfig) {
		t.Fatalf("err = %v", err)
	}
}

// TestConfirmationRechecksGates: the key turned off while a person reads
// the question still refuses.
func TestConfirmationRechecksGates(t *testing.T) {
	r := openRig(t)
	s, _ := New(r.o)
	ctx := context.Background()
	p, _ := s.Plan(ctx, r.caller, r.spec)
	out, _ := s.Execute(ctx, r.caller, p.ID, true, Confirmation{CanAsk: true})
	r.arm.on.Store(false)
	if _, err := s.Execute(ctx, r.caller, p.ID, true, Confirmation{CanAsk: true, Reply: ReplyAccept, Token: out.Token}); !isGate(err, GateArm) {
		t.Fatalf("err = %v", err)
	}
}

// TestEraseNeedsConfirmation: DM11 with a client that cannot ask is
// refused, whatever else is open.
func TestEraseNeedsConfirmation(t *testing.T) {
	r := openRig(t)
	s, _ := New(r.o)
	sp, err := J1939RequestDM("can0", "DM11", 0x00, 0xF9, 6)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Plan(context.Background(), r.caller, sp)
	if p.Risk != RiskErase {
		t.Fatalf("risk %s", p.Risk)
	}
	if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); !isGate(err, GateConfirmation) {
		t.Fatalf("err = %v", err)
	}
	if r.w.count() != 0 {
		t.Fatal("sent")
	}
}

func isGate(err error, gate string) bool {
	var ref *Refusal
	return errors.As(err, &ref) && ref.Gate == gate
}
