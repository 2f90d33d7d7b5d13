package mcp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/canbus"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/rules"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// timelineRow is one event of what_happened.
type timelineRow struct {
	Time time.Time `json:"time"`
	// N tells apart events at the same nanosecond, in the answer's order.
	N       int    `json:"n" jsonschema:"0 unless another event shares the time"`
	Port    string `json:"port" jsonschema:"the port; empty for the SPAN ports' shared SIP and RTP stores and for the box (recorder, marks without ports)"`
	Bus     string `json:"bus" jsonschema:"sip, rtp, can, j1939, j1708, uds, ethernet or box"`
	Kind    string `json:"kind"`
	Clock   string `json:"clock" jsonschema:"live: the box's clock when the frame arrived; file: the capture file's own timestamps; box: the box's clock"`
	Summary string `json:"summary" jsonschema:"the box's words"`
	// Text is what a remote party or a caller wrote (a reason phrase, a
	// mark's label), fenced.
	Text   untrusted.Text `json:"text,omitempty" jsonschema:"sender text: a SIP reason phrase, a mark's label"`
	Detail detailRef      `json:"detail" jsonschema:"the tool and arguments that give this event's detail"`
}

// detailRef is a call to make for the rest of an event.
type detailRef struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// Limits what_happened reports crossings of (docs/mcp-tools.md): a 12 V
// system dips below 11.5 V when cranking or failing, a 24 V one sits
// above it; over 32 V is an overvoltage on either. Speeds: a wheel-based
// speed over 120 km/h, an engine over 3000 rpm.
var spnLimits = map[uint32]struct {
	kind   string
	lo, hi float64
}{
	168: {evVoltage, 11.5, 32}, // battery potential / power input 1
	158: {evVoltage, 11.5, 32}, // keyswitch battery potential
	84:  {evSpeed, -1, 120},    // wheel-based vehicle speed, km/h
	190: {evSpeed, -1, 3000},   // engine speed, rpm
}

// Media bursts: an interval losing 5 % or more of its packets, or with a
// jitter of 30 ms or more (ITU-T G.114's planning figures make either
// audible).
const (
	lossBurstPct  = 5.0
	jitterBurstMs = 30.0
	// errorBurstGap joins error frames of one port less than this apart
	// into one row.
	errorBurstGap = time.Second
)

// canErrClasses name the class bits of an error frame's id
// (linux/can/error.h).
var canErrClasses = []struct {
	bit  uint32
	name string
}{{0x1, "tx_timeout"}, {0x2, "lost_arbitration"}, {0x4, "controller"}, {0x8, "protocol"}, {0x10, "transceiver"},
	{0x20, "no_ack"}, {0x40, "bus_off"}, {0x80, "bus_error"}, {0x100, "restarted"}}

// timeline collects one answer's events within sp, bounded.
type timeline struct {
	c       *call
	sp      span
	kinds   map[string]bool // nil: every kind
	port    string          // "": every port
	clocks  map[string]string
	shared  string // the shared SIP and RTP stores' clock (clockOf "")
	rows    []timelineRow
	skipped map[string]int // by kind, past MaxTimelineRows
}

// add keeps r when it is in the window, of a kind and port asked for,
// and under the bound; over it, it is counted.
func (tl *timeline) add(r timelineRow) {
	if !tl.takes(r.Time, r.Kind, r.Port) {
		return
	}
	if len(tl.rows) == MaxTimelineRows {
		tl.skipped[r.Kind]++
		return
	}
	r.Time = r.Time.UTC()
	if r.Clock == "" {
		r.Clock = tl.clockOf(r.Port)
	}
	tl.rows = append(tl.rows, r)
}

// takes is whether add would look at a row of this time, kind and
// port: a source of many events (a dialog each) asks it before building
// the row's texts, most of which would be thrown away.
func (tl *timeline) takes(t time.Time, kind, port string) bool {
	return tl.sp.holds(t) && (tl.kinds == nil || tl.kinds[kind]) && (tl.port == "" || port == tl.port)
}

func (tl *timeline) want(kinds ...string) bool {
	if tl.kinds == nil {
		return true
	}
	return slices.ContainsFunc(kinds, func(k string) bool { return tl.kinds[k] })
}

