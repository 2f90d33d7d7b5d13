package transmit

import (
	"context"
	"math"
	"time"
)

// loadDecimals rounds a shown load to 0.1 % of the bus.
const loadDecimals = 1000

// PortStatus is one port as transmit_status shows it.
type PortStatus struct {
	Port     string
	Medium   Medium
	Enabled  bool // [[port]] transmit = true
	Writer   bool
	Armed    bool
	Mode     Mode
	Bitrate  int
	Rate     RateLimit
	Load     *float64
	LoadNote string
	// CanSend is true when no gate of the box or the port would refuse a
	// plan that adds no load right now; CannotSend lists the ones that
	// would, in Execute's order. The caller's own gates (scope, ack, a
	// person's answer) still apply.
	CanSend    bool
	CannotSend []Blocker
}

// ButtonStatus is the board's confirm button as transmit_status shows it.
type ButtonStatus struct {
	Required bool
	Present  bool
	WaitSecs float64
	// Waiting is the plan waiting for a press now, or nil.
	Waiting *ButtonWaiting
}

// ConfirmStatus counts confirmations: waiting in all, the caller's own,
// expired unanswered, and refused by a bound.
type ConfirmStatus struct {
	Waiting  int
	Yours    []Pending
	Expired  uint64
	Refused  uint64
	TTLSecs  float64
	PerOwner int
}

// Status is the whole transmitter, as one caller sees it.
type Status struct {
	Armed         bool
	BundleLoaded  bool
	LoadCeiling   float64
	PlanTTLSecs   float64
	Plans         int
	YourPlans     int
	PlansEvicted  uint64
	PlansExpired  uint64
	PlansRefused  uint64
	AuditFailures uint64
	Button        ButtonStatus
	Confirmations ConfirmStatus
	// PreviousRun is what start-up found and did; nil before RecordStart.
	PreviousRun *PreviousRun
	Ports       []PortStatus
	// Recent is the caller's own recent transmissions and refusals.
	Recent []Recent
}

// Status reports every port, the caller o's plans and history, and the
// box-wide counters. Another owner's plan ids are not shown.
func (s *Service) Status(o Owner) Status {
	armed := s.o.Arm.Armed()
	now := s.o.Now()
	n, ev, ex, rf := s.plans.counts(now)
	waiting, cex, crf := s.confirm.counts(now)
	st := Status{Armed: armed, BundleLoaded: s.o.BundleLoaded, LoadCeiling: s.o.LoadCeiling,
		PlanTTLSecs: s.o.PlanTTL.Seconds(), Plans: n, YourPlans: len(s.plans.list(o, now)), PlansEvicted: ev, PlansExpired: ex, PlansRefused: rf,
		Button:        ButtonStatus{Required: s.o.RequireButton, Present: s.o.Button != nil, WaitSecs: s.o.ButtonWait.Seconds()},
		Confirmations: ConfirmStatus{Waiting: waiting, Yours: s.Confirmations(o), Expired: cex, Refused: crf, TTLSecs: ConfirmTTL.Seconds(), PerOwner: MaxConfirmPerOwner},
		Ports:         []PortStatus{}, Recent: []Recent{}}
	for _, name := range s.order {
		ps := s.ports[name]
		ps.mu.Lock()
		mode := ps.mode
		ps.mu.Unlock()
		p := PortStatus{Port: name, Medium: ps.Medium, Enabled: ps.Transmit, Writer: ps.Writer != nil,
			Armed: armed, Mode: mode, Bitrate: ps.Bitrate, Rate: s.rate.limit, CannotSend: []Blocker{}}
		if ps.Mode == nil {
			p.Mode = "none"
		}
		switch v, ok := s.busLoad(name); {
		case s.o.BusLoad == nil:
			p.LoadNote = "this port does not measure load"
		case ok:
			v = math.Round(v*loadDecimals) / loadDecimals
			p.Load = &v
		default:
			p.LoadNote = "no frames in the last " + LoadFresh.String()
		}
		for _, r := range s.portBlockers(name, 0, now) {
			p.CannotSend = append(p.CannotSend, blockerOf(r))
		}
		p.CanSend = len(p.CannotSend) == 0
		st.Ports = append(st.Ports, p)
	}
	s.mu.Lock()
	for _, r := range s.recent {
		if r.owner == o {
			st.Recent = append(st.Recent, r)
		}
	}
	if w := s.waiting; w != nil {
		c := *w
		if c.owner != o {
			c.PlanID = ""
		}
		st.Button.Waiting = &c
	}
	if s.previous != nil {
		c := *s.previous
		st.PreviousRun = &c
	}
	st.AuditFailures = s.auditFailures
	s.mu.Unlock()
	return st
}

// Run returns every port to listen-only when the arm input goes off, even
// mid-plan (run also stops before the next frame), until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(armPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.o.Arm.Armed() {
			continue
		}
		for _, name := range s.order {
			if ps := s.ports[name]; ps.Mode != nil {
				if err := s.setMode(ctx, ps, ModeListenOnly); err != nil {
					s.audit(ctx, Record{Event: EventModeError, Port: name, Message: err.Error()}, Caller{Via: "service"}, nil)
				}
			}
		}
	}
}

// History is every caller's recent transmissions and refusals, oldest
// first (the last 64 outcomes), for a timeline: another owner's plan ids
// are blanked, as Status hides them.
func (s *Service) History(o Owner) []Recent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recent, len(s.recent))
	for i, r := range s.recent {
		if r.owner != o {
			r.PlanID = ""
		}
		out[i] = r
	}
	return out
}
