package mcp

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// timelineTools is the timeline bundle: one ordered answer over every
// port and store (what_happened) and the marks a person sets (mark).
var timelineTools = []toolDef{whatHappened, markTool}

// needTimeline is every store what_happened reads; the recorder and its
// gaps are read when it is on.
const needTimeline = needCAN | needJ1939 | needJ1587 | needUDS | needSIP | needMedia | needTransmit | needMarks

// textMark is who wrote a mark's label.
const textMark textSource = "the MCP callers who set marks (mark labels)"

// Timeline bounds.
const (
	// MaxTimelineRows bounds the events one answer collects: past it,
	// what was left out is counted by kind and said.
	MaxTimelineRows = 5000
	// DefaultTimelineWindow is ± around at when no window is given.
	DefaultTimelineWindow = time.Minute
	// MaxTimelineWindow bounds before + after: a day of events from
	// every bus is more than one question.
	MaxTimelineWindow = 24 * time.Hour
)

// Event kinds of what_happened rows.
const (
	evSIPFailure     = "sip_failure"
	evSIPFinding     = "sip_finding"
	evRTPLoss        = "rtp_loss"
	evRTPJitter      = "rtp_jitter"
	evCANErrorFrames = "can_error_frames"
	evBusOff         = "bus_off"
	evBusRestarted   = "bus_restarted"
	evPortState      = "port_state"
	evPortFailure    = "port_failure"
	evFramesLost     = "frames_lost"
	evDTCActive      = "dtc_active"
	evDTCPrevious    = "dtc_previously_active"
	evDTCCleared     = "dtc_cleared"
	evJ1587Fault     = "j1587_fault"
	evVoltage        = "voltage_limit"
	evSpeed          = "speed_limit"
	evUDSSession     = "uds_session"
	evRecorderGap    = "recorder_gap"
	evTransmit       = "transmit"
	evMark           = "mark"
	evRuleFiring     = "rule_firing"
	evRuleCleared    = "rule_cleared"
)

var timelineKinds = []string{evSIPFailure, evSIPFinding, evRTPLoss, evRTPJitter, evCANErrorFrames, evBusOff, evBusRestarted,
	evPortState, evPortFailure, evFramesLost, evDTCActive, evDTCPrevious, evDTCCleared, evJ1587Fault, evVoltage, evSpeed,
	evUDSSession, evRecorderGap, evTransmit, evMark, evRuleFiring, evRuleCleared}

type timelineKindArg string

func (timelineKindArg) argSchema() *jsonschema.Schema {
	return enumArg("one event kind (docs/mcp-tools.md, what_happened)", timelineKinds)
}

// atArg is a moment: RFC 3339, or now / -DURATION on the capture clock.
type atArg string

func (atArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "RFC 3339 time, or now, or -DURATION (-90s, -5m) before now; now is the newest frame any port holds (default now)"}
}

// windowArg is how far before and after at: ±2m, -5m, +30s or -1m+4m.
type windowArg string

func (windowArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: windowPattern.String(),
		Description: "around at: ±D (or +-D) both sides, -D before only, +D after only, -D+E; Go durations (90s, 2m, 1h); default ±1m, at most 24h in all"}
}

var windowPattern = regexp.MustCompile(`^(±|\+-)?([-+]?[0-9][0-9a-zµ.]*)(\+[0-9][0-9a-zµ.]*)?$`)

type whatHappenedIn struct {
	At     atArg             `json:"at,omitempty"`
	Window windowArg         `json:"window,omitempty"`
	Kinds  []timelineKindArg `json:"kinds,omitempty" jsonschema:"only these event kinds; default every kind"`
	PortSelector
	Paging
	Projection
}

// around parses window into the time before and after at.
func (w windowArg) around() (before, after time.Duration, err error) {
	bad := func(why string) error {
		return argErr("window", "write ±2m, -5m, +30s or -1m+4m", "%q: %s", string(w), why)
	}
	s := string(w)
	if s == "" {
		return DefaultTimelineWindow, DefaultTimelineWindow, nil
	}
	m := windowPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, bad("not a window")
	}
	first, err := time.ParseDuration(strings.TrimPrefix(m[2], "+"))
	if err != nil {
		return 0, 0, bad(err.Error())
	}
	switch {
	case m[1] != "": // ±D
		if m[3] != "" || strings.HasPrefix(m[2], "-") || strings.HasPrefix(m[2], "+") {
			return 0, 0, bad("± takes one duration")
		}
		before, after = first, first
	case strings.HasPrefix(m[2], "-"):
		before = -first
		if m[3] != "" {
			if after, err = time.ParseDuration(m[3][1:]); err != nil {
				return 0, 0, bad(err.Error())
			}
		}
	case strings.HasPrefix(m[2], "+") && m[3] == "":
		after = first
	default:
		return 0, 0, bad("say which side: ±, - or +")
	}
	switch {
	case before < 0 || after < 0:
		return 0, 0, bad("durations are positive; the sign says the side")
	case before+after == 0:
		return 0, 0, bad("the window is empty")
	case before+after > MaxTimelineWindow:
		return 0, 0, bad(fmt.Sprintf("over %v in all", MaxTimelineWindow))
	}
	return before, after, nil
}