func (tl *timeline) collect(all []ports.Status) {
	tl.portEvents(all)
	if tl.want(evSIPFailure) {
		tl.sipFailures()
	}
	if tl.want(evSIPFinding) {
		tl.sipFindings()
	}
	if tl.want(evRTPLoss, evRTPJitter) {
		tl.mediaBursts()
	}
	if tl.want(evCANErrorFrames, evBusOff, evBusRestarted) {
		tl.canErrors()
	}
	if tl.want(evDTCActive, evDTCPrevious, evDTCCleared) {
		tl.dtcs()
	}
	if tl.want(evVoltage, evSpeed) {
		tl.limits()
	}
	if tl.want(evJ1587Fault) {
		tl.j1587Faults()
	}
	if tl.want(evUDSSession) {
		tl.udsSessions()
	}
	if tl.want(evRecorderGap) {
		tl.recorderGaps()
	}
	if tl.want(evTransmit) {
		tl.transmissions()
	}
	if tl.want(evMark) {
		tl.marks(all)
	}
	if tl.want(evRuleFiring, evRuleCleared) {
		tl.ruleChanges(all)
	}
}

// ordered sorts the rows by time, then bus, port, kind and summary, and
// numbers the ones sharing a time.
func (tl *timeline) ordered() []timelineRow {
	slices.SortStableFunc(tl.rows, func(a, b timelineRow) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Bus, b.Bus), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Summary, b.Summary))
	})
	for i := 1; i < len(tl.rows); i++ {
		if tl.rows[i].Time.Equal(tl.rows[i-1].Time) {
			tl.rows[i].N = tl.rows[i-1].N + 1
		}
	}
	return tl.rows
}

// clocksOf names each port's clock: a file port's times are the file's.
func clocksOf(all []ports.Status) map[string]string {
	out := map[string]string{}
	for _, p := range all {
		out[p.Name] = "file"
		if p.Live {
			out[p.Name] = "live"
		}
	}
	return out
}

// clockOf is a port's clock; the shared SIP and RTP stores ("") take the
// SPAN ports' one when they agree (sharedClock).
func (tl *timeline) clockOf(port string) string {
	if port == "" {
		return tl.shared
	}
	if k, ok := tl.clocks[port]; ok {
		return k
	}
	return "box"
}

// sharedClock is the clock of the shared SIP and RTP stores, from the
// ports the answer was asked over: worked out once, not at every row of
// theirs (a site's failures are thousands).
func (tl *timeline) sharedClock(all []ports.Status) string {
	span := ""
	for _, p := range all {
		if p.Kind != portKindEthernet {
			continue
		}
		if span != "" && span != tl.clocks[p.Name] {
			return "mixed"
		}
		span = tl.clocks[p.Name]
	}
	return cmp.Or(span, "box")
}

