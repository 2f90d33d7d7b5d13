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
	"fieldtap/services/transmit"
)

// loadFresh is how recent the last bus-load second must be to count as
// measured: older means the bus is quiet or the port stopped.
const loadFresh = 2 * time.Second

// newTransmitter builds the gatekeeper over every CAN and J1708 port.
// Plans (dry runs) work on every port. A port with transmit = true whose
// driver has a transmit side (slcan, socketcan, j1708) gets its Writer, Mode and
// Listener from the driver through the adapters in txports.go; any other
// port keeps a nil Writer, and sends on it are refused by the port_config
// gate, naming the missing writer. A port without transmit = true is
// never given a writer at all, so no code path can reach its bus. The
// service's arm watcher runs in wg until ctx ends; join it before calling
// the returned close, which closes the transmit audit file.
func newTransmitter(ctx context.Context, wg *sync.WaitGroup, cfg config.Config, arm *board.ArmSwitch, sources []capture.Source, bundles []string, can *canbus.Store, log *slog.Logger) (*transmit.Service, func(), error) {
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
		Ports:        ports,
		BundleLoaded: slices.Contains(bundles, "transmit"),
		Rate:         transmit.RateLimit{Plans: cfg.Transmit.RatePlans, Window: cfg.Transmit.Window()},
		LoadCeiling:  cfg.Transmit.BusLoadCeiling,
		PlanTTL:      cfg.Transmit.TTL(),
		BusLoad:      busLoad(can),
	}
	// The sim board's arm file, when configured, is its arm input: the
	// sim GPIO line has no key a test or a person can turn. A nil
	// *board.ArmSwitch in the interface would not be nil: only set it
	// when present.
	switch {
	case cfg.Board == "sim" && cfg.Transmit.ArmFile != "":
		o.Arm = transmit.FileArm{Path: cfg.Transmit.ArmFile}
	case arm != nil:
		o.Arm = arm
	}
	closeAudit := func() {}
	if cfg.Transmit.AuditFile != "" {
		fa, err := transmit.OpenFileAuditor(cfg.Transmit.AuditFile)
		if err != nil {
			return nil, nil, err
		}
		o.Audit, closeAudit = fa, func() { fa.Close() }
	}
	svc, err := transmit.New(o)
	if err != nil {
		closeAudit()
		return nil, nil, fmt.Errorf("transmit: %w", err)
	}
	wg.Go(func() { svc.Run(ctx) })
	log.Info("transmitter ready", "ports", len(ports), "bundle_loaded", o.BundleLoaded, "audit", cfg.Transmit.AuditFile != "", "arm", o.Arm != nil)
	return svc, closeAudit, nil
}

// busLoad reads the last measured second of a CAN port.
func busLoad(can *canbus.Store) func(string) (float64, bool) {
	return func(name string) (float64, bool) {
		if can == nil {
			return 0, false
		}
		p := can.Lookup(name)
		if p == nil {
			return 0, false
		}
		secs := p.Seconds()
		if len(secs) == 0 || time.Since(secs[len(secs)-1].Start) > loadFresh {
			return 0, false
		}
		return secs[len(secs)-1].Load, true
	}
}
