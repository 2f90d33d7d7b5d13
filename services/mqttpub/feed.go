package mqttpub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/statuspage"
)

// Feeder bounds.
const (
	// DefaultInterval is how often state is published and the stores
	// are read for new faults and finished calls.
	DefaultInterval = 10 * time.Second
	// MinInterval keeps a typo from flooding the broker.
	MinInterval = time.Second
	// maxCallsPerTick bounds one tick's call summaries; the rest wait
	// for the next tick, none is lost while its dialog is kept.
	maxCallsPerTick = 256
)

// Sink takes messages (*Publisher).
type Sink interface {
	Publish(topic string, payload []byte, retain bool)
}

// Sources are what the feeder reads; nil fields publish nothing.
type Sources struct {
	// Status builds the page's model; state is published from it.
	Status func() statuspage.Status
	J1939  interface{ Faults() []j1939.Fault }
	J1587  interface{ Faults() []j1587.FaultEntry }
	Calls  interface{ Snapshot() *sip.Snapshot }
	Media  interface{ Snapshot(bool) *rtp.Snapshot }
	// Fence cleans and marks the sender text a call summary quotes (the
	// caller's and callee's user parts, the reason phrase): the daemon
	// gives untrusted.Text's fence, so a payload fences exactly as an
	// answer does. Without it that text is left out, never sent bare.
	Fence func(string) string
}

// Feeder publishes state every tick, fault topics when they change and
// one summary per finished call.
type Feeder struct {
	sink Sink
	src  Sources
	// faults holds the retained fault topics and their last payload, to
	// publish changes only and to clear a topic whose fault went away.
	// It is bounded by the sources a bus can have (SA and MID tables).
	faults map[string]string
	// nextDialog is the first dialog id not seen yet; pending holds older
	// INVITE dialogs not finished at the last tick (bounded by the store:
	// ids it evicted are forgotten).
	nextDialog uint64
	pending    map[uint64]bool
}

// NewFeeder returns a feeder publishing to sink.
func NewFeeder(sink Sink, src Sources) *Feeder {
	return &Feeder{sink: sink, src: src, faults: map[string]string{}, pending: map[uint64]bool{}}
}

// Run ticks every interval until ctx ends.
func (f *Feeder) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f.Tick()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick publishes once.
func (f *Feeder) Tick() {
	if f.src.Status != nil {
		if b, err := json.Marshal(stateOf(f.src.Status())); err == nil {
			f.sink.Publish(TopicState, b, true)
		}
	}
	f.publishFaults()
	f.publishCalls()
}

// State is the state topic's payload: what a fleet dashboard shows per
// box, in the page's vocabulary.
type State struct {
	Generated            time.Time   `json:"generated"`
	Board                string      `json:"board"`
	Version              string      `json:"version"`
	UptimeS              int64       `json:"uptime_s"`
	Armed                bool        `json:"armed"`
	PlansPending         int         `json:"plans_pending"`
	ConfirmationsPending int         `json:"confirmations_pending"`
	CanSendNow           []string    `json:"can_send_now"`
	Ports                []PortState `json:"ports"`
	BusLoad              []BusLoad   `json:"bus_load"`
	ActiveFaults         int         `json:"active_faults"`
	VoIP                 *VoIPState  `json:"voip"`
}

// PortState is one port in State.
type PortState struct {
	Name       string  `json:"name"`
	Kind       string  `json:"kind"`
	Live       bool    `json:"live"`
	Frames     uint64  `json:"frames"`
	DropsTotal uint64  `json:"drops_total"`
	StoreUse   float64 `json:"store_use"`
}

// BusLoad is one CAN port's newest minute.
type BusLoad struct {
	Port string   `json:"port"`
	Mean *float64 `json:"mean_last_minute"`
	Peak *float64 `json:"peak_last_minute"`
}

// VoIPState is the VoIP totals in State.
type VoIPState struct {
	Calls       int      `json:"calls"`
	Active      int      `json:"active"`
	ASR         *float64 `json:"asr"`
	OneWayCount int      `json:"one_way_count"`
}

