package transmit

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Execute runs the caller's stored plan planID, exactly as stored, once.
// Every gate is checked here, in this order, on every call: bundle, scope,
// ack_active, the confirmation's answer when the call carries one, plan
// (the caller's own, live, not run, not closed), port_config, arm,
// bus_load, rate, audit configured, button present when required, then the
// confirmation (asked, or accepted), the button press when required, and
// the audit record written before the first frame. A refusal is a
// *Refusal naming its gate (and a code where a gate has several reasons),
// recorded in the audit log, and no byte reaches the writer.
//
// When a person must confirm and has not yet, Execute returns
// StatusNeedsConfirmation with the question and a request state (Token),
// bound to this plan, this call (conf.Tool and conf.ArgsDigest) and this
// owner, answerable once within ConfirmTTL. The caller asks (MCP
// elicitation, a terminal prompt) and calls Execute again with the reply
// and the state; planID may then be empty (the state names the plan). A
// decline or cancel closes the plan. The other gates run again on that
// call, so a key switched off while the person read the question still
// refuses.
//
// With Options.RequireButton the accepted execution then waits up to
// ButtonWait for a fresh press of the board's confirm button, its code
// blinking on the status LED, and re-checks the port gates after the press.
func (s *Service) Execute(ctx context.Context, c Caller, planID string, ack bool, conf Confirmation) (*Outcome, error) {
	now := s.o.Now()
	o := c.Owner()
	fail := func(p *Plan, id string, ref *Refusal) (*Outcome, error) {
		s.refused(ctx, c, p, id, ref)
		return nil, ref
	}
	if refs := s.callerBlockers(c); len(refs) > 0 {
		return fail(s.plans.get(o, planID, now), planID, refs[0])
	}
	if !ack {
		return fail(s.plans.get(o, planID, now), planID, refuse(GateAck, "read the plan, then call again with ack_active: true", "ack_active is not true"))
	}
	accepted := false
	if conf.Token != "" {
		id, ref := s.redeem(Subject{Owner: o, PlanID: planID, Tool: conf.Tool, ArgsDigest: conf.ArgsDigest}, conf.Token, conf.Reply, now)
		if ref != nil {
			return fail(s.plans.get(o, ref.PlanID, now), ref.PlanID, ref)
		}
		planID, accepted = id, true
	}
	p := s.plans.get(o, planID, now)
	if ref := planGate(p, planID, s.o.PlanTTL); ref != nil {
		return fail(p, planID, ref)
	}
	if ref := s.ready(p, now); ref != nil {
		return fail(p, p.ID, ref)
	}
	if ref, _ := s.conflictGate(p, conf.Override, now); ref != nil {
		return fail(p, p.ID, ref)
	}
	if !accepted {
		switch {
		case conf.CanAsk:
			q, ref := s.issue(ctx, c, p, Subject{Owner: o, PlanID: p.ID, Tool: conf.Tool, ArgsDigest: conf.ArgsDigest}, now)
			if ref != nil {
				return fail(p, p.ID, ref)
			}
			return &Outcome{PlanID: p.ID, Status: StatusNeedsConfirmation, Token: q.State, Question: q.Text, ConfirmExpires: q.Expires,
				FramesSHA256: p.Hash, Answers: []Answer{}, Warnings: []string{}}, nil
		case p.Risk != RiskRead:
			return fail(p, p.ID, s.confirmUnavailable(p.Risk))
		}
		// A read-class plan from a client that cannot ask: the gates
		// above suffice, and the audit says nobody was asked.
	}
	var press *ButtonPress
	if s.o.RequireButton {
		var ref *Refusal
		if press, ref = s.awaitButton(ctx, c, p); ref != nil {
			return fail(p, p.ID, ref)
		}
		// The key may have turned, or the bus filled, while the person walked to the box.
		if ref := s.ready(p, s.o.Now()); ref != nil {
			return fail(p, p.ID, ref)
		}
	}
	ref, conflicts := s.conflictGate(p, conf.Override, s.o.Now())
	if ref != nil {
		return fail(p, p.ID, ref)
	}
	over := overridden{conflicts: conflicts}
	if len(conflicts) > 0 {
		over.reason = strings.TrimSpace(conf.Override)
	}
	return s.send(ctx, c, p, conf.Tool, accepted, press, over)
}

// ready is the first port gate that refuses p now, or nil.
func (s *Service) ready(p *Plan, now time.Time) *Refusal {
	added := 0.0
	if p.AddedLoad != nil {
		added = *p.AddedLoad
	}
	if refs := s.portBlockers(p.Port, added, now); len(refs) > 0 {
		return refs[0]
	}
	return nil
}

