package transmit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// busLog is a recorded bus: every frame with its time, the frames the
// writer sends echoed into it as SocketCAN loops them back.
type busLog struct {
	mu     sync.Mutex
	frames []struct {
		t  time.Time
		id uint32
	}
	claims map[uint8]string
	answer string
}

func (b *busLog) add(t time.Time, id uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frames = append(b.frames, struct {
		t  time.Time
		id uint32
	}{t, id})
}

func (b *busLog) Seen(_ string, since, until time.Time, match func(uint32) bool, skip func(time.Time) bool) (int, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, last := 0, time.Time{}
	for _, f := range b.frames {
		if !f.t.Before(since) && f.t.Before(until) && match(f.id) && !skip(f.t) {
			n++
			if f.t.After(last) {
				last = f.t
			}
		}
	}
	return n, last
}

func (b *busLog) Claimant(_ string, sa uint8) string { return b.claims[sa] }

func (b *busLog) LastAnswer(_ string, e *Expect, until time.Time) (time.Time, string, bool) {
	if b.answer == "" {
		return time.Time{}, "", false
	}
	return until.Add(-time.Second), b.answer, true
}

func TestBusCheck(t *testing.T) {
	now := time.Now()
	newRig := func(log *busLog) (*rig, *Service) {
		r := openRig(t)
		r.o.Bus = log
		r.w.onWrite = func(id uint32, _ []byte) { log.add(time.Now(), id) }
		s, err := New(r.o)
		if err != nil {
			t.Fatal(err)
		}
		return r, s
	}

	t.Run("a quiet bus: checked, no conflict, the last answer stated", func(t *testing.T) {
		log := &busLog{answer: "PGN 65260 from SA 0x00"}
		_, s := newRig(log)
		log.add(now.Add(-time.Second), wire.CANEFF|0x18FEF100) // another node, another address
		p, err := s.Plan(context.Background(), Caller{}, mustSpec(t, 0xF9))
		if err != nil {
			t.Fatal(err)
		}
		if !p.Bus.Checked || len(p.Bus.Conflicts) != 0 || p.Bus.LastAnswer == nil || p.Bus.LoadNow == nil || p.Bus.LoadWithPlan == nil || *p.Bus.LoadWithPlan <= *p.Bus.LoadNow {
			t.Fatalf("bus check %+v", p.Bus)
		}
		if !strings.Contains(p.Text(), "last answer to this request: PGN 65260") {
			t.Errorf("plan text does not state the last answer:\n%s", p.Text())
		}
	})

	t.Run("another node on the source address blocks until overridden", func(t *testing.T) {
		log := &busLog{claims: map[uint8]string{0xF9: "Off-board diagnostic tool #1"}}
		r, s := newRig(log)
		log.add(now.Add(-2*time.Second), wire.CANEFF|0x18EAFFF9)
		log.add(now.Add(-time.Second), wire.CANEFF|0x18FECAF9)
		p, err := s.Plan(context.Background(), r.caller, mustSpec(t, 0xF9))
		if err != nil {
			t.Fatal(err)
		}
		kinds := []string{}
		for _, c := range p.Bus.Conflicts {
			kinds = append(kinds, c.Kind)
		}
		if !slices.Equal(kinds, []string{ConflictSourceClaimed, ConflictSourceInUse}) || p.Bus.Conflicts[1].Frames != 2 {
			t.Fatalf("conflicts %+v", p.Bus.Conflicts)
		}
		if n := s.Next(r.caller, true, p); n.CanSend || !slices.ContainsFunc(n.Blockers, func(b Blocker) bool { return b.Gate == GateBusConflict }) {
			t.Errorf("next %+v, want the bus_conflict gate named", n)
		}
		_, err = s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{})
		var ref *Refusal
		if !errors.As(err, &ref) || ref.Gate != GateBusConflict || r.w.count() != 0 {
			t.Fatalf("err %v, %d frames sent; want a bus_conflict refusal and nothing sent", err, r.w.count())
		}
		out, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{Override: "the other tester is ours and idle"})
		if err != nil || out.Sent != 1 {
			t.Fatalf("override: %v, %+v", err, out)
		}
		var sending *Record
		for i := range r.audit.recs {
			if r.audit.recs[i].Event == EventSending {
				sending = &r.audit.recs[i]
			}
		}
		if sending == nil || sending.Override != "the other tester is ours and idle" || len(sending.Conflicts) != 2 {
			t.Errorf("the sending record does not carry the override and its conflicts: %+v", sending)
		}
		if !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "the other tester is ours") }) {
			t.Errorf("warnings %q do not say the plan was sent through a conflict", out.Warnings)
		}
	})

	t.Run("the box's own frames are not another node's", func(t *testing.T) {
		log := &busLog{}
		r, s := newRig(log)
		p, _ := s.Plan(context.Background(), r.caller, mustSpec(t, 0xF9))
		if len(p.Bus.Conflicts) != 0 {
			t.Fatalf("conflicts before any send: %+v", p.Bus.Conflicts)
		}
		if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{}); err != nil {
			t.Fatal(err)
		}
		if len(log.frames) != 1 {
			t.Fatalf("the send was not echoed into the record: %d frames", len(log.frames))
		}
		again, _ := s.Plan(context.Background(), r.caller, mustSpec(t, 0xF9))
		if len(again.Bus.Conflicts) != 0 {
			t.Errorf("the box's own echo counted as another node: %+v", again.Bus.Conflicts)
		}
	})

	t.Run("an 11-bit id another tester sends", func(t *testing.T) {
		log := &busLog{}
		r, s := newRig(log)
		log.add(now.Add(-time.Second), 0x7E0)
		u, _ := UDSRequest{Port: "can0", RequestID: 0x7E0, ResponseID: 0x7E8, Payload: []byte{0x22, 0xF1, 0x90}, Pad: true}.Spec()
		p, _ := s.Plan(context.Background(), r.caller, u)
		if len(p.Bus.Conflicts) != 1 || p.Bus.Conflicts[0].Kind != ConflictIDInUse || p.Bus.Conflicts[0].ID != "7E0" {
			t.Errorf("conflicts %+v, want 7E0 in use", p.Bus.Conflicts)
		}
	})

	t.Run("no record: said, not silent", func(t *testing.T) {
		r := openRig(t)
		s, _ := New(r.o)
		p, _ := s.Plan(context.Background(), r.caller, mustSpec(t, 0xF9))
		if p.Bus.Checked || p.Bus.Reason == "" || !strings.Contains(p.Text(), "bus: not checked") {
			t.Errorf("bus check %+v", p.Bus)
		}
	})
}

func mustSpec(t *testing.T, sa uint8) Spec {
	t.Helper()
	sp, err := J1939Request{Port: "can0", PGN: 65260, Destination: 0x00, Source: sa, Priority: 6}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
