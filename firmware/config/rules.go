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
}

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
		out = append(out, rules.Rule{Name: r.Name, Kind: r.Kind, Port: r.Port, Code: r.Code, FMI: r.FMI, Op: r.Op, Value: r.Value,
			Window: window, For: hold, Severity: r.Severity, MinSamples: r.MinSamples, SealEvidence: r.SealEvidence})
	}
	if len(errs) == 0 {
		if err := rules.CheckAll(out); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}
