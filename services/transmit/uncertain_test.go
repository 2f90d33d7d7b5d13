package transmit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// doubtfulErr is a writer error saying the frame may have gone out,
// whose writer can still learn what the adapter answered later: acked,
// or refused at a non-zero at, or nothing.
type doubtfulErr struct {
	acked bool
	at    time.Time
}

func (doubtfulErr) Error() string {
	return "slcan: no acknowledgement for the frame within 300ms"
}
func (doubtfulErr) MayHaveSent() bool { return true }
func (e doubtfulErr) LateReply(context.Context) (bool, time.Time) {
	return e.acked, e.at
}

// j1708Doubt says the same with no late reply to wait for: a J1708 echo
// that stopped short.
type j1708Doubt struct{}

func (j1708Doubt) Error() string {
	return "j1708: the transceiver did not echo the whole message: 3 of 10 bytes came back"
}
func (j1708Doubt) MayHaveSent() bool { return true }

// errRefusedByAdapter is a writer error after which nothing went out.
var errRefusedByAdapter = errors.New("slcan: the adapter refused the frame (BELL)")

// doubtfulWriter takes every frame; at frame at (1-based) it returns err.
type doubtfulWriter struct {
	recWriter
	at  int
	err error
}

func (w *doubtfulWriter) WriteFrame(ctx context.Context, id uint32, data []byte) error {
	w.recWriter.WriteFrame(ctx, id, data)
	if w.count() == w.at {
		return w.err
	}
	return nil
}

// confirmAndRun plans sp and runs it with a person accepting.
func confirmAndRun(t *testing.T, s *Service, sp Spec) (*Outcome, error) {
	t.Helper()
	ctx, c := context.Background(), Caller{Via: ViaCLI}
	p, err := s.Plan(ctx, c, sp)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Execute(ctx, c, p.ID, true, Confirmation{CanAsk: true})
	if err != nil {
		t.Fatal(err)
	}
	return s.Execute(ctx, c, p.ID, true, Confirmation{CanAsk: true, Reply: ReplyAccept, Token: out.Token})
}

// TestFrameThatMayHaveGoneOut: a DM11 the adapter acknowledged only
// after the writer gave up (issue #33: about 300 ms late) is not
// refused: the run ends uncertain, says which frame may have gone out,
// what was sent before it and not after it, and what the adapter
// answered later, in the answer and in exactly one audit record.
func TestFrameThatMayHaveGoneOut(t *testing.T) {
	dm11, err := J1939RequestDM("can0", "DM11", 0xFF, 0xF9, 6)
	if err != nil {
		t.Fatal(err)
	}
	three := CANSend("can0", []Frame{{ID: 0x100, Data: []byte{1}}, {ID: 0x100, Data: []byte{2}}, {ID: 0x100, Data: []byte{3}}})
	tests := []struct {
		name    string
		spec    Spec
		at      int
		err     error
		sent    int
		late    string
		written int
		says    []string
	}{
		{name: "a DM11 acknowledged late", spec: dm11, at: 1, err: doubtfulErr{acked: true, at: time.Now().Add(300 * time.Millisecond)},
			late: LateAck, written: 1, says: []string{"frame 1 of 1 may have gone out", "acknowledged it", "most likely went out", "before sending again"}},
		{name: "refused late", spec: dm11, at: 1, err: doubtfulErr{at: time.Now().Add(time.Second)},
			late: LateRefused, written: 1, says: []string{"refused it (BELL)", "did not go out"}},
		{name: "never answered, mid-plan", spec: three, at: 2, err: doubtfulErr{},
			sent: 1, late: LateNone, written: 2, says: []string{"frame 2 of 3 may have gone out", "no later answer", "the 1 frame(s) before it were sent", "the 1 frame(s) after it were not sent"}},
		{name: "an echo that stopped short (J1708)", spec: dm11, at: 1, err: j1708Doubt{},
			written: 1, says: []string{"frame 1 of 1 may have gone out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &doubtfulWriter{at: tc.at, err: tc.err}
			a, m := &memAudit{}, &modeLog{}
			s, err := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Transmit: true, Writer: w, Mode: m}},
				Arm: armed(), Audit: a, BundleLoaded: true})
			if err != nil {
				t.Fatal(err)
			}
			out, err := confirmAndRun(t, s, tc.spec)
			if err != nil {
				t.Fatalf("Execute = %v, want an uncertain outcome, not a refusal", err)
			}
			u := out.Uncertain
			if out.Status != StatusUncertain || u == nil || u.Frame != tc.at || out.Sent != tc.sent || u.LateReply != tc.late || w.count() != tc.written {
				t.Fatalf("outcome %+v, uncertain %+v, %d frames written", out, u, w.count())
			}
			text := strings.Join(out.Warnings, "\n")
			for _, want := range tc.says {
				if !strings.Contains(text, want) {
					t.Errorf("warnings %q do not say %q", text, want)
				}
			}
			ev := a.events()
			if got := strings.Join(ev[len(ev)-2:], ","); got != "sending:,uncertain:" || strings.Contains(strings.Join(ev, ","), "refused") {
				t.Errorf("audit %v, want the run to end with one uncertain record", ev)
			}
			rec := a.recs[len(a.recs)-1]
			answered := tc.late == LateAck || tc.late == LateRefused
			if rec.Frame != tc.at || rec.Sent != tc.sent || rec.LateReply != tc.late || !strings.HasPrefix(rec.Message, "frame ") || !strings.Contains(text, rec.Message) ||
				answered != (rec.LateReplyMs != nil && *rec.LateReplyMs > 0) {
				t.Errorf("uncertain record %+v", rec)
			}
			if n := NoteOf(out, nil); n.Outcome != OutcomeUncertain || n.Sent != tc.sent || n.PlanID != out.PlanID {
				t.Errorf("note %+v", n)
			}
			if r := s.Status(Owner{}).Recent; len(r) == 0 || r[len(r)-1].Event != EventUncertain || r[len(r)-1].LateReply != tc.late {
				t.Errorf("recent %+v", r)
			}
			if m.last() != ModeListenOnly {
				t.Errorf("modes %v, want listen-only after the run", m.modes)
			}
		})
	}
}

