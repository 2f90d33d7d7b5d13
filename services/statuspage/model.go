package statuspage

import (
	"time"

	"fieldtap/services/ports"
	"fieldtap/services/transmit"
)

// Status is the whole page, as /status.json returns it. A section the
// box cannot fill is null with a reason beside it, never zeros.
type Status struct {
	Generated time.Time    `json:"generated"`
	Box       Box          `json:"box"`
	Transmit  TransmitView `json:"transmit"`
	Ports     []PortView   `json:"ports"`
	BusLoad   []LoadSeries `json:"bus_load"`
	Faults    FaultsView   `json:"faults"`
	VoIP      *VoIPView    `json:"voip"`
	// VoIPReason says why VoIP is null.
	VoIPReason string        `json:"voip_reason,omitempty"`
	Recorder   *RecorderView `json:"recorder"`
	// RecorderReason says why Recorder is null.
	RecorderReason string     `json:"recorder_reason,omitempty"`
	Rules          *RulesView `json:"rules"`
	// RulesReason says why Rules is null.
	RulesReason string `json:"rules_reason,omitempty"`
}

// Box names the box.
type Box struct {
	Version string `json:"version"`
	Board   string `json:"board"`
	// UptimeS is whole seconds since the daemon started.
	UptimeS int64 `json:"uptime_s"`
}

// TransmitView is the arm and transmit state, first on the page.
type TransmitView struct {
	// KeySwitch is the transmit-arm input as the gatekeeper reads it.
	KeySwitch ports.Arm `json:"key_switch"`
	// ArmedLED is the armed LED as the daemon last drove it; null with
	// ArmedLEDReason when the board has none or nothing drives it.
	ArmedLED       *bool  `json:"armed_led"`
	ArmedLEDReason string `json:"armed_led_reason,omitempty"`
	// Available is false when the box runs without a transmitter; the
	// counts below are then zero and Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Armed is the transmitter's own read of the arm input.
	Armed                bool `json:"armed"`
	PlansPending         int  `json:"plans_pending"`
	ConfirmationsPending int  `json:"confirmations_pending"`
	// EnabledPorts have transmit = true; CanSendNow would pass the
	// configuration and arm gates right now.
	EnabledPorts []string `json:"enabled_ports"`
	CanSendNow   []string `json:"can_send_now"`
	// Sending says it in words, for the banner: "no port can send" or
	// "can send on can0, can1".
	Sending string `json:"sending"`
	// Recent is the newest transmitter history, newest last.
	Recent []transmit.Recent `json:"recent"`
}

// PortView is one capture port's counters.
type PortView struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
	Live   bool   `json:"live"`
	// State is what the port does now (capturing, silent, down, gone,
	// restarting, ended), since StateSince (null when unknown).
	State      string     `json:"state"`
	StateSince *time.Time `json:"state_since"`
	Frames     uint64     `json:"frames"`
	Bytes      uint64     `json:"bytes"`
	// FramesPerS is the frame counter's rise over the last few seconds
	// (rateWindow); null with FramesPerSReason until it has a basis.
	FramesPerS       *float64 `json:"frames_per_s"`
	FramesPerSReason string   `json:"frames_per_s_reason,omitempty"`
	// LastFrameAgeS is seconds since the last frame of a live port; null
	// with LastFrameAgeReason before any frame or for a file.
	LastFrameAgeS      *float64          `json:"last_frame_age_s"`
	LastFrameAgeReason string            `json:"last_frame_age_reason,omitempty"`
	Drops              map[string]uint64 `json:"drops"`
	// DropsTotal is every drop since start, DropsLastMinute those of the
	// last minute (a live port's; null with DropsLastMinuteReason for a
	// file, whose clock is the file's).
	DropsTotal            uint64            `json:"drops_total"`
	DropsLastMinute       *uint64           `json:"drops_last_minute"`
	DropsLastMinuteReason string            `json:"drops_last_minute_reason,omitempty"`
	Errors                map[string]uint64 `json:"errors"`
	// Restarts counts a live port's restarts after a failure and its CAN
	// controller's bus-off restarts; null with RestartsReason for a file.
	Restarts       *uint64 `json:"restarts"`
	RestartsReason string  `json:"restarts_reason,omitempty"`
	StoppedEarly   string  `json:"stopped_early,omitempty"`
	// StoreUse is the fuller of the store's frame and byte fill, 0..1.
	StoreUse     float64 `json:"store_use"`
	StoreEvicted uint64  `json:"store_evicted"`
}

// LoadSeries is one CAN port's load over the last hour, in bins.
type LoadSeries struct {
	Port string `json:"port"`
	// End is the end of the last bin: now for a live port, the last
	// measured second for a finished one.
	End     time.Time `json:"end"`
	BinS    int       `json:"bin_s"`
	Bins    []LoadBin `json:"bins"`
	PeakMax float64   `json:"peak_max"`
}

