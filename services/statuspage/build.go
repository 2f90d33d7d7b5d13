package statuspage

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/rtp"
	"fieldtap/services/rules"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// Page bounds: the page is for a phone, so every list is short and says
// how many it left out.
const (
	// recentTransmit is how much transmitter history the page shows.
	recentTransmit = 5
	// maxOneWay is how many one-way call ids the page lists.
	maxOneWay = 10
	// maxFaults bounds each fault list; a bus with more active faults
	// than this has a bigger problem than the page can show.
	maxFaults = 50
	// loadWindow is the bus-load chart's span and loadBin one point of
	// it: sixty one-minute bins fit a phone's width.
	loadWindow = time.Hour
	loadBin    = time.Minute
	loadBins   = int(loadWindow / loadBin)
	// roundTo is the precision of every shown fraction (0.01 %).
	roundTo = 1e4
	// recorderGaps is how many of the newest recording gaps the page
	// lists; list_captures has them all.
	recorderGaps = 5
)

// noPortCanSend is the banner's word when nothing would pass the
// configuration and arm gates.
const noPortCanSend = "no port can send"

// Build reads every source once and returns the page at now.
func Build(s Sources, now time.Time) Status {
	st := Status{Generated: now.UTC(), Box: Box{Version: s.Version, Board: s.Board}, Ports: []PortView{}, BusLoad: []LoadSeries{}}
	if !s.Started.IsZero() {
		st.Box.UptimeS = int64(now.Sub(s.Started) / time.Second)
	}
	var snap []ports.Status
	if s.Ports != nil {
		snap = s.Ports.Snapshot()
	}
	st.Transmit = transmitView(s, now)
	live := map[string]bool{}
	links := canLinks(s.CAN)
	for _, p := range snap {
		live[p.Name] = p.Live
		st.Ports = append(st.Ports, portView(p, links, s.Rates, now))
	}
	if s.Rates != nil {
		s.Rates.Sample(snap, now)
	}
	if s.CAN != nil {
		for _, p := range s.CAN.Ports() {
			st.BusLoad = append(st.BusLoad, loadSeries(p.Name(), p.Seconds(), live[p.Name()], now))
		}
	}
	st.Faults = faultsView(s, snap)
	st.VoIP, st.VoIPReason = voipView(s, snap)
	if s.Recorder != nil {
		st.Recorder = recorderView(s.Recorder.Status())
	} else {
		st.RecorderReason = cmp.Or(s.NoRecorder, "no recorder")
	}
	if s.Rules != nil {
		st.Rules = rulesView(s.Rules.Verdicts())
	} else {
		st.RulesReason = "no [[rule]] is configured"
	}
	return st
}

// severityRank orders the firing rules: the most severe first.
var severityRank = map[string]int{"critical": 0, "warning": 1, "info": 2}

func rulesView(vs []rules.Verdict) *RulesView {
	rv := &RulesView{Firing: []RuleFiring{}}
	for _, v := range vs {
		switch v.State {
		case rules.StateFiring:
			rv.Firing = append(rv.Firing, RuleFiring{Name: v.Rule.Name, Severity: v.Rule.Severity, Kind: v.Rule.Kind, Port: v.Rule.Port,
				Since: v.Since.UTC(), Value: math.Round(v.Value*roundTo) / roundTo})
		case rules.StatePending:
			rv.Pending++
		case rules.StateOK:
			rv.OK++
		default:
			rv.NoData++
		}
	}
	slices.SortStableFunc(rv.Firing, func(a, b RuleFiring) int {
		return cmp.Or(cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]), a.Since.Compare(b.Since))
	})
	return rv
}