// clockNotes warns about clocks an agent should not line up blindly.
func (tl *timeline) clockNotes(all []ports.Status) {
	var files, live []string
	for _, p := range all {
		if p.Live {
			live = append(live, p.Name)
		} else {
			files = append(files, p.Name)
		}
	}
	if len(files) > 0 {
		tl.c.warnf("ports %s: times are the capture files' own timestamps, not the box's clock; no offset to the box's clock is known", strings.Join(files, ", "))
	}
	if len(files) > 0 && len(live) > 0 {
		tl.c.warnf("file and live ports (%s) are on different clocks: events of one are not aligned with the other's", strings.Join(live, ", "))
	}
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// around is the window of a detail call: a minute around t.
func around(t time.Time) (string, string) {
	return t.Add(-time.Minute).UTC().Format(time.RFC3339Nano), t.Add(time.Minute).UTC().Format(time.RFC3339Nano)
}

func (tl *timeline) portEvents(all []ports.Status) {
	for _, p := range all {
		bus := p.Kind
		if p.StateSince != nil && p.State != ports.StateCapturing {
			tl.add(timelineRow{Time: *p.StateSince, Port: p.Name, Bus: bus, Kind: evPortState,
				Summary: fmt.Sprintf("port %s since this time (restarts %d)", p.State, p.Restarts), Detail: detailRef{toolCaptureStatus, args()}})
		}
		if p.LastErrorTime != nil {
			tl.add(timelineRow{Time: *p.LastErrorTime, Port: p.Name, Bus: bus, Kind: evPortFailure, Clock: "box",
				Summary: fmt.Sprintf("port failed: %s (restarts %d)", p.LastError, p.Restarts), Detail: detailRef{toolCaptureStatus, args()}})
		}
		for _, l := range p.Losses {
			tl.add(timelineRow{Time: l.At, Port: p.Name, Bus: bus, Kind: evFramesLost,
				Summary: fmt.Sprintf("%d frames lost (%s) in this second", l.N, l.Cause), Detail: detailRef{toolCaptureStatus, args()}})
		}
	}
}

func (tl *timeline) sipFailures() {
	sn := tl.c.d.SIP.Snapshot()
	sn.EachFailure(tl.sp.since, tl.sp.until, func(dl *sip.Dialog) {
		if !tl.takes(dl.FinalAt, evSIPFailure, "") {
			return
		}
		method := dl.FirstMethod
		if dl.HasInvite {
			method = "INVITE"
		}
		tl.add(timelineRow{Time: dl.FinalAt, Bus: "sip", Kind: evSIPFailure, Summary: fmt.Sprintf("%s answered %d", method, dl.FinalCode),
			Text: untrusted.Text(dl.FinalReason), Detail: detailRef{"triage_call", args("call_id", dl.CallID)}})
	})
}

func (tl *timeline) sipFindings() {
	e, _ := filterArg("").compile() // the empty filter matches every dialog
	r, _ := securityReport(tl.c, e)
	for _, f := range r.Findings {
		tl.add(timelineRow{Time: f.First, Bus: "sip", Kind: evSIPFinding,
			Summary: fmt.Sprintf("%s from %s begins: %d events, peak %d in %v (threshold %d)", f.Kind, f.Source, f.Total, f.Peak, f.Window, f.Threshold),
			Detail:  detailRef{"sip_security_findings", args()}})
	}
}

func (tl *timeline) mediaBursts() {
	for _, s := range tl.c.d.Media.Streams(true) {
		for _, iv := range s.Intervals {
			tl.mediaInterval(s, iv)
		}
	}
}

func (tl *timeline) mediaInterval(s rtp.StreamView, iv rtp.IntervalView) {
	loss := iv.Expected > 0 && iv.LostPct >= lossBurstPct && tl.takes(iv.Start, evRTPLoss, "")
	jitter := iv.MaxJitter >= jitterBurstMs && tl.takes(iv.Start, evRTPJitter, "")
	if !loss && !jitter {
		return
	}
	detail := detailRef{"rtp_stats", args("stream_id", s.ID)}
	if loss {
		tl.add(timelineRow{Time: iv.Start, Bus: "rtp", Kind: evRTPLoss,
			Summary: fmt.Sprintf("stream %s lost %d of %d packets (%.1f %%) in the interval", s.ID, iv.Lost, iv.Expected, iv.LostPct), Detail: detail})
	}
	if jitter {
		tl.add(timelineRow{Time: iv.Start, Bus: "rtp", Kind: evRTPJitter,
			Summary: fmt.Sprintf("stream %s jitter up to %.1f ms in the interval", s.ID, iv.MaxJitter), Detail: detail})
	}
}

// canErrors reads each CAN port's error frames: bus-off and restarts one
// row each, the other error frames joined into bursts.
func (tl *timeline) canErrors() {
	for _, p := range tl.c.d.CAN.Ports() {
		name := p.Name()
		var start, last time.Time
		n := 0
		var classes uint32
		flush := func() {
			if n == 0 {
				return
			}
			since, until := start.UTC().Format(time.RFC3339Nano), last.Add(time.Nanosecond).UTC().Format(time.RFC3339Nano)
			tl.add(timelineRow{Time: start, Port: name, Bus: "can", Kind: evCANErrorFrames,
				Summary: fmt.Sprintf("%d error frames over %v (%s)", n, last.Sub(start), errClassNames(classes)),
				Detail:  detailRef{"can_frames", args("port", name, "since", since, "until", until)}})
			n, classes = 0, 0
		}
		p.Frames().Range(0, func(_ uint64, r canbus.Record) bool {
			if r.ID&wire.CANERR == 0 {
				return true
			}
			class := r.ID & wire.CANErrMask
			since, until := around(r.Time)
			switch {
			case class&0x40 != 0:
				tl.add(timelineRow{Time: r.Time, Port: name, Bus: "can", Kind: evBusOff, Summary: "controller bus-off (" + errClassNames(class) + ")",
					Detail: detailRef{"can_frames", args("port", name, "since", since, "until", until)}})
			case class&0x100 != 0:
				tl.add(timelineRow{Time: r.Time, Port: name, Bus: "can", Kind: evBusRestarted, Summary: "controller restarted after bus-off",
					Detail: detailRef{"can_frames", args("port", name, "since", since, "until", until)}})
			default:
				if n > 0 && r.Time.Sub(last) >= errorBurstGap {
					flush()
				}
				if n == 0 {
					start = r.Time
				}
				n, last, classes = n+1, r.Time, classes|class
			}
			return true
		})
		flush()
	}
}

func errClassNames(class uint32) string {
	var out []string
	for _, c := range canErrClasses {
		if class&c.bit != 0 {
			out = append(out, c.name)
		}
	}
	if len(out) == 0 {
		return "no class bits"
	}
	return strings.Join(out, ", ")
}

func (tl *timeline) dtcs() {
	for _, f := range tl.c.d.J1939.FaultCodes() {
		what := fmt.Sprintf("%s from SA %d (%s): SPN %d FMI %d", f.Kind, f.SA, f.ECU, f.SPN, f.FMI)
		detail := detailRef{"j1939_faults", args("port", f.Port)}
		kind := evDTCActive
		if f.Kind == "DM2" {
			kind = evDTCPrevious
		}
		tl.add(timelineRow{Time: f.First, Port: f.Port, Bus: "j1939", Kind: kind, Summary: what + " first listed", Detail: detail})
		if !f.Listed {
			tl.add(timelineRow{Time: f.Last, Port: f.Port, Bus: "j1939", Kind: evDTCCleared, Summary: what + " last listed; the source's newer " + f.Kind + " no longer lists it", Detail: detail})
		}
	}
}

// limits reports each source's voltage and speed SPNs crossing
// spnLimits, both ways, from the sample ring (oldest first).
func (tl *timeline) limits() {
	type key struct {
		port uint8
		sa   uint8
		spn  uint32
	}
	names := tl.c.d.J1939.Ports()
	out := map[key]bool{}
	tl.c.d.J1939.Samples().Range(0, func(_ uint64, s j1939.Sample) bool {
		lim, ok := spnLimits[s.SPN]
		if !ok || s.Decoded().Status != j1939.StatusOK {
			return true
		}
		port := s.Port(names)
		k := key{sa: s.SA, spn: s.SPN}
		if i := slices.Index(names, port); i >= 0 {
			k.port = uint8(i)
		}
		was, now := out[k], s.Value < lim.lo || s.Value > lim.hi
		if was == now {
			return true
		}
		out[k] = now
		unit := s.Decoded().Unit
		what := fmt.Sprintf("SPN %d from SA %d at %g %s: back within %g..%g", s.SPN, s.SA, s.Value, unit, lim.lo, lim.hi)
		if now {
			what = fmt.Sprintf("SPN %d from SA %d at %g %s: outside %g..%g", s.SPN, s.SA, s.Value, unit, lim.lo, lim.hi)
		}
		tl.add(timelineRow{Time: s.Time(), Port: port, Bus: "j1939", Kind: lim.kind, Summary: what,
			Detail: detailRef{"j1939_spn", args("spn", s.SPN, "sa", s.SA, "port", port)}})
		return true
	})
}

func (tl *timeline) j1587Faults() {
	for _, p := range tl.c.d.Ports.Snapshot() {
		if p.Kind != portKindJ1708 {
			continue
		}
		st := tl.c.d.J1587.Lookup(p.Name)
		if st == nil {
			continue
		}
		for _, f := range st.Faults() {
			code := "PID"
			if f.IsSID {
				code = "SID"
			}
			state := "previously active"
			if f.Active {
				state = "active"
			}
			tl.add(timelineRow{Time: f.First, Port: p.Name, Bus: "j1708", Kind: evJ1587Fault,
				Summary: fmt.Sprintf("MID %d %s %d FMI %d first reported (%s in the latest table)", f.MID, code, f.Code, f.FMI, state),
				Detail:  detailRef{"j1587_faults", args("port", p.Name, "mid", f.MID)}})
		}
	}
}

// udsSessions lists DiagnosticSessionControl (0x10) requests.
func (tl *timeline) udsSessions() {
	tl.c.d.UDS.Transactions().Range(0, func(_ uint64, r isotp.Record) bool {
		if r.SID != 0x10 || r.Request == nil {
			return true
		}
		sub := "no sub-function"
		if r.SubFunction != nil {
			sub = fmt.Sprintf("0x%02X %s", *r.SubFunction, r.SubFunctionName)
		}
		since, until := around(r.Request.Time)
		tl.add(timelineRow{Time: r.Request.Time, Port: r.Port, Bus: "uds", Kind: evUDSSession,
			Summary: fmt.Sprintf("DiagnosticSessionControl %s on %s: %s", sub, r.Request.CANID, r.Status),
			Detail:  detailRef{"uds_trace", args("port", r.Port, "sid", "0x10", "since", since, "until", until)}})
		return true
	})
}

func (tl *timeline) recorderGaps() {
	rec := tl.c.d.BlackBox.Recorder
	if rec == nil {
		return
	}
	for _, g := range rec.Gaps() {
		until := "still open"
		if g.To != nil {
			until = "until " + g.To.UTC().Format(time.RFC3339)
		}
		var lost uint64
		for _, n := range g.NotRecorded {
			lost += n
		}
		tl.add(timelineRow{Time: g.From, Bus: "box", Kind: evRecorderGap, Clock: "box",
			Summary: fmt.Sprintf("recording gap (%s) %s, %d frames not recorded", g.Reason, until, lost), Detail: detailRef{toolCaptureStatus, args()}})
	}
}

func (tl *timeline) transmissions() {
	for _, r := range tl.c.d.Transmit.History(caller(tl.c.ctx).Owner()) {
		what := fmt.Sprintf("%s %s, %d frames sent", r.Tool, r.Event, r.Sent)
		if r.Gate != "" {
			what += fmt.Sprintf(" (gate %s %s)", r.Gate, r.Code)
		}
		tl.add(timelineRow{Time: r.Time, Port: r.Port, Bus: busOfTransmit(tl.c, r), Kind: evTransmit, Clock: "box", Summary: what,
			Detail: detailRef{"transmit_status", args()}})
	}
}

// ruleChanges are the rule engine's kept changes into and out of
// firing; the others (no_data, ok, pending between themselves) are
// rule_status's history. A rule without a port is the box's.
func (tl *timeline) ruleChanges(all []ports.Status) {
	if tl.c.d.Rules == nil {
		return
	}
	h := tl.c.d.Rules.History()
	if n := h.FirstSeq(); n > 0 {
		if first, ok := h.Get(n); ok && first.At.After(tl.sp.since) {
			tl.c.warnf("%d older rule state changes were let go (the box keeps %d): rule firings before %s are not shown",
				n, rules.HistoryLen, first.At.UTC().Format(time.RFC3339))
		}
	}
	h.Range(h.FirstSeq(), func(_ uint64, tr rules.Transition) bool {
		v := tr.Verdict
		r := timelineRow{Time: tr.At, Port: v.Rule.Port, Bus: "box", Clock: "box", Detail: detailRef{toolRuleStatus, args("rule", v.Rule.Name)}}
		for _, p := range all {
			if p.Name == v.Rule.Port {
				r.Bus = p.Kind
			}
		}
		switch {
		case tr.To == rules.StateFiring:
			r.Kind = evRuleFiring
			r.Summary = fmt.Sprintf("rule %s (%s, %s) firing: %s %s %s", v.Rule.Name, v.Rule.Severity, v.Rule.Kind, num(v.Value), v.Rule.Op, num(v.Rule.Value))
		case tr.From == rules.StateFiring:
			r.Kind = evRuleCleared
			r.Summary = fmt.Sprintf("rule %s (%s, %s) cleared: now %s", v.Rule.Name, v.Rule.Severity, v.Rule.Kind, tr.To)
		default:
			return true
		}
		tl.add(r)
		return true
	})
}

func busOfTransmit(c *call, r transmit.Recent) string {
	for _, p := range c.d.Ports.Snapshot() {
		if p.Name == r.Port {
			return p.Kind
		}
	}
	return "box"
}

// marks puts each mark on every port's timeline (one row per port), or
// once for the box when it has no port.
func (tl *timeline) marks(all []ports.Status) {
	ms, _ := tl.c.d.Marks.Snapshot()
	for _, m := range ms {
		at := m.At.UTC().Format(time.RFC3339Nano)
		row := timelineRow{Time: m.At, Bus: "box", Kind: evMark, Clock: "box", Summary: fmt.Sprintf("mark %d (%s)", m.Seq, m.Source),
			Text: untrusted.Text(m.Label), Detail: detailRef{"what_happened", args("at", at, "window", "±5s")}}
		if len(all) == 0 {
			tl.add(row)
		}
		for _, p := range all {
			row.Port, row.Bus = p.Name, p.Kind
			tl.add(row)
		}
	}
}