// LoadBin is one bin: mean and peak one-second load, 0..1 (more than 1
// only when clocks disagree). Null before the port's first frame.
type LoadBin struct {
	Start time.Time `json:"start"`
	Mean  *float64  `json:"mean"`
	Peak  *float64  `json:"peak"`
}

// FaultsView is every active fault the box has seen.
type FaultsView struct {
	J1939 []J1939Fault `json:"j1939"`
	J1587 []J1587Fault `json:"j1587"`
	// J1939Reason and J1587Reason say why a list is absent (no such port).
	J1939Reason string `json:"j1939_reason,omitempty"`
	J1587Reason string `json:"j1587_reason,omitempty"`
}

// J1939Fault is one active DTC of a DM1.
type J1939Fault struct {
	Port   string    `json:"port"`
	SA     int       `json:"sa"`
	SAName string    `json:"sa_name"`
	SPN    uint32    `json:"spn"`
	FMI    uint8     `json:"fmi"`
	OC     uint8     `json:"oc"`
	Lamps  []string  `json:"lamps"` // lamps on: mil, red_stop, amber_warning, protect
	Time   time.Time `json:"time"`
}

// J1587Fault is one active code of a PID 194 table.
type J1587Fault struct {
	MID      int       `json:"mid"`
	MIDName  string    `json:"mid_name"`
	Code     int       `json:"code"`
	IsSID    bool      `json:"is_sid"`
	CodeName string    `json:"code_name"`
	FMI      int       `json:"fmi"`
	Count    *int      `json:"occurrence_count"`
	Last     time.Time `json:"last_time"`
}

// VoIPView sums up the calls on the SPAN port.
type VoIPView struct {
	// Calls are INVITE dialogs; Active ones are answered and not ended.
	Calls    int `json:"calls"`
	Active   int `json:"active"`
	Attempts int `json:"attempts"`
	Answered int `json:"answered"`
	// ASR is answered/attempts, rounded; null with ASRReason when no
	// attempt has a final response.
	ASR       *float64 `json:"asr"`
	ASRReason string   `json:"asr_reason,omitempty"`
	// MOS is the histogram of streams with a grounded MOS.
	MOS MOSHistogram `json:"mos"`
	// OneWay lists the calls whose media flowed one way when their SDP
	// did not say so, at most maxOneWay; OneWayCount counts them all.
	OneWay      []string `json:"one_way_calls"`
	OneWayCount int      `json:"one_way_count"`
}

// MOSHistogram counts streams by MOS band (ITU-T G.107 user
// satisfaction bands); its population is beside it.
type MOSHistogram struct {
	Bands       []MOSBand `json:"bands"`
	Streams     int       `json:"streams"`      // streams counted in the bands
	NotGrounded int       `json:"not_grounded"` // streams whose codec has no published MOS basis
}

// MOSBand is one band: Min <= MOS < Max.
type MOSBand struct {
	Label   string  `json:"label"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Streams int     `json:"streams"`
}

// RecorderView is the on-disk recorder's state, from Recorder.
type RecorderView struct {
	State       string     `json:"state"`            // recording, ram_only, closed
	Reason      string     `json:"reason,omitempty"` // why ram_only
	Dir         string     `json:"dir"`
	UsedBytes   int64      `json:"used_bytes"`  // segments and indexes
	LimitBytes  int64      `json:"limit_bytes"` // the quota
	FreeBytes   *int64     `json:"free_bytes"`  // left on the file system; null where unknown
	Segments    int        `json:"segments"`
	Oldest      *time.Time `json:"oldest"`
	Newest      *time.Time `json:"newest"`
	WriteErrors uint64     `json:"write_errors"`
	GapsTotal   uint64     `json:"gaps_total"`
	Gaps        []Gap      `json:"gaps"` // the newest few, newest last
}

// Gap is a span the recorder could not keep, and why.
type Gap struct {
	Start  time.Time  `json:"start"`
	End    *time.Time `json:"end"` // null while open
	Reason string     `json:"reason"`
}

// RulesView is the box's own [[rule]] watch: every rule firing (at most
// rules.MaxRules are configured, so the list needs no bound of its own)
// and how many are in each other state.
type RulesView struct {
	// Firing is most severe first, then the longest firing first.
	Firing  []RuleFiring `json:"firing"`
	Pending int          `json:"pending"`
	OK      int          `json:"ok"`
	NoData  int          `json:"no_data"`
}

// RuleFiring is one rule firing.
type RuleFiring struct {
	Name     string    `json:"name"`
	Severity string    `json:"severity"`
	Kind     string    `json:"kind"`
	Port     string    `json:"port,omitempty"`
	Since    time.Time `json:"since"`
	Value    float64   `json:"value"`
}
