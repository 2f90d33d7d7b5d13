package transmit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStatusTellsTheTruth: can_send_now is false exactly when a gate of
// the box or port would refuse, each one named, with every other gate
// open; over the load ceiling it is false and Execute agrees.
func TestStatusTellsTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(r *rig)
		gate  string // "" means can send
	}{
		{name: "every gate open"},
		{name: "load over the ceiling", close: func(r *rig) { r.o.BusLoad = func(string) (float64, bool) { return 0.75, true } }, gate: GateBusLoad},
		{name: "not enabled", close: func(r *rig) { r.o.Ports[0].Transmit = false }, gate: GatePortConfig},
		{name: "no writer", close: func(r *rig) { r.o.Ports[0].Writer = nil }, gate: GatePortConfig},
		{name: "disarmed", close: func(r *rig) { r.arm.on.Store(false) }, gate: GateArm},
		{name: "rate spent", close: func(r *rig) { r.o.Rate = RateLimit{Plans: 1, Window: time.Minute} }, gate: GateRate},
		{name: "no audit file", close: func(r *rig) { r.o.Audit = nil }, gate: GateAudit},
		{name: "no audit file behind a wrapper", close: func(r *rig) { r.o.Audit = unconfigured{} }, gate: GateAudit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openRig(t)
			if tc.close != nil {
				tc.close(r)
			}
			s, _ := New(r.o)
			if tc.gate == GateRate {
				s.rate.take("can0", time.Now())
			}
			ps := s.Status(Owner{}).Ports[0]
			if tc.gate == "" {
				if !ps.CanSend || len(ps.CannotSend) != 0 {
					t.Fatalf("status %+v, want can_send_now", ps)
				}
				return
			}
			if ps.CanSend || len(ps.CannotSend) != 1 || ps.CannotSend[0].Gate != tc.gate {
				t.Fatalf("status %+v, want can_send_now false naming %s", ps, tc.gate)
			}
			p, _ := s.Plan(context.Background(), r.caller, r.spec)
			if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); !isGate(err, tc.gate) {
				t.Errorf("status says %s, Execute says %v", tc.gate, err)
			}
		})
	}
}

// TestJ1708LoadFromItsTraffic: a J1708 port receiving 22 messages a
// second shows their load in transmit_status, from its own meter.
func TestJ1708LoadFromItsTraffic(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewLoadMeter(J1708Bitrate)
	const msgBytes = 7 // MID, PID 190 and its two bytes, PID 91 and its byte, checksum
	for i := range 3 * 22 {
		m.Add(now.Add(-3*time.Second+time.Duration(i)*time.Second/22), msgBytes*J1708BitsPerByte)
	}
	s, _ := New(Options{
		Ports:   []Port{{Name: "j1708", Medium: MediumJ1708}},
		BusLoad: func(string) (float64, bool) { return m.Load(now) },
		Now:     func() time.Time { return now },
	})
	ps := s.Status(Owner{}).Ports[0]
	want := 22.0 * msgBytes * J1708BitsPerByte / J1708Bitrate // 0.1375
	if ps.Load == nil || *ps.Load < want-0.001 || *ps.Load > want+0.001 {
		t.Fatalf("J1708 load %v (%s), want %.3f", ps.Load, ps.LoadNote, want)
	}
	// Quiet for longer than LoadFresh: unknown, with a reason, not 0.
	now = now.Add(LoadFresh + time.Second)
	if ps := s.Status(Owner{}).Ports[0]; ps.Load != nil || ps.LoadNote == "" {
		t.Errorf("a quiet port shows load %v, note %q", ps.Load, ps.LoadNote)
	}
}

func TestLoadMeterWindow(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := NewLoadMeter(1000)
	m.Add(now.Add(-1500*time.Millisecond), 500) // before the last second
	m.Add(now.Add(-1000*time.Millisecond), 100)
	m.Add(now.Add(-time.Millisecond), 50)
	m.Add(now, 7) // the bucket in progress counts from the next one on
	if v, ok := m.Load(now); !ok || v != 0.15 {
		t.Errorf("load %v %v, want 0.15 (the last whole second only)", v, ok)
	}
	if _, ok := NewLoadMeter(0).Load(now); ok {
		t.Error("a meter of unknown bitrate measures")
	}
	// A bucket reused a ring later does not carry old bits.
	m.Add(now.Add(LoadFresh), 10)
	if v, _ := m.Load(now.Add(LoadFresh + loadBucket)); v != 0.01 {
		t.Errorf("load after a lap %v, want 0.01", v)
	}
}

