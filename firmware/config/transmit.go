package config

import (
	"fmt"
	"time"
)

// Transmit limit defaults (services/transmit explains each).
const (
	DefaultTransmitRatePlans  = 6
	DefaultTransmitRateWindow = "1m"
	DefaultTransmitLoadCeil   = 0.7
	DefaultTransmitPlanTTL    = "10m"
)

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
}

// DefaultTransmit returns the [transmit] defaults.
func DefaultTransmit() Transmit {
	return Transmit{RatePlans: DefaultTransmitRatePlans, RateWindow: DefaultTransmitRateWindow,
		BusLoadCeiling: DefaultTransmitLoadCeil, PlanTTL: DefaultTransmitPlanTTL}
}

// Window and TTL parse the durations; Validate has checked them.
func (t Transmit) Window() time.Duration { d, _ := time.ParseDuration(t.RateWindow); return d }

// TTL is the plan lifetime.
func (t Transmit) TTL() time.Duration { d, _ := time.ParseDuration(t.PlanTTL); return d }

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
	return errs
}
