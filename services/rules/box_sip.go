package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/sipsecurity"
)

// SIPStore is the SIP dialogs and the registration table (*sip.Store).
type SIPStore interface {
	Snapshot() *sip.Snapshot
	Registrations() sip.RegView
}

// Media is the RTP analyser (*rtp.Analyser).
type Media interface {
	Snapshot(intervals bool) *rtp.Snapshot
}

// live reports whether any port is live: the box's clock is then the
// capture clock.
func (b Box) live() bool {
	if b.Ports == nil {
		return false
	}
	for _, p := range b.Ports.Snapshot() {
		if p.Live {
			return true
		}
	}
	return false
}

// windowEnd is where a windowed kind's window ends on the capture clock:
// the box's clock while a port is live; else newest, the latest record
// the store holds, as a file is judged at its last frame (as
// sip_registrations judges it); else now.
func (b Box) windowEnd(now, newest time.Time) time.Time {
	if newest.IsZero() || b.live() {
		return now
	}
	return newest
}

// within reports whether t is in [end-w, end].
func within(t, end time.Time, w time.Duration) bool {
	return !t.IsZero() && !t.Before(end.Add(-w)) && !t.After(end)
}

// groupFilter is the dialog filter (docs/filter.md) that narrows
// group_dialogs to r's group, for the dimensions that have a filter
// field of the same meaning; "" for the others.
func groupFilter(r Rule) string {
	field := map[string]string{"method": "first_method", "state": "state", "final_code": "final_code", "from_user": "from_user",
		"to_user": "to_user", "src_ip": "src_ip", "dst_ip": "dst_ip", "transport": "transport"}[r.Group]
	switch {
	case field == "" || r.Key == sip.NoValue:
		return ""
	case field == "final_code":
		return field + " == " + r.Key
	}
	return field + " == " + strconv.Quote(r.Key)
}

// calls measures the call attempts of the dialogs whose first INVITE
// began within the window (of r's group), with sip.MetricsAcc: the
// figures group_dialogs shows.
func (b Box) calls(r Rule, now time.Time) Reading {
	if b.SIP == nil {
		return Reading{Why: "no SIP store"}
	}
	sn := b.SIP.Snapshot()
	var newest time.Time
	for _, d := range sn.Dialogs {
		if d.Updated.After(newest) {
			newest = d.Updated
		}
	}
	end := b.windowEnd(now, newest)
	var acc sip.MetricsAcc
	for _, d := range sn.Dialogs {
		if !d.HasInvite || !within(d.InviteAt, end, r.Window) {
			continue
		}
		if r.Group != "" {
			if vs, _ := d.DimensionValues(r.Group); !slices.Contains(vs, r.Key) {
				continue
			}
		}
		acc.Add(d)
	}
	m := acc.Result()
	ev := Evidence{Tool: "group_dialogs", Args: map[string]string{"dimension": cmp.Or(r.Group, "dst_ip")}, Figures: map[string]float64{
		"dialogs": float64(m.Dialogs), "attempts": float64(m.Attempts), "answered": float64(m.Answered),
		"window_end": float64(end.UnixMilli()) / 1000,
	}}
	if f := groupFilter(r); f != "" {
		ev.Args["filter"] = f
	}
	for name, mt := range map[string]sip.Metric{"asr": m.ASR, "ner": m.NER, "pdd_p50_ms": m.PDDp50, "pdd_p95_ms": m.PDDp95} {
		if mt.Value != nil {
			ev.Figures[name] = *mt.Value
		}
	}
	mt, scale := m.ASR, 1.0
	switch {
	case r.Kind == KindSIPNER:
		mt = m.NER
	case r.Kind == KindSIPPDD && r.Percentile == 95:
		mt, scale = m.PDDp95, 1e-3
	case r.Kind == KindSIPPDD:
		mt, scale = m.PDDp50, 1e-3
	}
	if mt.Value == nil {
		return Reading{Why: "within the window, " + mt.NullReason, Evidence: ev}
	}
	return Reading{OK: true, Value: *mt.Value * scale, Population: mt.Population, Evidence: ev}
}

