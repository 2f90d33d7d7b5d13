package transmit

import (
	"context"
	"errors"
	"testing"
)

// TestOneAuditStory: what Execute returns carries the plan id, frames
// digest and outcome the transmit audit wrote, for a send, a question and
// a refusal, so the MCP audit record of the call can carry the same.
func TestOneAuditStory(t *testing.T) {
	ctx := context.Background()
	r := openRig(t)
	s, _ := New(r.o)
	p, _ := s.Plan(ctx, r.caller, r.spec)
	if n := PlannedNote(p); n.PlanID != p.ID || n.FramesSHA256 != p.Hash || n.Outcome != OutcomePlanned {
		t.Errorf("planned note %+v", n)
	}
	out, err := s.Execute(ctx, r.caller, p.ID, true, Confirmation{})
	sent := NoteOf(out, err)
	last := r.audit.recs[len(r.audit.recs)-1]
	if sent.Outcome != OutcomeSent || sent.PlanID != p.ID || sent.FramesSHA256 != p.Hash || sent.Sent != 1 ||
		last.Event != EventSent || last.PlanID != sent.PlanID || last.Hash != sent.FramesSHA256 || last.Sent != sent.Sent {
		t.Errorf("note %+v, audit %+v", sent, last)
	}
	r.arm.on.Store(false)
	p2, _ := s.Plan(ctx, r.caller, r.spec)
	out, err = s.Execute(ctx, r.caller, p2.ID, true, Confirmation{})
	ref := NoteOf(out, err)
	last = r.audit.recs[len(r.audit.recs)-1]
	if ref.Outcome != OutcomeRefused || ref.Gate != GateArm || ref.PlanID != p2.ID || ref.FramesSHA256 != p2.Hash ||
		last.Event != EventRefused || last.Gate != ref.Gate || last.PlanID != ref.PlanID || last.Hash != ref.FramesSHA256 {
		t.Errorf("note %+v, audit %+v", ref, last)
	}
	r.arm.on.Store(true)
	p3, _ := s.Plan(ctx, r.caller, CANSend("can0", r.spec.Frames))
	asked := NoteOf(s.Execute(ctx, r.caller, p3.ID, true, Confirmation{CanAsk: true}))
	if asked.Outcome != OutcomeAsked || asked.PlanID != p3.ID || asked.FramesSHA256 != p3.Hash {
		t.Errorf("asked note %+v", asked)
	}
	if n := NoteOf(nil, &Refusal{Gate: GateDisarmed, Sent: 3, PlanID: "x"}); n.Outcome != OutcomeStopped || n.Sent != 3 {
		t.Errorf("stopped note %+v", n)
	}
	if n := NoteOf(nil, failure(CodePlansFull, "", "full")); n.Outcome != OutcomeFailed || n.Code != CodePlansFull {
		t.Errorf("failed note %+v", n)
	}
	if n := NoteOf(nil, errors.New("boom")); n.Outcome != OutcomeFailed {
		t.Errorf("error note %+v", n)
	}
}
