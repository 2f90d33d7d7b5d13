package config

import (
	"errors"
	"fmt"
	"time"

	"fieldtap/services/rules"
)

// Rule is one [[rule]] table (docs/rules.md).
type Rule struct {
	Name     string  `toml:"name"`
	Kind     string  `toml:"kind"`
	Port     string  `toml:"port"`
	Code     int     `toml:"code"` // dm1_active: the SPN; j1587_fault: the PID
	FMI      *int    `toml:"fmi"`  // the fault kinds; absent for any
	Op       string  `toml:"op"`
	Value    float64 `toml:"value"`
	Window   string  `toml:"window"` // "" = DefaultRuleWindow
	For      string  `toml:"for"`    // "" = fire on the first evaluation that holds
	Severity string  `toml:"severity"`
	// MinSamples is the population guard: fewer samples in the window
	// leave the rule no_data.
	MinSamples   int  `toml:"min_samples"`
	SealEvidence bool `toml:"seal_evidence"`
	// The SIP and media kinds' selectors (docs/rules.md).
	Group      string `toml:"group"`      // sip_asr, sip_ner, sip_pdd: a group_dialogs dimension
	Key        string `toml:"key"`        // the group's value
	Percentile int    `toml:"percentile"` // sip_pdd: 50 or 95; absent = DefaultPDDPercentile
	Band       string `toml:"band"`       // mos_share: a G.107 band
	AoR        string `toml:"aor"`        // sip_reg_failures: text of the address of record
	Finding    string `toml:"finding"`    // sip_security: a finding kind
}

// DefaultPDDPercentile is a sip_pdd rule's percentile when it names
// none: the median.
const DefaultPDDPercentile = 50

// DefaultRuleWindow is a rule's window when it names none.
const DefaultRuleWindow = "1m"

// Rules turns the [[rule]] tables into the engine's rules, naming the
// first value that is wrong.
func (c Config) Rules() ([]rules.Rule, error) {
	out := make([]rules.Rule, 0, len(c.RuleList))
	var errs []error
	for i, r := range c.RuleList {
		at := fmt.Sprintf("rule %d", i+1)
		w := r.Window
		if w == "" {
			w = DefaultRuleWindow
		}
		window, err := time.ParseDuration(w)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: window %q: want a duration such as 1m", at, r.Window))
		}
		var hold time.Duration
		if r.For != "" {
			if hold, err = time.ParseDuration(r.For); err != nil {
				errs = append(errs, fmt.Errorf("%s: for %q: want a duration such as 30s", at, r.For))
			}
		}
		pct := r.Percentile
		if pct == 0 && r.Kind == rules.KindSIPPDD {
			pct = DefaultPDDPercentile
		}
		out = append(out, rules.Rule{Name: r.Name, Kind: r.Kind, Port: r.Port, Code: r.Code, FMI: r.FMI, Op: r.Op, Value: r.Value,
			Window: window, For: hold, Severity: r.Severity, MinSamples: r.MinSamples, SealEvidence: r.SealEvidence,
			Group: r.Group, Key: r.Key, Percentile: pct, Band: r.Band, AoR: r.AoR, Finding: r.Finding})
	}
	if len(errs) == 0 {
		if err := rules.CheckAll(out); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}