func recorderView(r recorder.Status) *RecorderView {
	v := &RecorderView{State: r.State, Reason: r.Reason, Dir: r.Dir, UsedBytes: r.Bytes, LimitBytes: r.QuotaBytes,
		FreeBytes: r.FreeBytes, Segments: r.Segments, Oldest: r.Oldest, Newest: r.Newest, WriteErrors: r.WriteErrors,
		GapsTotal: uint64(r.GapsTotal), Gaps: []Gap{}}
	for _, g := range r.Gaps[max(0, len(r.Gaps)-recorderGaps):] {
		v.Gaps = append(v.Gaps, Gap{Start: g.From, End: g.To, Reason: g.Reason})
	}
	return v
}

func transmitView(s Sources, now time.Time) TransmitView {
	tv := TransmitView{EnabledPorts: []string{}, CanSendNow: []string{}, Recent: []transmit.Recent{}}
	if s.Ports != nil {
		tv.KeySwitch = s.Ports.Arm()
	} else {
		tv.KeySwitch = ports.Arm{Input: ports.ArmInputNone, Where: "no arm input registered"}
	}
	if s.ArmedLED != nil {
		on, driven, why := s.ArmedLED()
		if driven {
			tv.ArmedLED = &on
		} else {
			tv.ArmedLEDReason = why
		}
	} else {
		tv.ArmedLEDReason = "the board has no armed LED"
	}
	tv.Sending = noPortCanSend
	if s.Transmit == nil {
		tv.Reason = "this box runs without a transmitter"
		return tv
	}
	ts := s.Transmit.Status(transmit.Owner{})
	tv.Available, tv.Armed, tv.PlansPending = true, ts.Armed, ts.Plans
	tv.ConfirmationsPending = ts.Confirmations.Waiting
	for _, p := range ts.Ports {
		if p.Enabled {
			tv.EnabledPorts = append(tv.EnabledPorts, p.Port)
		}
		if p.CanSend {
			tv.CanSendNow = append(tv.CanSendNow, p.Port)
		}
	}
	tv.Sending = noPortCanSend
	if len(tv.CanSendNow) > 0 {
		tv.Sending = "can send on " + strings.Join(tv.CanSendNow, ", ")
	}
	tv.Recent = ts.Recent[max(0, len(ts.Recent)-recentTransmit):]
	return tv
}

// canLinks maps CAN port names to their driver's link view.
func canLinks(c CANLoad) map[string]*canbus.Link {
	out := map[string]*canbus.Link{}
	if c == nil {
		return out
	}
	for _, p := range c.Ports() {
		out[p.Name()] = p.Status().Link
	}
	return out
}

func portView(p ports.Status, links map[string]*canbus.Link, rates *Rates, now time.Time) PortView {
	v := PortView{Name: p.Name, Kind: p.Kind, Source: p.Source, Live: p.Live, State: p.State, StateSince: p.StateSince,
		Frames: p.Frames, Bytes: p.Bytes, Drops: p.Drops, Errors: p.Errors, StoppedEarly: p.StoppedEarly, StoreEvicted: p.Store.Evicted}
	for _, n := range p.Drops {
		v.DropsTotal += n
	}
	switch fps, ok := rates.perSecond(p.Name, p.Frames, now); {
	case rates == nil:
		v.FramesPerSReason = "no rate sampler on this box"
	case !ok:
		v.FramesPerSReason = "measuring: the counters have not been sampled " + rateStep.String() + " apart yet"
	default:
		r := math.Round(fps*10) / 10
		v.FramesPerS = &r
	}
	switch {
	case !p.Live:
		v.LastFrameAgeReason = "a file's frames carry the file's times"
		v.DropsLastMinuteReason = "a file's losses carry the file's times"
	default:
		if p.LastTime == nil {
			v.LastFrameAgeReason = "no frame yet"
		} else {
			age := math.Round(max(0, now.Sub(*p.LastTime).Seconds())*10) / 10
			v.LastFrameAgeS = &age
		}
		var n uint64
		for _, l := range p.Losses {
			// A loss is logged by the second it began in; the whole of
			// that second counts when it overlaps the minute. The loss
			// log's folded oldest entry carries its newest time, so past
			// its bound (capture.maxLosses) this may count a little more.
			if l.At.Add(time.Second).After(now.Add(-dropWindow)) {
				n += l.N
			}
		}
		v.DropsLastMinute = &n
	}
	if p.Live {
		// The supervisor's restarts (a driver's reopen is one of them)
		// and the CAN controller's bus-off restarts.
		n := p.Restarts
		if l := links[p.Name]; l != nil && l.Restarts != nil {
			n += *l.Restarts
		}
		v.Restarts = &n
	} else {
		v.RestartsReason = "a capture file is read once: it does not restart"
	}
	if p.Store.MaxItems > 0 {
		v.StoreUse = float64(p.Store.Items) / float64(p.Store.MaxItems)
	}
	if p.Store.MaxBytes > 0 {
		v.StoreUse = max(v.StoreUse, float64(p.Store.Bytes)/float64(p.Store.MaxBytes))
	}
	v.StoreUse = round(v.StoreUse)
	return v
}

