package rules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Condition kinds this package reads (box.go).
const (
	KindPortSilent = "port_silent" // a capture port silent, down or gone: value 1, else 0
	KindPortDrops  = "port_drops"  // frames a port dropped within the window
	KindBusLoad    = "bus_load"    // a CAN port's load over its last complete second (0..1)
	KindDiskFree   = "disk_free"   // bytes free on the recorder's file system
	KindRecGaps    = "recorder_gaps"
	KindDM1        = "dm1_active"  // J1939 sources whose latest DM1 lists the SPN (and FMI) active
	KindJ1587      = "j1587_fault" // J1708 MIDs whose latest fault table lists the PID (and FMI) active
)

// Kinds lists the condition kinds a rule may name.
var Kinds = []string{KindPortSilent, KindPortDrops, KindBusLoad, KindDiskFree, KindRecGaps, KindDM1, KindJ1587}

// Code bounds: a J1939 SPN has 19 bits, a J1587 PID is 0 to 511 (page 2
// from 256), an FMI 5 bits.
const (
	MaxSPN = 1<<19 - 1
	MaxPID = 511
	MaxFMI = 31
)

// Severities a rule may carry.
var Severities = []string{"info", "warning", "critical"}

// Comparisons: a condition holds when the value is above or below the
// threshold.
const (
	Above = "above"
	Below = "below"
)

// Bounds that keep a configuration readable and the engine's memory
// fixed.
const (
	MaxRules  = 64
	MinWindow = time.Second
	MaxWindow = time.Hour
	MaxFor    = 24 * time.Hour
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Rule is one configured condition.
type Rule struct {
	Name     string
	Kind     string
	Port     string  // port_silent, port_drops, bus_load: the port's name; the fault kinds: "" for every port
	Code     int     // dm1_active: the SPN; j1587_fault: the PID
	FMI      *int    // the fault kinds: the FMI; nil for any
	Op       string  // Above or Below
	Value    float64 // the threshold
	Window   time.Duration
	For      time.Duration // how long the condition must hold before firing
	Severity string
	// MinSamples is the population guard: a window that holds fewer
	// samples (evaluations with figures) is no_data, not ok.
	MinSamples   int
	SealEvidence bool
}

// needsPort says whether kind reads one port.
func needsPort(kind string) bool {
	return kind == KindPortSilent || kind == KindPortDrops || kind == KindBusLoad
}

// faultKind says whether kind counts active faults.
func faultKind(kind string) bool {
	return kind == KindDM1 || kind == KindJ1587
}

// counter says whether kind's figure is a running total the engine turns
// into its increase over the window.
func counter(kind string) bool {
	return kind == KindPortDrops || kind == KindRecGaps
}

// Check names what is wrong with r.
func (r Rule) Check() error {
	var errs []error
	if !nameRE.MatchString(r.Name) {
		errs = append(errs, fmt.Errorf("name %q: want lower-case letters, digits, _ or -, at most 63", r.Name))
	}
	if !slices.Contains(Kinds, r.Kind) {
		errs = append(errs, fmt.Errorf("kind %q: want one of %v", r.Kind, Kinds))
	}
	if needsPort(r.Kind) && r.Port == "" {
		errs = append(errs, fmt.Errorf("kind %s needs a port", r.Kind))
	}
	if !needsPort(r.Kind) && r.Kind != KindDM1 && r.Port != "" {
		errs = append(errs, fmt.Errorf("kind %s takes no port", r.Kind))
	}
	switch {
	case r.Kind == KindDM1 && (r.Code < 0 || r.Code > MaxSPN):
		errs = append(errs, fmt.Errorf("code %d: want an SPN from 0 to %d", r.Code, MaxSPN))
	case r.Kind == KindJ1587 && (r.Code < 0 || r.Code > MaxPID):
		errs = append(errs, fmt.Errorf("code %d: want a PID from 0 to %d", r.Code, MaxPID))
	case !faultKind(r.Kind) && (r.Code != 0 || r.FMI != nil):
		errs = append(errs, fmt.Errorf("kind %s takes no code or fmi", r.Kind))
	}
	if r.FMI != nil && (*r.FMI < 0 || *r.FMI > MaxFMI) {
		errs = append(errs, fmt.Errorf("fmi %d: want 0 to %d", *r.FMI, MaxFMI))
	}
	if r.Op != Above && r.Op != Below {
		errs = append(errs, fmt.Errorf("op %q: want %s or %s", r.Op, Above, Below))
	}
	if r.Window < MinWindow || r.Window > MaxWindow {
		errs = append(errs, fmt.Errorf("window %v: want %v to %v", r.Window, MinWindow, MaxWindow))
	}
	if r.For < 0 || r.For > MaxFor {
		errs = append(errs, fmt.Errorf("for %v: want 0 to %v", r.For, MaxFor))
	}
	if !slices.Contains(Severities, r.Severity) {
		errs = append(errs, fmt.Errorf("severity %q: want one of %v", r.Severity, Severities))
	}
	if r.MinSamples < 0 {
		errs = append(errs, fmt.Errorf("min_samples %d: want 0 or more", r.MinSamples))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rule %q: %w", r.Name, err)
	}
	return nil
}

// CheckAll checks every rule, their count and that names are unique.
func CheckAll(rs []Rule) error {
	var errs []error
	if len(rs) > MaxRules {
		errs = append(errs, fmt.Errorf("%d rules: at most %d", len(rs), MaxRules))
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if err := r.Check(); err != nil {
			errs = append(errs, err)
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("rule %q: name used twice", r.Name))
		}
		seen[r.Name] = true
	}
	return errors.Join(errs...)
}
