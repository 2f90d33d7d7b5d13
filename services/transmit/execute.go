package transmit

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Execute runs the stored plan planID, exactly as stored, once. Every gate
// is checked here, in this order, on every call: bundle, scope, ack_active,
// plan, port_config, arm, bus_load, rate, confirmation, audit. A refusal is
// a *Refusal naming its gate, recorded in the audit log, and no byte
// reaches the writer.
//
// When a person must confirm and has not yet, Execute returns
// StatusNeedsConfirmation with a question and a one-time token; the caller
// asks (MCP elicitation, a terminal prompt) and calls Execute again with
// the reply and the token. The gates run again on that call, so a key
// switched off while the person read the question still refuses.
func (s *Service) Execute(ctx context.Context, c Caller, planID string, ack bool, conf Confirmation) (*Outcome, error) {
	now := s.o.Now()
	p := s.plans.get(planID, now)
	out, ref := s.gates(ctx, c, p, planID, ack, conf, now)
	if ref != nil {
		s.refused(ctx, c, p, planID, ref)
		return nil, ref
	}
	if out != nil {
		return out, nil
	}
	return s.send(ctx, c, p, conf)
}

func (s *Service) refused(ctx context.Context, c Caller, p *Plan, planID string, ref *Refusal) {
	r := Record{Event: EventRefused, Gate: ref.Gate, Message: ref.Message, Sent: ref.Sent}
	if p == nil {
		r.PlanID = planID
	}
	if err := s.audit(ctx, r, c, p); err != nil {
		s.mu.Lock()
		s.auditFailures++
		s.mu.Unlock()
	}
	rc := Recent{Time: s.o.Now(), PlanID: planID, Event: EventRefused, Gate: ref.Gate, Sent: ref.Sent}
	if p != nil {
		rc.Port, rc.Tool = p.Port, p.Tool
	}
	s.remember(rc)
}

// gates returns a refusal, a needs-confirmation outcome, or (nil, nil)
// when the plan may be sent.
func (s *Service) gates(ctx context.Context, c Caller, p *Plan, planID string, ack bool, conf Confirmation, now time.Time) (*Outcome, *Refusal) {
	if c.Via == ViaMCP && !s.o.BundleLoaded {
		return nil, refuse(GateBundle, "start fieldtapd with the transmit bundle (--mcp-bundles …,transmit)", "the MCP transmit bundle is not loaded")
	}
	if c.Transport == TransportHTTP && !slices.Contains(c.Scopes, ScopeTransmit) {
		return nil, refuse(GateScope, "use a token that carries the transmit scope", "the caller's token does not carry the %q scope", ScopeTransmit)
	}
	if !ack {
		return nil, refuse(GateAck, "read the plan, then call again with ack_active: true", "ack_active is not true")
	}
	if p == nil {
		return nil, refuse(GatePlan, "make the plan again with a dry run; plans expire after "+s.o.PlanTTL.String(), "no plan %q: never made, expired, or evicted", planID)
	}
	if p.Executed {
		return nil, refuse(GatePlan, "a plan runs once: make a new dry run to send again", "plan %s has already run", p.ID)
	}
	ps := s.ports[p.Port]
	switch {
	case ps == nil:
		return nil, refuse(GatePortConfig, "check transmit_status for the ports", "port %s no longer exists", p.Port)
	case !ps.Transmit:
		return nil, refuse(GatePortConfig, "set transmit = true in this port's [[port]] table and restart", "port %s is not enabled for transmit in the configuration", p.Port)
	case ps.Writer == nil:
		return nil, refuse(GatePortConfig, "this board has no transmit path for the port; plans still show what would be sent", "port %s has no writer on this board", p.Port)
	}
	if !s.o.Arm.Armed() {
		return nil, refuse(GateArm, "a person at the box turns the transmit-arm key switch on (sim board: the arm file)", "the board's transmit-arm input is off")
	}
	if s.o.BusLoad != nil {
		if load, known := s.o.BusLoad(p.Port); known {
			added := 0.0
			if p.AddedLoad != nil {
				added = *p.AddedLoad
			}
			if load+added > s.o.LoadCeiling {
				return nil, refuse(GateBusLoad, "wait for quieter traffic (bus_load shows it) or send fewer frames",
					"measured load %.1f %% plus the plan's %.1f %% exceeds the %.0f %% ceiling", 100*load, 100*added, 100*s.o.LoadCeiling)
			}
		}
	}
	if ok, retry := s.rate.peek(p.Port, now); !ok {
		return nil, refuse(GateRate, fmt.Sprintf("try again in %v", retry.Round(time.Second)),
			"port %s has run %d plans in the last %v", p.Port, s.o.Rate.Plans, s.o.Rate.Window)
	}
	return s.confirm(ctx, c, p, conf, now)
}