// TestStoppedRunIsOneRecord: a run a gate stops mid-plan writes one
// record (stopped), not stopped and then refused, and its hint says how
// many frames went out.
func TestStoppedRunIsOneRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail int // the write that fails, 1-based
		sent int
		hint string
	}{
		{name: "first frame refused by the adapter", fail: 1, hint: "nothing was sent"},
		{name: "third frame refused", fail: 3, sent: 2, hint: "the first 2 frame(s) were sent, none after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &doubtfulWriter{at: tc.fail, err: errRefusedByAdapter}
			a := &memAudit{}
			s, _ := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Transmit: true, Writer: w, Mode: &modeLog{}}},
				Arm: armed(), Audit: a, BundleLoaded: true})
			sp := CANSend("can0", []Frame{{ID: 0x100, Data: []byte{1}}, {ID: 0x100, Data: []byte{2}}, {ID: 0x100, Data: []byte{3}}})
			_, err := confirmAndRun(t, s, sp)
			if !isGate(err, GateWriter) {
				t.Fatalf("err %v, want a stop by the writer", err)
			}
			ref := err.(*Refusal)
			if ref.Sent != tc.sent || !strings.Contains(ref.Hint, tc.hint) || ref.PlanID == "" {
				t.Errorf("refusal %+v, want %d sent and a hint saying %q", ref, tc.sent, tc.hint)
			}
			ev := a.events()
			if got := strings.Join(ev[len(ev)-2:], ","); got != "sending:,stopped:writer" {
				t.Errorf("audit %v, want the run to end with one stopped record", ev)
			}
			if r := s.Status(Owner{}).Recent; r[len(r)-1].Event != EventStopped {
				t.Errorf("recent %+v", r)
			}
		})
	}
}

// doubtfulBus is a bus whose writer cannot confirm write at.
type doubtfulBus struct {
	*bus
	at  int
	err error
}

func (b doubtfulBus) WriteFrame(ctx context.Context, id uint32, data []byte) error {
	b.bus.WriteFrame(ctx, id, data)
	if b.count() == b.at {
		return b.err
	}
	return nil
}

// TestFlowControlThatMayHaveGoneOut: the plan's frames went out; the
// flow control the box sends for the ECU's long answer may have, so the
// answer says the rest of the ECU's answer may be missing, not that
// flow control failed.
func TestFlowControlThatMayHaveGoneOut(t *testing.T) {
	b := doubtfulBus{bus: newBus(udsECU), at: 2, err: doubtfulErr{}}
	s, err := New(Options{Ports: []Port{{Name: "can0", Medium: MediumCAN, Bitrate: 250_000, Transmit: true, Writer: b, Listener: b.bus, Mode: &modeLog{}}},
		Arm: armed(), Audit: &memAudit{}, BundleLoaded: true})
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: []byte{0x22, 0xF1, 0x90}, Pad: true}.Spec()
	sp.Expect.Timeout = 200 * time.Millisecond
	p, _ := s.Plan(context.Background(), Caller{Via: ViaCLI}, sp)
	out, err := s.Execute(context.Background(), Caller{Via: ViaCLI}, p.ID, true, Confirmation{})
	if err != nil || out.Status != StatusSent || out.Sent != 1 {
		t.Fatalf("outcome %+v, %v: the request was sent", out, err)
	}
	if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, "flow-control frame may have gone out") {
		t.Errorf("warnings %q", w)
	}
}
