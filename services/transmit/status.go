package transmit

import (
	"context"
	"time"
)

// PortStatus is one port as transmit_status shows it.
type PortStatus struct {
	Port     string    `json:"port"`
	Medium   Medium    `json:"medium"`
	Enabled  bool      `json:"enabled"` // [[port]] transmit = true
	Writer   bool      `json:"has_writer"`
	Armed    bool      `json:"armed"`
	Mode     Mode      `json:"mode"`
	Bitrate  int       `json:"bitrate"`
	Rate     RateLimit `json:"rate_limit"`
	Load     *float64  `json:"measured_bus_load"`
	LoadNote string    `json:"measured_bus_load_note,omitempty"`
	// CanSend is true when the configuration gates would let a plan
	// through right now (the caller's own gates still apply).
	CanSend bool `json:"can_send_now"`
}

// Status is the whole transmitter.
type Status struct {
	Armed         bool         `json:"armed"`
	BundleLoaded  bool         `json:"bundle_loaded"`
	LoadCeiling   float64      `json:"bus_load_ceiling"`
	PlanTTLSecs   float64      `json:"plan_ttl_s"`
	Plans         int          `json:"plans_stored"`
	PlansEvicted  uint64       `json:"plans_evicted"`
	PlansExpired  uint64       `json:"plans_expired"`
	AuditFailures uint64       `json:"audit_failures"`
	Ports         []PortStatus `json:"ports"`
	Recent        []Recent     `json:"recent"`
}

// Status reports every port and the recent history.
func (s *Service) Status() Status {
	armed := s.o.Arm.Armed()
	now := s.o.Now()
	n := len(s.plans.list(now))
	s.plans.mu.Lock()
	ev, ex := s.plans.evicted, s.plans.expired
	s.plans.mu.Unlock()
	st := Status{Armed: armed, BundleLoaded: s.o.BundleLoaded, LoadCeiling: s.o.LoadCeiling,
		PlanTTLSecs: s.o.PlanTTL.Seconds(), Plans: n, PlansEvicted: ev, PlansExpired: ex, Ports: []PortStatus{}}
	for _, name := range s.order {
		ps := s.ports[name]
		ps.mu.Lock()
		mode := ps.mode
		ps.mu.Unlock()
		p := PortStatus{Port: name, Medium: ps.Medium, Enabled: ps.Transmit, Writer: ps.Writer != nil,
			Armed: armed, Mode: mode, Bitrate: ps.Bitrate, Rate: s.rate.limit}
		if ps.Mode == nil {
			p.Mode = "none"
		}
		if s.o.BusLoad != nil {
			if v, ok := s.o.BusLoad(name); ok {
				p.Load = &v
			} else {
				p.LoadNote = "no frames in the last second"
			}
		} else {
			p.LoadNote = "this port does not measure load"
		}
		p.CanSend = p.Enabled && p.Writer && armed
		st.Ports = append(st.Ports, p)
	}
	s.mu.Lock()
	st.Recent = append([]Recent{}, s.recent...)
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