func stateOf(s statuspage.Status) State {
	st := State{Generated: s.Generated, Board: s.Box.Board, Version: s.Box.Version, UptimeS: s.Box.UptimeS,
		Armed: s.Transmit.KeySwitch.On, PlansPending: s.Transmit.PlansPending, ConfirmationsPending: s.Transmit.ConfirmationsPending,
		CanSendNow: s.Transmit.CanSendNow, Ports: []PortState{}, BusLoad: []BusLoad{},
		ActiveFaults: len(s.Faults.J1939) + len(s.Faults.J1587)}
	for _, p := range s.Ports {
		st.Ports = append(st.Ports, PortState{Name: p.Name, Kind: p.Kind, Live: p.Live, Frames: p.Frames, DropsTotal: p.DropsTotal, StoreUse: p.StoreUse})
	}
	for _, l := range s.BusLoad {
		bl := BusLoad{Port: l.Port}
		for i := len(l.Bins) - 1; i >= 0; i-- {
			if l.Bins[i].Mean != nil {
				bl.Mean, bl.Peak = l.Bins[i].Mean, l.Bins[i].Peak
				break
			}
		}
		st.BusLoad = append(st.BusLoad, bl)
	}
	if v := s.VoIP; v != nil {
		st.VoIP = &VoIPState{Calls: v.Calls, Active: v.Active, ASR: v.ASR, OneWayCount: v.OneWayCount}
	}
	return st
}

// SourceFaults is one fault topic's payload.
type SourceFaults struct {
	Bus     string      `json:"bus"` // j1939 or j1587
	Port    string      `json:"port,omitempty"`
	Address int         `json:"address"` // J1939 SA or J1587 MID
	Name    string      `json:"name"`
	Time    time.Time   `json:"time"`
	Lamps   []string    `json:"lamps,omitempty"`
	Codes   []FaultCode `json:"codes"`
}

// FaultCode is one active code: SPN/FMI/OC for J1939, PID or SID/FMI
// for J1587.
type FaultCode struct {
	SPN   uint32 `json:"spn,omitempty"`
	Code  int    `json:"code,omitempty"`
	IsSID bool   `json:"is_sid,omitempty"`
	Name  string `json:"name,omitempty"`
	FMI   int    `json:"fmi"`
	Count *int   `json:"occurrence_count"`
}

func (f *Feeder) publishFaults() {
	now := map[string]SourceFaults{}
	if f.src.J1939 != nil {
		for _, d := range f.src.J1939.Faults() {
			if d.Kind != "DM1" || d.NoActive || len(d.DTCs) == 0 {
				continue
			}
			sf := SourceFaults{Bus: "j1939", Port: d.Port, Address: d.SA, Name: d.ECU, Time: d.Time.UTC(), Lamps: lamps(d.Lamps), Codes: []FaultCode{}}
			for _, c := range d.DTCs {
				oc := int(c.OC)
				sf.Codes = append(sf.Codes, FaultCode{SPN: c.SPN, FMI: int(c.FMI), Count: &oc})
			}
			now[fmt.Sprintf("%s/j1939/%s/%02X", TopicFaults, d.Port, d.SA)] = sf
		}
	}
	if f.src.J1587 != nil {
		for _, e := range f.src.J1587.Faults() {
			if !e.Active {
				continue
			}
			topic := fmt.Sprintf("%s/j1587/%d", TopicFaults, e.MID)
			sf, ok := now[topic]
			if !ok {
				sf = SourceFaults{Bus: "j1587", Address: e.MID, Name: e.MIDName, Codes: []FaultCode{}}
			}
			sf.Time = maxTime(sf.Time, e.Last.UTC())
			sf.Codes = append(sf.Codes, FaultCode{Code: e.Code, IsSID: e.IsSID, Name: e.CodeName, FMI: e.FMI, Count: e.Count})
			now[topic] = sf
		}
	}
	// Topic order: a broker's subscribers see one order tick after tick.
	for _, topic := range slices.Sorted(maps.Keys(now)) {
		b, err := json.Marshal(now[topic])
		if err != nil || f.faults[topic] == string(b) {
			continue
		}
		f.faults[topic] = string(b)
		f.sink.Publish(topic, b, true)
	}
	for _, topic := range slices.Sorted(maps.Keys(f.faults)) {
		if _, ok := now[topic]; !ok {
			delete(f.faults, topic)
			f.sink.Publish(topic, nil, true) // an empty retained message clears the topic
		}
	}
}

