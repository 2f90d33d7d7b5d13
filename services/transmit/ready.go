package transmit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Blocker is one gate that would refuse a send right now. Execute refuses
// with the first one; transmit_status and Next list them all. Both come
// from the same checks, so what the status promises is what Execute does.
type Blocker struct {
	Gate    string
	Code    string
	Message string
	Hint    string
}

func blockerOf(r *Refusal) Blocker {
	return Blocker{Gate: r.Gate, Code: r.Code, Message: r.Message, Hint: r.Hint}
}

// callerBlockers are the gates on who calls: bundle and scope.
func (s *Service) callerBlockers(c Caller) []*Refusal {
	var out []*Refusal
	if c.Via == ViaMCP && !s.o.BundleLoaded {
		out = append(out, refuse(GateBundle, "start fieldtapd with the transmit bundle (--mcp-bundles …,transmit)", "the MCP transmit bundle is not loaded"))
	}
	if c.Transport == TransportHTTP && !slices.Contains(c.Scopes, ScopeTransmit) {
		out = append(out, refuse(GateScope, "use a token that carries the transmit scope", "the caller's token does not carry the %q scope", ScopeTransmit))
	}
	return out
}

// portBlockers are the gates on the box and the port, in Execute's order:
// port_config, arm, bus_load (measured plus added), rate, then the
// configuration Execute would otherwise meet only after asking a person:
// an audit file, and the confirm button when it is required.
func (s *Service) portBlockers(port string, added float64, now time.Time) []*Refusal {
	var out []*Refusal
	ps := s.ports[port]
	switch {
	case ps == nil:
		return append(out, refuse(GatePortConfig, "check transmit_status for the ports", "port %s does not exist", port))
	case !ps.Transmit:
		out = append(out, refuse(GatePortConfig, s.o.Hints.enable(port), "port %s is not enabled for transmit in the configuration", port))
	case ps.Writer == nil:
		out = append(out, refuse(GatePortConfig, "this board has no transmit path for the port; plans still show what would be sent", "port %s has no writer on this board", port))
	}
	if !s.o.Arm.Armed() {
		out = append(out, refuse(GateArm, s.o.Hints.arm(), "the board's transmit-arm input is off"))
	}
	if load, known := s.busLoad(port); known && load+added > s.o.LoadCeiling {
		out = append(out, refuse(GateBusLoad, "wait for quieter traffic (bus_load shows it) or send fewer frames",
			"measured load %.1f %% plus the plan's %.1f %% exceeds the %.0f %% ceiling", 100*load, 100*added, 100*s.o.LoadCeiling))
	}
	if ok, retry := s.rate.peek(port, now); !ok {
		out = append(out, refuse(GateRate, fmt.Sprintf("try again in %v", retry.Round(time.Second)),
			"port %s has run %d plans in the last %v", port, s.o.Rate.Plans, s.o.Rate.Window))
	}
	if !auditConfigured(s.o.Audit) {
		out = append(out, refuse(GateAudit, "set [transmit] audit_file; nothing is sent unrecorded", "no transmit audit file is configured"))
	}
	if s.o.RequireButton && s.o.Button == nil {
		out = append(out, s.buttonAbsent())
	}
	return out
}

// busLoad is the measured load of port, when the port measures it.
func (s *Service) busLoad(port string) (float64, bool) {
	if s.o.BusLoad == nil {
		return 0, false
	}
	return s.o.BusLoad(port)
}

// planGate refuses a plan that is not the caller's, has expired, ran, or
// ended. p is nil when the owner has no live plan of that id.
func planGate(p *Plan, id string, ttl time.Duration) *Refusal {
	switch {
	case p == nil:
		return refuseCode(GatePlan, CodeNoPlan, "make the plan again with a dry run; plans expire after "+ttl.String(),
			"no plan %q for this caller: never made by it, expired, or evicted", id)
	case p.Executed:
		return refuseCode(GatePlan, CodePlanRun, "a plan runs once: make a new dry run to send again", "plan %s has already run", p.ID)
	case p.Ended != "":
		return refuseCode(GatePlan, CodePlanEnded, "make a new dry run; a person will be asked again", "plan %s is closed: %s", p.ID, strings.ReplaceAll(p.Ended, "_", " "))
	}
	return nil
}

// Next is how to send a plan from where the caller stands, or why it
// cannot be sent now: the MCP layer's `next` suggestion. It never offers a
// call that a gate would refuse for a reason known now (no writer, not
// enabled, disarmed, load, rate, no audit file, no button, a client that
// cannot ask a person for an actuate or erase plan).
type Next struct {
	CanSend bool
	// Text is one line for a person or an agent.
	Text     string
	Blockers []Blocker
}

// Next says how o's plan p can be sent by c, whose client can ask a
// person when canAsk.
func (s *Service) Next(c Caller, canAsk bool, p *Plan) Next {
	refs := s.callerBlockers(c)
	added := 0.0
	if p.AddedLoad != nil {
		added = *p.AddedLoad
	}
	if ref := planGate(s.plans.get(c.Owner(), p.ID, s.o.Now()), p.ID, s.o.PlanTTL); ref != nil {
		refs = append(refs, ref)
	}
	refs = append(refs, s.portBlockers(p.Port, added, s.o.Now())...)
	if ref, _ := s.conflictGate(p, "", s.o.Now()); ref != nil {
		refs = append(refs, ref)
	}
	if !canAsk && p.Risk != RiskRead {
		refs = append(refs, s.confirmUnavailable(p.Risk))
	}
	n := Next{CanSend: len(refs) == 0, Blockers: []Blocker{}}
	if n.CanSend {
		n.Text = fmt.Sprintf("nothing was sent. To send exactly this plan: transmit_execute {\"plan_id\": %q, \"ack_active\": true} before %s",
			p.ID, p.Expires.UTC().Format(time.RFC3339))
		if s.o.RequireButton {
			n.Text += "; then a person at the box presses the confirm button while the status LED blinks " + p.ButtonCode
			if f := s.o.Hints.ConfirmFile; f != "" {
				n.Text += " (sim board: `fieldtap button press --file " + f + "`)"
			}
		}
		return n
	}
	msgs := make([]string, len(refs))
	for i, r := range refs {
		n.Blockers = append(n.Blockers, blockerOf(r))
		msgs[i] = r.Gate + ": " + r.Message
	}
	n.Text = "nothing was sent, and this plan cannot be sent now (" + strings.Join(msgs, "; ") + ")"
	return n
}

func (s *Service) confirmUnavailable(r Risk) *Refusal {
	return refuseCode(GateConfirmation, CodeConfirmUnavailable, s.o.Hints.askPerson(),
		"a %s-class plan needs a person's confirmation and this client cannot ask one", r)
}
