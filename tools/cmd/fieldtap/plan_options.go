package main

import (
	"fmt"

	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

// cliOptions builds the gatekeeper's options from the box's config for
// the plan's port. The CLI is not an MCP caller, so the bundle gate does
// not apply; every other gate does. No driver in this build has a
// transmit side yet, so the port has no writer and a run is refused by
// port_config (the plan is still shown and the refusal audited). On a
// board with a GPIO key switch the daemon owns the line: the CLI reads
// only the sim board's arm file and is otherwise never armed.
func cliOptions(cfg config.Config, pf planFile) (transmit.Options, func(), error) {
	if err := cfg.Validate(); err != nil {
		return transmit.Options{}, nil, err
	}
	port := transmit.Port{Name: pf.Port, Medium: pf.Medium}
	for _, p := range cfg.Ports {
		if p.Name == pf.Port {
			port.Transmit, port.Bitrate = p.Transmit, p.Bitrate
		}
	}
	o := transmit.Options{
		Ports:       []transmit.Port{port},
		Rate:        transmit.RateLimit{Plans: cfg.Transmit.RatePlans, Window: cfg.Transmit.Window()},
		LoadCeiling: cfg.Transmit.BusLoadCeiling,
		PlanTTL:     cfg.Transmit.TTL(),
	}
	if cfg.Board == "sim" && cfg.Transmit.ArmFile != "" {
		o.Arm = transmit.FileArm{Path: cfg.Transmit.ArmFile}
	}
	closeAudit := func() {}
	if cfg.Transmit.AuditFile != "" {
		fa, err := transmit.OpenFileAuditor(cfg.Transmit.AuditFile)
		if err != nil {
			return o, nil, fmt.Errorf("audit: %w", err)
		}
		o.Audit, closeAudit = fa, func() { fa.Close() }
	}
	return o, closeAudit, nil
}