// TestLoadMeterTakesAnyTime: a frame stamped before 1970 (a capture
// file's) is measured; one at the zero time, outside what UnixNano can
// hold, is taken without a panic (the load is then not known).
func TestLoadMeterTakesAnyTime(t *testing.T) {
	at := time.Unix(-86_400, 0)
	m := NewLoadMeter(1000)
	m.Add(at.Add(-500*time.Millisecond), 100)
	if v, ok := m.Load(at); !ok || v != 0.1 {
		t.Errorf("at %v: load %v %v, want 0.1", at, v, ok)
	}
	for _, at := range []time.Time{{}, time.Time{}.Add(-158 * time.Millisecond)} {
		NewLoadMeter(1000).Add(at, 100)
	}
}

// TestNextNeverOffersWhatCannotSend: the `next` suggestion offers the
// execute call only when no known gate would refuse it.
func TestNextNeverOffersWhatCannotSend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		close  func(r *rig)
		canAsk bool
		raw    bool
		gate   string
	}{
		{name: "every gate open"},
		{name: "no writer", close: func(r *rig) { r.o.Ports[0].Writer = nil }, gate: GatePortConfig},
		{name: "not enabled", close: func(r *rig) { r.o.Ports[0].Transmit = false }, gate: GatePortConfig},
		{name: "disarmed", close: func(r *rig) { r.arm.on.Store(false) }, gate: GateArm},
		{name: "bundle not loaded", close: func(r *rig) { r.o.BundleLoaded = false }, gate: GateBundle},
		{name: "token without the transmit scope", close: func(r *rig) { r.caller = Caller{Via: ViaMCP, Transport: TransportHTTP, TokenID: "ro"} }, gate: GateScope},
		{name: "actuate plan, client cannot ask", raw: true, gate: GateConfirmation},
		{name: "actuate plan, client can ask", raw: true, canAsk: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openRig(t)
			if tc.close != nil {
				tc.close(r)
			}
			s, _ := New(r.o)
			sp := r.spec
			if tc.raw {
				sp = CANSend("can0", rawFrames)
			}
			p, _ := s.Plan(context.Background(), r.caller, sp)
			n := s.Next(r.caller, tc.canAsk, p)
			offers := strings.Contains(n.Text, "transmit_execute")
			if tc.gate == "" {
				if !n.CanSend || !offers || !strings.Contains(n.Text, p.ID) {
					t.Fatalf("next %+v", n)
				}
				return
			}
			if n.CanSend || offers || len(n.Blockers) != 1 || n.Blockers[0].Gate != tc.gate || !strings.Contains(n.Text, tc.gate) {
				t.Fatalf("next %+v, want no offer and the %s gate named", n, tc.gate)
			}
		})
	}
}

// TestPlanTextOffsetsAndGaps: offsets from the plan's start and gaps
// after the previous frame read differently, in the text and the JSON.
func TestPlanTextOffsetsAndGaps(t *testing.T) {
	s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN}}})
	p, err := s.Plan(context.Background(), Caller{}, CANSend("can0", []Frame{
		{ID: 0x100, Data: []byte{1}, Delay: 12 * time.Millisecond},
		{ID: 0x100, Data: []byte{2}, Delay: 99948 * time.Microsecond},
	}))
	if err != nil {
		t.Fatal(err)
	}
	text := p.Text()
	for _, want := range []string{"1. +12.000ms Δ12.000ms 100 [1] 01", "2. +111.948ms Δ99.948ms 100 [1] 02", "+ offset from the plan's start, Δ gap"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
	b, _ := p.Frames[1].MarshalJSON()
	if !strings.Contains(string(b), `"delay_us":99948`) || !strings.Contains(string(b), `"offset_us":111948`) {
		t.Errorf("frame JSON %s", b)
	}
}

// unconfigured is a wrapping auditor (as the metrics counter is) with no
// audit file behind it.
type unconfigured struct{}

func (unconfigured) Record(context.Context, Record) error { return errors.New("no audit file") }
func (unconfigured) Configured() bool                     { return false }

// TestStartWithoutAnAuditFileBehindAWrapper: start-up records nothing
// and reports no failure when the auditor says no file is behind it.
func TestStartWithoutAnAuditFileBehindAWrapper(t *testing.T) {
	r := openRig(t)
	r.o.Audit = unconfigured{}
	s, err := New(r.o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordStart(context.Background(), Tail{}, nil); err != nil {
		t.Errorf("RecordStart = %v, want nil: there is nothing to record into", err)
	}
	if s.Status(Owner{}).PreviousRun == nil {
		t.Errorf("PreviousRun not set")
	}
}