// newest is the capture clock's now: the newest frame any port holds,
// else the box's clock.
func newest(c *call) time.Time {
	var t time.Time
	for _, p := range c.d.Ports.Snapshot() {
		if p.LastTime != nil && p.LastTime.After(t) {
			t = *p.LastTime
		}
	}
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}

// moment resolves at against the capture clock's now.
func (a atArg) moment(now time.Time) (time.Time, error) {
	s := string(a)
	switch {
	case s == "" || s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := time.ParseDuration(s[1:])
		if err != nil || d < 0 {
			return time.Time{}, argErr("at", "write -90s or -5m, or an RFC 3339 time", "%q is not -DURATION", s)
		}
		return now.Add(-d), nil
	}
	return timeArg(s).parse("at")
}

// span is the window when at is absolute, for the coverage block; a
// relative at is resolved in the run, and the block then covers every
// time the stores hold.
func (in whatHappenedIn) span() (span, error) {
	if in.At == "" || in.At == "now" || strings.HasPrefix(string(in.At), "-") {
		return span{}, nil
	}
	at, err := in.At.moment(time.Time{})
	if err != nil {
		return span{}, err
	}
	before, after, err := in.Window.around()
	if err != nil {
		return span{}, err
	}
	return span{at.Add(-before), at.Add(after)}, nil
}

var whatHappened = tool[whatHappenedIn, page[timelineRow]]{
	name:  "what_happened",
	reads: readsSIP | readsMedia | readsCAN | readsJ1939 | readsUDS | readsJ1708 | readsRecorder,
	desc: "One time-ordered list, around a time (at, window ±1m), of events from every port and store: SIP failures and security findings, RTP loss and jitter bursts, CAN error frames and bus-off, " +
		"port states and losses, J1939 DTCs, J1587 faults, voltage and speed limits, UDS sessions, recorder gaps, transmissions, marks, rule firings and clears. Each row names the tool and arguments for its detail, and its port's clock. Paged.",
	hints: readOnly(),
	ids:   []string{"time", "port", "kind", "n"},
	text:  []textSource{textSIP, textMark},
	run:   runWhatHappened,
}

func runWhatHappened(c *call, in whatHappenedIn) (page[timelineRow], error) {
	before, after, err := in.Window.around()
	if err != nil {
		return page[timelineRow]{}, err
	}
	at, err := in.At.moment(newest(c))
	if err != nil {
		return page[timelineRow]{}, err
	}
	all := c.d.Ports.Snapshot()
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	if _, err := choosePorts(in.PortSelector, "capture", names, func(n string) string { return n }); err != nil {
		return page[timelineRow]{}, err
	}
	tl := &timeline{c: c, sp: span{at.Add(-before), at.Add(after)}, port: string(in.PortSelector.Port),
		clocks: clocksOf(all), skipped: map[string]int{}}
	tl.shared = tl.sharedClock(all)
	if len(in.Kinds) > 0 {
		tl.kinds = map[string]bool{}
		for _, k := range in.Kinds {
			tl.kinds[string(k)] = true
		}
	}
	tl.collect(all)
	if n := len(tl.rows); n == MaxTimelineRows {
		var left []string
		for _, k := range slices.Sorted(maps.Keys(tl.skipped)) {
			left = append(left, fmt.Sprintf("%s %d", k, tl.skipped[k]))
		}
		c.warnf("the window holds more than %d events: %s were left out; narrow window or kinds", MaxTimelineRows, strings.Join(left, ", "))
	}
	tl.clockNotes(all)
	return pageSlice(c, in.Paging, tl.ordered(), func(r timelineRow) rowKey { return rowKey{uint64(r.Time.UnixNano()), uint64(r.N)} })
}