// confirm is the confirmation gate.
func (s *Service) confirm(ctx context.Context, c Caller, p *Plan, conf Confirmation, now time.Time) (*Outcome, *Refusal) {
	if conf.Reply == ReplyNone && conf.Token == "" {
		if !conf.CanAsk {
			if p.Risk == RiskRead {
				return nil, nil // the gates above suffice for a read; the audit says nobody was asked
			}
			return nil, refuse(GateConfirmation, "use a client that supports elicitation, or run the plan at the box with `fieldtap plan run`",
				"a %s-class plan needs a person's confirmation and this client cannot ask one", p.Risk)
		}
		tok := newID("q-")
		s.mu.Lock()
		for k, q := range s.pending {
			if !now.Before(q.expires) {
				delete(s.pending, k)
			}
		}
		if len(s.pending) >= maxPending {
			s.mu.Unlock()
			return nil, refuse(GateConfirmation, "answer or let the earlier questions expire", "%d confirmations are already waiting", maxPending)
		}
		exp := now.Add(confirmTTL)
		if p.Expires.Before(exp) {
			exp = p.Expires
		}
		s.pending[tok] = pendingQ{planID: p.ID, expires: exp}
		s.mu.Unlock()
		s.audit(ctx, Record{Event: EventAsked}, c, p)
		return &Outcome{PlanID: p.ID, Status: StatusNeedsConfirmation, Token: tok, Question: question(p),
			Answers: []Answer{}, Warnings: []string{}}, nil
	}
	s.mu.Lock()
	q, known := s.pending[conf.Token]
	delete(s.pending, conf.Token) // one answer per question
	s.mu.Unlock()
	if !known || q.planID != p.ID || !now.Before(q.expires) {
		return nil, refuse(GateConfirmation, "run the plan again to be asked afresh", "the reply does not answer a question this box asked about plan %s, or the question expired", p.ID)
	}
	switch conf.Reply {
	case ReplyAccept:
		return nil, nil
	case ReplyDecline:
		return nil, refuse(GateConfirmation, "nothing was sent", "the person declined")
	case ReplyCancel:
		return nil, refuse(GateConfirmation, "nothing was sent", "the person cancelled")
	}
	return nil, refuse(GateConfirmation, "nothing was sent", "no answer from the person")
}

// question is what a person is asked: the plan, byte for byte.
func question(p *Plan) string {
	return "Send these frames on the vehicle bus? Nothing is sent unless you accept.\n\n" + p.Text()
}

// send runs the plan after every gate has passed.
func (s *Service) send(ctx context.Context, c Caller, p *Plan, conf Confirmation) (*Outcome, error) {
	ps := s.ports[p.Port]
	ps.busy.Lock()
	defer ps.busy.Unlock()
	now := s.o.Now()
	if ok, retry := s.rate.take(p.Port, now); !ok {
		ref := refuse(GateRate, fmt.Sprintf("try again in %v", retry.Round(time.Second)), "port %s has run %d plans in the last %v", p.Port, s.o.Rate.Plans, s.o.Rate.Window)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	if !s.plans.claim(p.ID, now) {
		ref := refuse(GatePlan, "make a new dry run", "plan %s has already run or expired", p.ID)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	confirmed := "accepted"
	if conf.Reply == ReplyNone {
		confirmed = "not asked: read-class plan, client cannot ask"
	}
	if err := s.audit(ctx, Record{Event: EventSending, Frames: p.Frames, Confirm: confirmed}, c, p); err != nil {
		s.plans.unclaim(p.ID)
		ref := refuse(GateAudit, "fix the audit file ([transmit] audit_file); nothing is sent unrecorded", "audit record not written: %v", err)
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	out := &Outcome{PlanID: p.ID, Status: StatusSent, Answers: []Answer{}, Warnings: []string{}}
	ref := s.run(ctx, c, ps, p, out)
	if ref != nil {
		s.refused(ctx, c, p, p.ID, ref)
		return nil, ref
	}
	if err := s.audit(ctx, Record{Event: EventSent, Sent: out.Sent}, c, p); err != nil {
		out.Warnings = append(out.Warnings, "the after-send audit record was not written: "+err.Error())
	}
	s.remember(Recent{Time: s.o.Now(), PlanID: p.ID, Port: p.Port, Tool: p.Tool, Event: EventSent, Sent: out.Sent})
	if p.expect != nil && ps.Listener == nil {
		out.Warnings = append(out.Warnings, "this port delivers no frames to the transmitter, so answers were not collected: read them with the capture tools")
	}
	return out, nil
}
