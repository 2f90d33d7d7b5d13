package daemon

import (
	"context"
	"fmt"
	"slices"
	"time"

	"fieldtap/board"
	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/services/canbus"
	"fieldtap/services/metrics"
	"fieldtap/services/transmit"
)

// startTransmit builds the gatekeeper over every CAN and J1708 port.
// Plans (dry runs) work on every port. A port with transmit = true (on
// the sim board, its own ports listed in transmit.sim_ports) whose driver
// has a transmit side (slcan, socketcan, j1708, the sim board's can0)
// gets its Writer, Mode and Listener from the driver through the adapters
// in txports.go; any other
// port keeps a nil Writer, and sends on it are refused by the port_config
// gate, naming the missing writer. A port without transmit = true is
// never given a writer at all, so no code path can reach its bus.
//
// The confirm button is the board's confirm input with the status LED
// (on the sim board, transmit.confirm_file). Once built, the service
// records what start-up found: the plans the previous run left mid-send
// (the audit file's tail) and the listen-only step's resets. Every audit
// record also passes a counter for the metrics endpoint, which keeps the
// auditor's answer (no file: every record refused). The service's arm
// watcher then runs until the stage stops: its stop joins the watcher
// before it closes the transmit audit file, so no record is written to a
// closed file.
func (b *box) startTransmit(ctx context.Context) (func() error, error) {
	enabled := map[string]board.Port{}
	for _, p := range b.cfg.Ports {
		enabled[p.Name] = p
	}
	if b.cfg.Board == "sim" {
		// The sim board's ports have no [[port]] tables: transmit.sim_ports
		// enables them.
		for _, name := range b.cfg.Transmit.SimPorts {
			if !slices.ContainsFunc(b.sources, func(s capture.Source) bool { return s.Name() == name && simWriter(s) }) {
				return nil, fmt.Errorf("transmit.sim_ports: port %q has no simulated writer; the sim board's CAN port %s has", name, simCANPort)
			}
			enabled[name] = board.Port{Name: name, Transmit: true}
		}
	}
	var ports []transmit.Port
	for _, src := range b.sources {
		var m transmit.Medium
		switch src.Kind() {
		case capture.KindCAN:
			m = transmit.MediumCAN
		case capture.KindJ1708:
			m = transmit.MediumJ1708
		default:
			continue
		}
		pc := enabled[src.Name()]
		bitrate := pc.Bitrate
		if bitrate == 0 && m == transmit.MediumCAN {
			bitrate = canbus.DefaultBitrate
		}
		tp := transmit.Port{Name: src.Name(), Medium: m, Bitrate: bitrate, Transmit: pc.Transmit}
		if pc.Transmit && !transmitSide(src, &tp) {
			b.log.Warn("port enabled for transmit has no transmit side in this build", "port", tp.Name, "driver", pc.Driver)
		}
		ports = append(ports, tp)
	}
	c := b.cfg.Transmit
	var hints transmit.Hints
	if b.cfg.Board == "sim" {
		hints = transmit.Hints{Sim: true, ArmFile: c.ArmFile, ConfirmFile: c.ConfirmFile}
		for _, src := range b.sources {
			if _, ok := src.(*sim.Port); ok {
				hints.SimPorts = append(hints.SimPorts, src.Name())
			}
		}
	}
	o := transmit.Options{
		Hints:         hints,
		Ports:         ports,
		BundleLoaded:  slices.Contains(b.bundles(), "transmit"),
		Rate:          transmit.RateLimit{Plans: c.RatePlans, Window: c.Window()},
		LoadCeiling:   c.BusLoadCeiling,
		PlanTTL:       c.TTL(),
		BusLoad:       busLoad(b.an.can, b.an.j1708Load),
		Bus:           busRecord{can: b.an.can, j1939: b.an.j1939, uds: b.an.uds},
		RequireButton: c.RequireButton,
		ButtonWait:    c.Wait(),
	}
	// The sim board's arm file, when configured, is its arm input: the
	// sim GPIO line has no key a test or a person can turn. A nil
	// *board.ArmSwitch in the interface would not be nil: only set it
	// when present. The same goes for the confirm button.
	switch {
	case b.cfg.Board == "sim" && c.ArmFile != "":
		o.Arm = transmit.FileArm{Path: c.ArmFile}
	case b.hw.arm != nil:
		o.Arm = b.hw.arm
	}
	switch {
	case b.cfg.Board == "sim" && c.ConfirmFile != "":
		o.Button = board.NewFileConfirm(c.ConfirmFile, b.hw.status)
	case b.hw.confirm != nil:
		o.Button = board.NewConfirmButton(b.hw.confirm, b.hw.status)
	}
	if o.RequireButton && o.Button == nil {
		b.log.Warn("transmit.require_button is set and this board has no confirm button: every send will be refused by gate button")
	}
	closeAudit := func() error { return nil }
	var tail transmit.Tail
	var file transmit.Auditor // a nil *FileAuditor must not become a non-nil Auditor
	if c.AuditFile != "" {
		fa, err := transmit.OpenFileAuditor(c.AuditFile)
		if err != nil {
			return nil, err
		}
		file, closeAudit, tail = fa, fa.Close, fa.Tail()
	}
	b.outcomes = metrics.CountTransmit(file)
	o.Audit = b.outcomes
	svc, err := transmit.New(o)
	if err != nil {
		_ = closeAudit() // New's error is the one to report
		return nil, fmt.Errorf("transmit: %w", err)
	}
	g := newGroup(ctx)
	for _, in := range tail.Interrupted {
		b.log.Warn("the previous run ended mid-plan", "plan", in.PlanID, "port", in.Port, "tool", in.Tool, "began", in.Began)
	}
	if err := svc.RecordStart(g.ctx, tail, b.resets); err != nil {
		b.log.Error("start-up not recorded in the transmit audit", "err", err)
	}
	g.wg.Go(func() { svc.Run(g.ctx) })
	g.wg.Go(func() { watchMarks(g.ctx, o.Button, b.marks, b.log) })
	b.log.Info("transmitter ready", "ports", len(ports), "bundle_loaded", o.BundleLoaded, "audit", c.AuditFile != "",
		"arm", o.Arm != nil, "confirm_button", o.Button != nil, "require_button", o.RequireButton)
	b.tx = svc
	return func() error { g.stop(); return closeAudit() }, nil
}

// busLoad reads the last measured second of a CAN port from its store, or
// of a J1708 port from its meter (the J1587 store merges ports).
func busLoad(can *canbus.Store, j1708 map[string]*transmit.LoadMeter) func(string) (float64, bool) {
	return func(name string) (float64, bool) {
		if m := j1708[name]; m != nil {
			return m.Load(time.Now())
		}
		if can == nil {
			return 0, false
		}
		p := can.Lookup(name)
		if p == nil {
			return 0, false
		}
		secs := p.Seconds()
		if len(secs) == 0 || time.Since(secs[len(secs)-1].Start) > transmit.LoadFresh {
			return 0, false
		}
		return secs[len(secs)-1].Load, true
	}
}
