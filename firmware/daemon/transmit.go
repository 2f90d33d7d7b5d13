package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"fieldtap/board"
	"fieldtap/drivers/capture"
	"fieldtap/firmware/config"
	"fieldtap/services/canbus"
	"fieldtap/services/metrics"
	"fieldtap/services/transmit"
)

// newTransmitter builds the gatekeeper over every CAN and J1708 port.
// Plans (dry runs) work on every port. A port with transmit = true whose
// driver has a transmit side (slcan, socketcan, j1708) gets its Writer, Mode and
// Listener from the driver through the adapters in txports.go; any other
// port keeps a nil Writer, and sends on it are refused by the port_config
// gate, naming the missing writer. A port without transmit = true is
// never given a writer at all, so no code path can reach its bus. The
// service's arm watcher runs in wg until ctx ends; join it before calling
// the returned close, which closes the transmit audit file.
//
// The confirm button is the board's confirm input with the status LED
// (on the sim board, transmit.confirm_file). Once built, the service
// records what start-up found: the plans the previous run left mid-send
// (the audit file's tail) and the listen-only step's resets. Every audit
// record also passes a counter for the metrics endpoint, which keeps the
// auditor's answer (no file: every record refused).
func newTransmitter(ctx context.Context, wg *sync.WaitGroup, cfg config.Config, hw hardware, sources []capture.Source, bundles []string, an *analysers, resets []transmit.PortReset, log *slog.Logger) (*transmit.Service, *metrics.TransmitCounter, func(), error) {
	enabled := map[string]board.Port{}
	for _, p := range cfg.Ports {
		enabled[p.Name] = p
	}
	var ports []transmit.Port
	for _, src := range sources {
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
			log.Warn("port enabled for transmit has no transmit side in this build", "port", tp.Name, "driver", pc.Driver)
		}
		ports = append(ports, tp)
	}
	o := transmit.Options{
		Ports:         ports,
		BundleLoaded:  slices.Contains(bundles, "transmit"),
		Rate:          transmit.RateLimit{Plans: cfg.Transmit.RatePlans, Window: cfg.Transmit.Window()},
		LoadCeiling:   cfg.Transmit.BusLoadCeiling,
		PlanTTL:       cfg.Transmit.TTL(),
		BusLoad:       busLoad(an.can, an.j1708Load),
		RequireButton: cfg.Transmit.RequireButton,
		ButtonWait:    cfg.Transmit.Wait(),
	}
	// The sim board's arm file, when configured, is its arm input: the
	// sim GPIO line has no key a test or a person can turn. A nil
	// *board.ArmSwitch in the interface would not be nil: only set it
	// when present. The same goes for the confirm button.
	switch {
	case cfg.Board == "sim" && cfg.Transmit.ArmFile != "":
		o.Arm = transmit.FileArm{Path: cfg.Transmit.ArmFile}
	case hw.arm != nil:
		o.Arm = hw.arm
	}
	switch {
	case cfg.Board == "sim" && cfg.Transmit.ConfirmFile != "":
		o.Button = board.NewFileConfirm(cfg.Transmit.ConfirmFile, hw.status)
	case hw.confirm != nil:
		o.Button = board.NewConfirmButton(hw.confirm, hw.status)
	}
	if o.RequireButton && o.Button == nil {
		log.Warn("transmit.require_button is set and this board has no confirm button: every send will be refused by gate button")
	}
	closeAudit := func() {}
	var tail transmit.Tail
	var file transmit.Auditor // a nil *FileAuditor must not become a non-nil Auditor
	if cfg.Transmit.AuditFile != "" {
		fa, err := transmit.OpenFileAuditor(cfg.Transmit.AuditFile)
		if err != nil {
			return nil, nil, nil, err
		}
		file, closeAudit, tail = fa, func() { fa.Close() }, fa.Tail()
	}
	counter := metrics.CountTransmit(file)
	o.Audit = counter
	svc, err := transmit.New(o)
	if err != nil {
		closeAudit()
		return nil, nil, nil, fmt.Errorf("transmit: %w", err)
	}
	for _, in := range tail.Interrupted {
		log.Warn("the previous run ended mid-plan", "plan", in.PlanID, "port", in.Port, "tool", in.Tool, "began", in.Began)
	}
	if err := svc.RecordStart(ctx, tail, resets); err != nil {
		log.Error("start-up not recorded in the transmit audit", "err", err)
	}
	wg.Go(func() { svc.Run(ctx) })
	log.Info("transmitter ready", "ports", len(ports), "bundle_loaded", o.BundleLoaded, "audit", cfg.Transmit.AuditFile != "",
		"arm", o.Arm != nil, "confirm_button", o.Button != nil, "require_button", o.RequireButton)
	return svc, counter, closeAudit, nil
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