// loadSeries bins a port's seconds into the last loadWindow. Seconds
// with no frames are absent from the history and count as idle; bins
// before the first measured second have no basis and stay null.
func loadSeries(name string, secs []canbus.Second, live bool, now time.Time) LoadSeries {
	ls := LoadSeries{Port: name, BinS: int(loadBin / time.Second), Bins: make([]LoadBin, loadBins)}
	end := now.Truncate(loadBin).Add(loadBin)
	if !live && len(secs) > 0 {
		end = secs[len(secs)-1].Start.Truncate(loadBin).Add(loadBin)
	}
	ls.End = end.UTC()
	start := end.Add(-loadWindow)
	var first time.Time
	if len(secs) > 0 {
		first = secs[0].Start
	}
	sum := make([]float64, loadBins)
	peak := make([]float64, loadBins)
	for _, s := range secs {
		if s.Start.Before(start) || !s.Start.Before(end) {
			continue
		}
		i := int(s.Start.Sub(start) / loadBin)
		sum[i] += s.Load
		peak[i] = max(peak[i], s.Load)
	}
	for i := range ls.Bins {
		bs := start.Add(time.Duration(i) * loadBin)
		ls.Bins[i].Start = bs.UTC()
		be := bs.Add(loadBin)
		if len(secs) == 0 || !first.Before(be) || bs.After(now) {
			continue // no basis: before the first frame, or still to come
		}
		from := bs
		if first.After(from) {
			from = first.Truncate(time.Second)
		}
		to := be
		if live && now.Before(to) {
			to = now.Truncate(time.Second).Add(time.Second)
		}
		covered := to.Sub(from).Seconds()
		if covered <= 0 {
			continue
		}
		m, p := round(sum[i]/covered), round(peak[i])
		ls.Bins[i].Mean, ls.Bins[i].Peak = &m, &p
		ls.PeakMax = max(ls.PeakMax, p)
	}
	return ls
}

func hasKind(snap []ports.Status, kind string) bool {
	return slices.ContainsFunc(snap, func(p ports.Status) bool { return p.Kind == kind })
}