// mosShare is the share of the scored streams seen within the window
// whose MOS is in r's band or a worse one: an alert on "many
// dissatisfied" must not fall quiet when the calls get worse still.
func (b Box) mosShare(r Rule, now time.Time) Reading {
	if b.Media == nil {
		return Reading{Why: "no RTP analyser"}
	}
	band := slices.Index(Bands(), r.Band)
	sn := b.Media.Snapshot(false)
	var newest time.Time
	for _, s := range sn.Streams {
		if s.Last.After(newest) {
			newest = s.Last
		}
	}
	end := b.windowEnd(now, newest)
	var seen, scored, in int
	for _, s := range sn.Streams {
		// Seen in the window: it overlaps [end-window, end].
		if s.Last.Before(end.Add(-r.Window)) || s.First.After(end) {
			continue
		}
		seen++
		if s.Value == nil {
			continue
		}
		scored++
		if rtp.BandOf(*s.Value) >= band {
			in++
		}
	}
	// MOS is scored to 0.01, so "below the band's upper bound" is at
	// most that bound less 0.01, the filter rtp_streams takes.
	ev := Evidence{Tool: "rtp_streams", Args: map[string]string{"max_mos": strconv.FormatFloat(rtp.SatisfactionBands[band].Max-0.01, 'f', 2, 64)},
		Figures: map[string]float64{"streams": float64(seen), "scored": float64(scored), "in_band_or_worse": float64(in), "window_end": float64(end.UnixMilli()) / 1000}}
	if scored == 0 {
		return Reading{Why: fmt.Sprintf("no scored RTP stream within the window (%d seen)", seen), Evidence: ev}
	}
	return Reading{OK: true, Value: float64(in) / float64(scored), Population: scored, Evidence: ev}
}

// regFailures is the running total of failed registration attempts as
// sip_registrations counts them (a 401/407 then 200 is a success; a
// challenge whose retry fails or is never answered is one failure), of
// the addresses of record containing r.AoR; the engine takes its
// increase over the window.
func (b Box) regFailures(r Rule, now time.Time) Reading {
	if b.SIP == nil {
		return Reading{Why: "no SIP store"}
	}
	v := b.SIP.Registrations()
	// Judged as sip_registrations judges: a file at its latest message,
	// a live capture at the box's clock.
	at := v.Latest
	if b.live() && now.After(at) {
		at = now
	}
	aor := strings.ToLower(r.AoR)
	var aors, refused, noAnswer, failedChallenges int
	for _, row := range v.Rows {
		if aor != "" && !strings.Contains(strings.ToLower(row.AoR), aor) {
			continue
		}
		row = row.At(at)
		aors++
		for _, c := range row.Failures {
			refused += c.N
		}
		refused += row.FailuresOther
		noAnswer += row.NoAnswer
		failedChallenges += row.FailedChallenges
	}
	ev := Evidence{Tool: "sip_registrations", Args: map[string]string{}, Figures: map[string]float64{
		"aors": float64(aors), "refused": float64(refused), "no_answer": float64(noAnswer), "failed_challenges": float64(failedChallenges),
		"evicted_aors": float64(v.Evicted)}}
	if r.AoR != "" {
		ev.Args["aor"] = r.AoR
	}
	return Reading{OK: true, Value: float64(refused + noAnswer), Evidence: ev}
}

// security counts the findings (sipsecurity.AnalyseView of the whole
// store with the configured thresholds, as sip_security_findings
// answers) whose episode has an event within the window, of r's finding
// kind when it names one. The population is the dialogs with a message
// within the window: no SIP at all is no data, not an all-clear.
func (b Box) security(r Rule, now time.Time) Reading {
	if b.SIP == nil {
		return Reading{Why: "no SIP store"}
	}
	th := b.SIPSecurity
	if th.Window == 0 {
		th = sipsecurity.Defaults
	}
	sn := b.SIP.Snapshot()
	var newest time.Time
	for _, d := range sn.Dialogs {
		if d.Updated.After(newest) {
			newest = d.Updated
		}
	}
	end := b.windowEnd(now, newest)
	start := end.Add(-r.Window)
	active := 0
	for _, d := range sn.Dialogs {
		if !d.Updated.Before(start) && !d.Created.After(end) {
			active++
		}
	}
	rep := sipsecurity.AnalyseView(sn, nil, th) // shared by the rules of a tick and the tools
	ev := Evidence{Tool: "sip_security_findings", Args: map[string]string{}, Figures: map[string]float64{
		"dialogs_in_window": float64(active), "findings_left": float64(rep.FindingsLeft), "window_end": float64(end.UnixMilli()) / 1000}}
	n := 0
	for _, f := range rep.Findings {
		if (r.Finding != "" && f.Kind != r.Finding) || f.Last.Before(start) || f.First.After(end) {
			continue
		}
		n++
		ev.Figures["findings_"+f.Kind]++
	}
	ev.Figures["findings"] = float64(n)
	return Reading{OK: true, Value: float64(n), Population: active, Evidence: ev}
}
