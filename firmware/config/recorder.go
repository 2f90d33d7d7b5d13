package config

import (
	"errors"
	"fmt"
	"time"

	"fieldtap/services/recorder"
	"fieldtap/services/sip"
)

// Recorder defaults (docs/recorder.md).
const (
	DefaultRecorderDir = "/var/lib/fieldtap/recorder"
	DefaultEvidenceDir = "/var/lib/fieldtap/evidence"
	DefaultCaptureDir  = "/var/lib/fieldtap/captures"
	// DefaultEvidenceBytes caps all sealed bundles together; a bundle
	// past it is refused, never an older one deleted: evidence is the
	// operator's to remove.
	DefaultEvidenceBytes = 256 << 20
	// DefaultEvidenceWindow is the time kept before and after a trigger.
	DefaultEvidenceWindow = "30s"
	// Evidence windows: under a second shows nothing around a trigger;
	// past ten minutes one bundle outgrows what anyone will read.
	MinEvidenceWindow = time.Second
	MaxEvidenceWindow = 10 * time.Minute
)

// Trigger kinds: what seals an evidence bundle without being asked.
const (
	TriggerSIPFilter  = "sip_filter"  // a dialog matching a filter (docs/filter.md)
	TriggerCallFailed = "call_failed" // a call ending in a failure response
	TriggerDM1        = "dm1"         // a J1939 DM1 fault appearing
)

// TriggerKinds lists what recorder.trigger.kind accepts.
var TriggerKinds = []string{TriggerSIPFilter, TriggerCallFailed, TriggerDM1}

// Recorder configures the on-disk recorder, evidence and the capture
// directory open_capture reads.
type Recorder struct {
	// Enabled turns the recorder on. Off by default so a development
	// machine or a test does not fill /var/lib or refill yesterday's
	// traffic; the firmware image's fieldtapd.toml turns it on.
	Enabled      bool   `toml:"enabled"`
	Dir          string `toml:"dir"`
	SegmentBytes int64  `toml:"segment_bytes"`
	SegmentAge   string `toml:"segment_age"`
	QuotaBytes   int64  `toml:"quota_bytes"`
	// RTPHeadersOnly records RTP the media analyser knows (from SDP, or
	// by heuristic when media.heuristic_rtp is on) up to the end of its
	// RTP header: calls' timing and loss stay, their audio does not.
	RTPHeadersOnly bool      `toml:"rtp_headers_only"`
	EvidenceDir    string    `toml:"evidence_dir"`
	EvidenceBytes  int64     `toml:"evidence_bytes"`
	Triggers       []Trigger `toml:"trigger"`
}

// Trigger is one [[recorder.trigger]] table.
type Trigger struct {
	Kind   string `toml:"kind"`
	Filter string `toml:"filter"` // sip_filter only
	Before string `toml:"before"` // kept before the trigger; "" = 30s
	After  string `toml:"after"`  // kept after it; "" = 30s
}

// DefaultRecorder is the [recorder] section's defaults.
func DefaultRecorder() Recorder {
	return Recorder{
		Dir: DefaultRecorderDir, SegmentBytes: recorder.DefaultSegmentBytes, SegmentAge: recorder.DefaultSegmentAge.String(),
		QuotaBytes: recorder.DefaultQuotaBytes, EvidenceDir: DefaultEvidenceDir, EvidenceBytes: DefaultEvidenceBytes,
	}
}

// Options turns the section into recorder.Options (app names the build).
func (r Recorder) Options(app string) (recorder.Options, error) {
	age, err := time.ParseDuration(r.SegmentAge)
	if err != nil {
		return recorder.Options{}, fmt.Errorf("recorder.segment_age %q: want a duration such as 10m", r.SegmentAge)
	}
	return recorder.Options{Dir: r.Dir, SegmentBytes: r.SegmentBytes, SegmentAge: age, QuotaBytes: r.QuotaBytes, App: app}, nil
}

// Window parses a trigger's before or after.
func (t Trigger) Window(s string) (time.Duration, error) {
	if s == "" {
		s = DefaultEvidenceWindow
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinEvidenceWindow || d > MaxEvidenceWindow {
		return 0, fmt.Errorf("%q: want a duration from %v to %v", s, MinEvidenceWindow, MaxEvidenceWindow)
	}
	return d, nil
}

func (r Recorder) validate() []error {
	var errs []error
	if r.Enabled {
		if r.Dir == "" {
			errs = append(errs, errors.New("recorder.dir: empty while recorder.enabled is true"))
		}
		o, err := r.Options("")
		if err != nil {
			errs = append(errs, err)
		} else if o.Dir != "" {
			if err := recorder.Check(o); err != nil {
				errs = append(errs, fmt.Errorf("recorder.%w", err))
			}
		}
	}
	if r.EvidenceBytes < 0 {
		errs = append(errs, fmt.Errorf("recorder.evidence_bytes %d: want a size in bytes", r.EvidenceBytes))
	}
	for i, t := range r.Triggers {
		at := fmt.Sprintf("recorder.trigger %d", i+1)
		switch t.Kind {
		case TriggerSIPFilter:
			if _, err := sip.Compile(t.Filter); t.Filter == "" || err != nil {
				errs = append(errs, fmt.Errorf("%s: kind sip_filter needs a filter (docs/filter.md): %q: %v", at, t.Filter, err))
			}
		case TriggerCallFailed, TriggerDM1:
			if t.Filter != "" {
				errs = append(errs, fmt.Errorf("%s: kind %s takes no filter", at, t.Kind))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: kind %q: want one of %v", at, t.Kind, TriggerKinds))
		}
		for _, w := range []struct{ key, v string }{{"before", t.Before}, {"after", t.After}} {
			if _, err := t.Window(w.v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s %w", at, w.key, err))
			}
		}
		if !r.Enabled {
			errs = append(errs, fmt.Errorf("%s: triggers seal recorded segments: set recorder.enabled", at))
		}
	}
	return errs
}