func faultsView(s Sources, snap []ports.Status) FaultsView {
	fv := FaultsView{J1939: []J1939Fault{}, J1587: []J1587Fault{}}
	switch {
	case s.J1939 == nil || !hasKind(snap, "can"):
		fv.J1939Reason = "no CAN port"
	default:
		for _, f := range s.J1939.Faults() {
			if f.Kind != "DM1" || f.NoActive {
				continue
			}
			for _, d := range f.DTCs {
				if len(fv.J1939) == maxFaults {
					break
				}
				fv.J1939 = append(fv.J1939, J1939Fault{Port: f.Port, SA: f.SA, SAName: f.ECU,
					SPN: d.SPN, FMI: d.FMI, OC: d.OC, Lamps: lampsOn(f.Lamps), Time: f.Time.UTC()})
			}
		}
		slices.SortFunc(fv.J1939, func(a, b J1939Fault) int {
			return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.SA, b.SA), cmp.Compare(a.SPN, b.SPN), cmp.Compare(a.FMI, b.FMI))
		})
	}
	switch {
	case s.J1587 == nil || !hasKind(snap, "j1708"):
		fv.J1587Reason = "no J1708 port"
	default:
		for _, f := range s.J1587.Faults() {
			if !f.Active || len(fv.J1587) == maxFaults {
				continue
			}
			fv.J1587 = append(fv.J1587, J1587Fault{MID: f.MID, MIDName: f.MIDName, Code: f.Code, IsSID: f.IsSID,
				CodeName: f.CodeName, FMI: f.FMI, Count: f.Count, Last: f.Last.UTC()})
		}
	}
	return fv
}

// lampsOn names the DM1 lamps whose two-bit status is 01 (on).
func lampsOn(l j1939.Lamps) []string {
	out := []string{}
	for _, x := range []struct {
		name string
		v    uint8
	}{{"mil", l.MIL}, {"red_stop", l.RedStop}, {"amber_warning", l.AmberWarn}, {"protect", l.Protect}} {
		if x.v == 1 {
			out = append(out, x.name)
		}
	}
	return out
}

// mosBands are rtp.SatisfactionBands as the page shows them.
func mosBands() []MOSBand {
	out := make([]MOSBand, len(rtp.SatisfactionBands))
	for i, b := range rtp.SatisfactionBands {
		out[i] = MOSBand{Label: b.Label, Min: b.Min, Max: b.Max}
	}
	return out
}

func voipView(s Sources, snap []ports.Status) (*VoIPView, string) {
	if s.Calls == nil || !hasKind(snap, "ethernet") {
		return nil, "no Ethernet (SPAN) port"
	}
	v := &VoIPView{OneWay: []string{}}
	var acc sip.MetricsAcc
	for _, d := range s.Calls.Snapshot().Dialogs {
		if !d.HasInvite {
			continue
		}
		v.Calls++
		if d.State == sip.StateAnswered {
			v.Active++
		}
		acc.Add(d)
	}
	m := acc.Result()
	v.Attempts, v.Answered = m.Attempts, m.Answered
	if m.ASR.Value != nil {
		r := round(*m.ASR.Value)
		v.ASR = &r
	} else {
		v.ASRReason = m.ASR.NullReason
	}
	v.MOS.Bands = mosBands()
	if s.Media == nil {
		return v, ""
	}
	sn := s.Media.Snapshot(false)
	for _, st := range sn.Streams {
		if st.Value == nil {
			if !st.Grounded {
				v.MOS.NotGrounded++
			}
			continue
		}
		v.MOS.Streams++
		v.MOS.Bands[rtp.BandOf(*st.Value)].Streams++
	}
	// Diagnose each call on a snapshot of its own streams: one pass over
	// the streams, not one per call (thousands of each on a busy port).
	byCall := map[string][]rtp.StreamView{}
	for _, st := range sn.Streams {
		if st.CallID != "" {
			byCall[st.CallID] = append(byCall[st.CallID], st)
		}
	}
	ids := make([]string, 0, len(byCall))
	for id := range byCall {
		if sn.Dialogs[id] != nil {
			ids = append(ids, id) // a call with no stream cannot be one-way
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		one := &rtp.Snapshot{Streams: byCall[id], Dialogs: map[string]*rtp.DialogView{id: sn.Dialogs[id]}}
		for _, f := range one.Diagnose(id).Findings {
			if f.Code == rtp.FindingOneWay && f.Severity == "error" {
				v.OneWayCount++
				if len(v.OneWay) < maxOneWay {
					v.OneWay = append(v.OneWay, id)
				}
			}
		}
	}
	return v, ""
}

func round(f float64) float64 { return math.Round(f*roundTo) / roundTo }
