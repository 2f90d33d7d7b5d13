package config

import (
	"fmt"
	"time"

	"fieldtap/services/transmit"
)

// Transmit limit defaults (services/transmit explains each).
const (
	DefaultTransmitRatePlans  = 6
	DefaultTransmitRateWindow = "1m"
	DefaultTransmitLoadCeil   = 0.7
	DefaultTransmitPlanTTL    = "10m"
)

// DefaultTransmitButtonWait is services/transmit's.
var DefaultTransmitButtonWait = transmit.DefaultButtonWait.String()

// Transmit is the [transmit] table: limits of the gatekeeper. Which ports
// may transmit is per [[port]] (transmit = true).
type Transmit struct {
	// AuditFile is the JSON-lines transmit record; empty refuses every
	// send (dry runs still work).
	AuditFile string `toml:"audit_file"`
	// RatePlans plans may run per port within RateWindow.
	RatePlans  int    `toml:"rate_plans"`
	RateWindow string `toml:"rate_window"`
	// BusLoadCeiling refuses a plan above this measured-plus-added load (0..1].
	BusLoadCeiling float64 `toml:"bus_load_ceiling"`
	// PlanTTL is how long a dry-run plan can be executed.
	PlanTTL string `toml:"plan_ttl"`
	// ArmFile is the sim board's transmit-arm input: armed while the file
	// says "armed". Only the sim board reads it.
	ArmFile string `toml:"arm_file"`
	// RequireButton makes every execution wait for a press of the board's
	// confirm button (its profile's confirm_input; on the sim board,
	// ConfirmFile), up to ButtonWait; without a press nothing is sent.
	RequireButton bool   `toml:"require_button"`
	ButtonWait    string `toml:"button_wait"`
	// ConfirmFile is the sim board's confirm button: a change of the
	// file's content is a press (`fieldtap button press`). Only the sim
	// board reads it.
	ConfirmFile string `toml:"confirm_file"`
	// SimPorts are the sim board's ports that may transmit: its
	// [[port]] transmit = true, since the sim board's ports have no
	// [[port]] tables. Only its CAN port (can0) has a writer.
	SimPorts []string `toml:"sim_ports"`
}

// DefaultTransmit returns the [transmit] defaults.
func DefaultTransmit() Transmit {
	return Transmit{RatePlans: DefaultTransmitRatePlans, RateWindow: DefaultTransmitRateWindow,
		BusLoadCeiling: DefaultTransmitLoadCeil, PlanTTL: DefaultTransmitPlanTTL, ButtonWait: DefaultTransmitButtonWait}
}

// Window and TTL parse the durations; Validate has checked them.
func (t Transmit) Window() time.Duration { d, _ := time.ParseDuration(t.RateWindow); return d }

// TTL is the plan lifetime.
func (t Transmit) TTL() time.Duration { d, _ := time.ParseDuration(t.PlanTTL); return d }

// Wait is how long an execution waits for the confirm button.
func (t Transmit) Wait() time.Duration { d, _ := time.ParseDuration(t.ButtonWait); return d }

func (t Transmit) validate(board string) []error {
	var errs []error
	if t.RatePlans < 1 {
		errs = append(errs, fmt.Errorf("transmit.rate_plans %d: want at least 1", t.RatePlans))
	}
	for key, v := range map[string]string{"rate_window": t.RateWindow, "plan_ttl": t.PlanTTL} {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("transmit.%s %q: want a positive duration such as 1m", key, v))
		}
	}
	if t.BusLoadCeiling <= 0 || t.BusLoadCeiling > 1 {
		errs = append(errs, fmt.Errorf("transmit.bus_load_ceiling %v: want a fraction in (0, 1]", t.BusLoadCeiling))
	}
	if t.ArmFile != "" && board != "sim" {
		errs = append(errs, fmt.Errorf("transmit.arm_file is for the sim board; board %s reads its key switch", board))
	}
	if d, err := time.ParseDuration(t.ButtonWait); err != nil || d < transmit.MinButtonWait || d > transmit.MaxButtonWait {
		errs = append(errs, fmt.Errorf("transmit.button_wait %q: want a duration from %v to %v", t.ButtonWait, transmit.MinButtonWait, transmit.MaxButtonWait))
	}
	if t.ConfirmFile != "" && board != "sim" {
		errs = append(errs, fmt.Errorf("transmit.confirm_file is for the sim board; board %s reads its confirm button", board))
	}
	if len(t.SimPorts) > 0 && board != "sim" {
		errs = append(errs, fmt.Errorf("transmit.sim_ports is for the sim board; board %s enables a port with transmit = true in its [[port]] table", board))
	}
	return errs
}
