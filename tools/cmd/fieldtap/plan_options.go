package main

import (
	"fmt"
	"slices"

	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

// cliOptions builds the gatekeeper's options from the box's config for
// the plan's port. The CLI is not an MCP caller, so the bundle gate does
// not apply; every other gate does. The CLI never opens a bus itself:
// the port belongs to fieldtapd's capture loop (a serial port cannot have
// two readers), so the port has no writer here and a run is refused by
// port_config, audited, with noWriterHelp saying how to send the plan
// through the box. On a
// board with a GPIO key switch the daemon owns the line: the CLI reads
// only the sim board's arm file and is otherwise never armed.
func cliOptions(cfg config.Config, pf planFile) (transmit.Options, func(), error) {
	if err := cfg.Validate(); err != nil {
		return transmit.Options{}, nil, err
	}
	port := transmit.Port{Name: pf.Port, Medium: pf.Medium}
	table := false
	for _, p := range cfg.Ports {
		if p.Name == pf.Port {
			port.Transmit, port.Bitrate, table = p.Transmit, p.Bitrate, true
		}
	}
	var hints transmit.Hints
	if cfg.Board == "sim" {
		hints = transmit.Hints{Sim: true, ArmFile: cfg.Transmit.ArmFile, ConfirmFile: cfg.Transmit.ConfirmFile}
		// On the sim board a port without a [[port]] table is one of
		// the board's own, enabled by sim_ports.
		if !table {
			hints.SimPorts = []string{pf.Port}
			port.Transmit = slices.Contains(cfg.Transmit.SimPorts, pf.Port)
		}
	}
	o := transmit.Options{
		Ports:       []transmit.Port{port},
		Rate:        transmit.RateLimit{Plans: cfg.Transmit.RatePlans, Window: cfg.Transmit.Window()},
		LoadCeiling: cfg.Transmit.BusLoadCeiling,
		PlanTTL:     cfg.Transmit.TTL(),
		// The button belongs to the daemon, like the key switch's line;
		// the gate is the box's, so it applies here too.
		RequireButton: cfg.Transmit.RequireButton,
		ButtonWait:    cfg.Transmit.Wait(),
		Hints:         hints,
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
