package config

import (
	"fmt"
	"time"

	"fieldtap/services/sipsecurity"
)

// SIPSecurity sets the thresholds of sip_security_findings
// (docs/configuration.md); unset keys take sipsecurity.Defaults.
type SIPSecurity struct {
	Window         string   `toml:"window"` // a Go duration, 1s to 1h
	Registers      int      `toml:"registers"`
	AuthChallenges int      `toml:"auth_challenges"`
	Invites        int      `toml:"invites"`
	OptionsTargets int      `toml:"options_targets"`
	ScannerAgents  []string `toml:"scanner_agents"`
}

// DefaultSIPSecurity is sipsecurity.Defaults as configuration.
func DefaultSIPSecurity() SIPSecurity {
	d := sipsecurity.Defaults
	return SIPSecurity{Window: d.Window.String(), Registers: d.Registers, AuthChallenges: d.AuthChallenges,
		Invites: d.Invites, OptionsTargets: d.OptionsTargets, ScannerAgents: d.ScannerAgents}
}

// Thresholds parses and checks the section.
func (s SIPSecurity) Thresholds() (sipsecurity.Thresholds, error) {
	w, err := time.ParseDuration(s.Window)
	if err != nil {
		return sipsecurity.Thresholds{}, fmt.Errorf("sip_security.window %q: want a duration such as 1m", s.Window)
	}
	t := sipsecurity.Thresholds{Window: w, Registers: s.Registers, AuthChallenges: s.AuthChallenges, Invites: s.Invites,
		OptionsTargets: s.OptionsTargets, ScannerAgents: s.ScannerAgents}
	if err := t.Check(); err != nil {
		return sipsecurity.Thresholds{}, fmt.Errorf("sip_security: %w", err)
	}
	return t, nil
}

func (s SIPSecurity) validate() []error {
	if _, err := s.Thresholds(); err != nil {
		return []error{err}
	}
	return nil
}
