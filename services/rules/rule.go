package rules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/sipsecurity"
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

	// The SIP and media kinds (box_sip.go).
	KindSIPASR      = "sip_asr"          // answered / call attempts, of the dialogs whose INVITE began in the window
	KindSIPNER      = "sip_ner"          // (answered + user-side endings) / call attempts, same dialogs
	KindSIPPDD      = "sip_pdd"          // post-dial delay's percentile in seconds, same dialogs
	KindMOSShare    = "mos_share"        // share of scored RTP streams seen in the window in a MOS band or a worse one
	KindRegFailures = "sip_reg_failures" // failed REGISTER attempts within the window
	KindSIPSecurity = "sip_security"     // security findings active within the window
)

// Kinds lists the condition kinds a rule may name.
var Kinds = []string{KindPortSilent, KindPortDrops, KindBusLoad, KindDiskFree, KindRecGaps, KindDM1, KindJ1587,
	KindSIPASR, KindSIPNER, KindSIPPDD, KindMOSShare, KindRegFailures, KindSIPSecurity}

// Percentiles a sip_pdd rule may read: the ones group_dialogs shows.
var Percentiles = []int{50, 95}

// FindingKinds are the finding kinds a sip_security rule may name.
var FindingKinds = []string{sipsecurity.KindScanner, sipsecurity.KindRegisterFlood, sipsecurity.KindAuthStorm, sipsecurity.KindInviteFlood, sipsecurity.KindOptionsSweep}

// Bands lists the MOS bands a mos_share rule may name: G.107's user
// satisfaction categories (rtp.SatisfactionBands), best first.
func Bands() []string {
	out := make([]string, len(rtp.SatisfactionBands))
	for i, b := range rtp.SatisfactionBands {
		out[i] = b.Label
	}
	return out
}

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

	// Group and Key select the dialogs of the call kinds (sip_asr,
	// sip_ner, sip_pdd): Group is a dimension of group_dialogs
	// (sip.Dimensions), Key the group's value; both empty for every
	// dialog.
	Group, Key string
	Percentile int    // sip_pdd: 50 (the median) or 95
	Band       string // mos_share: a label of rtp.SatisfactionBands
	AoR        string // sip_reg_failures: text the address of record contains (case-insensitive); "" for all
	Finding    string // sip_security: one of FindingKinds; "" for every kind
}

// needsPort says whether kind reads one port.
func needsPort(kind string) bool {
	return kind == KindPortSilent || kind == KindPortDrops || kind == KindBusLoad
}

// faultKind says whether kind counts active faults.
func faultKind(kind string) bool {
	return kind == KindDM1 || kind == KindJ1587
}

// callKind says whether kind measures call attempts (sip.CallMetrics).
func callKind(kind string) bool {
	return kind == KindSIPASR || kind == KindSIPNER || kind == KindSIPPDD
}

// ratioKind says whether kind's value is a ratio from 0 to 1.
func ratioKind(kind string) bool {
	return kind == KindSIPASR || kind == KindSIPNER || kind == KindMOSShare
}

// counter says whether kind's figure is a running total the engine turns
// into its increase over the window.
func counter(kind string) bool {
	return kind == KindPortDrops || kind == KindRecGaps || kind == KindRegFailures
}

// restarts says whether a counter kind's total going down is a restart
// (a port reopened), whose new total is all increase. The registration
// table lives as long as the engine: its total goes down only when rows
// leave it at their bound, and their failures are no new ones.
func restarts(kind string) bool {
	return kind != KindRegFailures
}

// windowed says whether kind's reader measures the window itself, over
// records the stores keep with their capture times (dialogs, streams,
// findings): its reading carries the population it stands on, and the
// population guard counts those records, not evaluations.
func windowed(kind string) bool {
	return callKind(kind) || kind == KindMOSShare || kind == KindSIPSecurity
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
	errs = append(errs, r.checkSIP()...)
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

// checkSIP checks the keys of the SIP and media kinds, and that no
// other kind carries them.
func (r Rule) checkSIP() []error {
	var errs []error
	unused := func(key string, set bool) {
		if set {
			errs = append(errs, fmt.Errorf("kind %s takes no %s", r.Kind, key))
		}
	}
	if callKind(r.Kind) {
		switch {
		case r.Group != "" && !slices.Contains(sip.Dimensions, r.Group):
			errs = append(errs, fmt.Errorf("group %q: want one of %v", r.Group, sip.Dimensions))
		case r.Group != "" && r.Key == "":
			errs = append(errs, fmt.Errorf("group %s needs a key: the group's value, as group_dialogs lists it", r.Group))
		case r.Group == "" && r.Key != "":
			errs = append(errs, fmt.Errorf("key %q needs a group: one of %v", r.Key, sip.Dimensions))
		}
	} else {
		unused("group", r.Group != "")
		unused("key", r.Key != "")
	}
	if r.Kind == KindSIPPDD {
		if !slices.Contains(Percentiles, r.Percentile) {
			errs = append(errs, fmt.Errorf("percentile %d: want one of %v", r.Percentile, Percentiles))
		}
	} else {
		unused("percentile", r.Percentile != 0)
	}
	if r.Kind == KindMOSShare {
		if !slices.Contains(Bands(), r.Band) {
			errs = append(errs, fmt.Errorf("band %q: want one of %q", r.Band, Bands()))
		}
	} else {
		unused("band", r.Band != "")
	}
	if r.Kind != KindRegFailures {
		unused("aor", r.AoR != "")
	}
	if r.Kind == KindSIPSecurity {
		if r.Finding != "" && !slices.Contains(FindingKinds, r.Finding) {
			errs = append(errs, fmt.Errorf("finding %q: want one of %v", r.Finding, FindingKinds))
		}
	} else {
		unused("finding", r.Finding != "")
	}
	if ratioKind(r.Kind) && (r.Value < 0 || r.Value > 1) {
		errs = append(errs, fmt.Errorf("value %v: kind %s is a ratio, want 0 to 1", r.Value, r.Kind))
	}
	return errs
}

// population names what a windowed kind's population counts.
func population(kind string) string {
	switch kind {
	case KindSIPPDD:
		return "call attempts with a ring time"
	case KindMOSShare:
		return "scored RTP streams"
	case KindSIPSecurity:
		return "SIP dialogs"
	}
	return "call attempts with a final response"
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