// refused audits a refusal and remembers it for transmit_status.
func (s *Service) refused(ctx context.Context, c Caller, p *Plan, planID string, ref *Refusal) {
	if ref.PlanID == "" {
		ref.PlanID = planID
	}
	if p != nil {
		ref.FramesSHA256 = p.Hash
	}
	r := Record{Event: EventRefused, Gate: ref.Gate, Code: ref.Code, Message: ref.Message, Sent: ref.Sent}
	if p == nil {
		r.PlanID = planID
	}
	if err := s.audit(ctx, r, c, p); err != nil {
		s.mu.Lock()
		s.auditFailures++
		s.mu.Unlock()
	}
	rc := Recent{Time: s.o.Now(), PlanID: planID, Event: EventRefused, Gate: ref.Gate, Code: ref.Code, Sent: ref.Sent, owner: c.Owner()}
	if p != nil {
		rc.Port, rc.Tool = p.Port, p.Tool
	}
	s.remember(rc)
}

// question is what a person is asked: the plan, byte for byte.
func (s *Service) question(p *Plan) string {
	q := "Send these frames on the vehicle bus? Nothing is sent unless you accept.\n\n" + p.Text()
	if s.o.RequireButton {
		q += "\nAfter you accept, press the confirm button on the box while its status LED blinks " + p.ButtonCode +
			" (within " + s.o.ButtonWait.String() + "). Without the press nothing is sent.\n"
	}
	return q
}

// send runs the plan after every gate has passed.
// overridden is a bus conflict the caller chose to send through, and why.
type overridden struct {
	conflicts []Conflict
	reason    string
}

func (s *Service) send(ctx context.Context, c Caller, p *Plan, callTool string, accepted bool, press *ButtonPress, over overridden) (*Outcome, error) {
	ps := s.ports[p.Port]
	ps.busy.Lock()
	defer ps.busy.Unlock()
	now := s.o.Now()
	if ok, retry := s.rate.take(p.Port, now); !ok {
		ref := refuse(GateRate, fmt.Sprintf("try again in %v", retry.Round(time.Second)), "port %s has run %d plans in the last %v", p.Port, s.o.Rate.Plans, s.o.Rate.Window)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	if !s.plans.claim(c.Owner(), p.ID, now) {
		ref := refuseCode(GatePlan, CodePlanRun, "make a new dry run", "plan %s has already run, expired or closed", p.ID)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	confirmed := "accepted"
	if !accepted {
		confirmed = "not asked: read-class plan, client cannot ask"
	}
	if press != nil {
		confirmed += "; confirm button pressed at " + press.Pressed.UTC().Format(time.RFC3339Nano)
	}
	sending := Record{Event: EventSending, CallTool: callTool, Frames: p.Frames, Confirm: confirmed, Button: press, Override: over.reason, Conflicts: over.conflicts}
	if err := s.audit(ctx, sending, c, p); err != nil {
		s.plans.unclaim(p.ID)
		ref := refuse(GateAudit, "fix the audit file ([transmit] audit_file); nothing is sent unrecorded", "audit record not written: %v", err)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	out := &Outcome{PlanID: p.ID, Status: StatusSent, FramesSHA256: p.Hash, Button: press, Answers: []Answer{}, Warnings: []string{}}
	if over.reason != "" {
		out.Warnings = append(out.Warnings, fmt.Sprintf("sent although another node uses the plan's identifiers (%d conflict(s)), for the reason given: %q", len(over.conflicts), over.reason))
	}
	start := s.o.Now()
	ref := s.run(ctx, c, ps, p, out)
	ps.sent.add(start, s.o.Now())
	err := s.ended(ctx, c, p, callTool, out, ref)
	if ref != nil {
		return nil, ref
	}
	if err != nil {
		out.Warnings = append(out.Warnings, "the after-send audit record was not written: "+err.Error())
	}
	if p.expect != nil && ps.Listener == nil {
		out.Warnings = append(out.Warnings, "this port delivers no frames to the transmitter, so answers were not collected: read them with the capture tools")
	}
	return out, nil
}

// ended writes the one record that ends a run (sent, stopped by ref, or
// uncertain) and remembers it for transmit_status; an uncertain run's
// words go to its warnings too. A stop whose record failed is counted as
// an audit failure, as a refusal's is.
func (s *Service) ended(ctx context.Context, c Caller, p *Plan, callTool string, out *Outcome, ref *Refusal) error {
	rec := Record{Event: EventSent, CallTool: callTool, Sent: out.Sent}
	switch u := out.Uncertain; {
	case ref != nil:
		ref.PlanID, ref.FramesSHA256 = p.ID, p.Hash
		rec = Record{Event: EventStopped, CallTool: callTool, Gate: ref.Gate, Message: ref.Message, Sent: ref.Sent}
	case u != nil:
		text := u.Text(out.Sent, len(p.Frames))
		rec = Record{Event: EventUncertain, CallTool: callTool, Sent: out.Sent, Frame: u.Frame, Message: text,
			LateReply: u.LateReply, LateReplyMs: u.LateMs()}
		out.Warnings = append(out.Warnings, text)
	}
	err := s.audit(ctx, rec, c, p)
	if err != nil && ref != nil {
		s.mu.Lock()
		s.auditFailures++
		s.mu.Unlock()
	}
	s.remember(Recent{Time: s.o.Now(), PlanID: p.ID, Port: p.Port, Tool: p.Tool, Event: rec.Event, Gate: rec.Gate, Sent: rec.Sent,
		LateReply: rec.LateReply, owner: c.Owner()})
	return err
}