func lamps(l j1939.Lamps) []string {
	var out []string
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

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// CallSummary is one finished call on the calls topic. Names are what
// the sender wrote and arrive fenced (Sources.Fence).
type CallSummary struct {
	CallID      string          `json:"call_id"`
	State       string          `json:"state"`
	FinalCode   int             `json:"final_code"`
	FinalReason string          `json:"final_reason,omitempty"`
	From        string          `json:"from_user"`
	To          string          `json:"to_user"`
	Start       time.Time       `json:"start"`
	DurationS   *float64        `json:"duration_s"`
	PDDMs       *float64        `json:"pdd_ms"`
	Streams     []StreamSummary `json:"streams"`
	OneWay      bool            `json:"one_way"`
}

// StreamSummary is one RTP stream of a call.
type StreamSummary struct {
	Src     string   `json:"src"`
	Dst     string   `json:"dst"`
	Packets uint64   `json:"packets"`
	LostPct float64  `json:"lost_pct"`
	MOS     *float64 `json:"mos"`
}

func finished(d *sip.Dialog) bool {
	switch d.State {
	case sip.StateEnded, sip.StateFailed, sip.StateCancelled:
		return true
	}
	return false
}

func (f *Feeder) publishCalls() {
	if f.src.Calls == nil {
		return
	}
	sn := f.src.Calls.Snapshot()
	var media *rtp.Snapshot
	kept := map[uint64]bool{}
	sent := 0
	next := f.nextDialog
	for _, d := range sn.Dialogs {
		if !d.HasInvite {
			continue
		}
		kept[d.ID] = true
		if d.ID < f.nextDialog && !f.pending[d.ID] {
			continue // published already
		}
		next = max(next, d.ID+1)
		if !finished(d) || sent == maxCallsPerTick {
			f.pending[d.ID] = true
			continue
		}
		if media == nil && f.src.Media != nil {
			media = f.src.Media.Snapshot(false)
		}
		if b, err := json.Marshal(summary(d, media, f.fence)); err == nil {
			f.sink.Publish(TopicCalls, b, false)
		}
		delete(f.pending, d.ID)
		sent++
	}
	f.nextDialog = next
	for id := range f.pending {
		if !kept[id] {
			delete(f.pending, id) // evicted unfinished
		}
	}
}

// fence is Sources.Fence, or a fence that leaves the text out.
func (f *Feeder) fence(s string) string {
	if f.src.Fence == nil {
		return ""
	}
	return f.src.Fence(s)
}

func summary(d *sip.Dialog, media *rtp.Snapshot, fence func(string) string) CallSummary {
	c := CallSummary{CallID: d.CallID, State: d.State, FinalCode: d.FinalCode, FinalReason: fence(d.FinalReason),
		From: fence(d.FromUser), To: fence(d.ToUser), Start: d.Created.UTC(), Streams: []StreamSummary{}}
	if v, ok := d.Duration(); ok {
		s := round3(v.Seconds())
		c.DurationS = &s
	}
	if v, ok := d.PDD(); ok {
		ms := round3(float64(v) / float64(time.Millisecond))
		c.PDDMs = &ms
	}
	if media == nil {
		return c
	}
	for _, s := range media.ForCall(d.CallID) {
		ss := StreamSummary{Src: s.Src, Dst: s.Dst, Packets: s.Packets, LostPct: round3(s.LostPct)}
		if s.Value != nil {
			m := round3(*s.Value)
			ss.MOS = &m
		}
		c.Streams = append(c.Streams, ss)
	}
	c.OneWay = slices.ContainsFunc(media.Diagnose(d.CallID).Findings, func(f rtp.Finding) bool {
		return f.Code == rtp.FindingOneWay && f.Severity == "error"
	})
	return c
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
