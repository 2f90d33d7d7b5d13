package statuspage

import (
	"strings"
	"testing"
	"time"

	"fieldtap/services/ports"
	"fieldtap/services/rules"
	"fieldtap/services/transmit"
)

// TestPortAtAGlance: frames per second from counter samples, the last
// frame's age, drops of the last minute beside those since start, the
// state and since when; a file port says why it has no age or minute.
func TestPortAtAGlance(t *testing.T) {
	last := t0.Add(-1500 * time.Millisecond)
	since := t0.Add(-time.Hour)
	can := ports.Status{Name: "can0", Kind: "can", Live: true, State: ports.StateCapturing, StateSince: &since, LastTime: &last,
		Drops: map[string]uint64{"handoff_full": 9, "kernel": 4},
		Losses: []ports.Loss{
			{At: t0.Add(-2 * time.Minute), Cause: "handoff_full", N: 6},  // before the minute
			{At: t0.Add(-61 * time.Second), Cause: "kernel", N: 1},       // its second ends before the minute
			{At: t0.Add(-60 * time.Second), Cause: "handoff_full", N: 3}, // the second that began the minute
			{At: t0.Add(-5 * time.Second), Cause: "kernel", N: 3},
		}}
	file := ports.Status{Name: "file1", Kind: "ethernet", State: ports.StateEnded, Frames: 40}
	rates := NewRates()
	// Samples a second apart over 12 s at 250 frames/s; the one at -12 s
	// is outside the window and must not count.
	for i := 12; i >= 1; i-- {
		can.Frames = uint64(250 * (12 - i))
		rates.Sample([]ports.Status{can, file}, t0.Add(-time.Duration(i)*time.Second))
	}
	can.Frames = 250 * 12
	tx := fakeTransmit{transmit.Status{Ports: []transmit.PortStatus{{Port: "can0", Enabled: true}}}}
	st := Build(Sources{Ports: fakePorts{st: []ports.Status{can, file}}, Rates: rates, Transmit: tx}, t0)

	c, f := st.Ports[0], st.Ports[1]
	if c.FramesPerS == nil || *c.FramesPerS != 250 {
		t.Errorf("can0 frames/s %v (%q), want 250", c.FramesPerS, c.FramesPerSReason)
	}
	if c.LastFrameAgeS == nil || *c.LastFrameAgeS != 1.5 {
		t.Errorf("can0 last frame age %v, want 1.5 s", c.LastFrameAgeS)
	}
	if c.DropsLastMinute == nil || *c.DropsLastMinute != 6 || c.DropsTotal != 13 {
		t.Errorf("can0 drops last minute %v of %d, want 6 of 13", c.DropsLastMinute, c.DropsTotal)
	}
	if c.State != ports.StateCapturing || c.StateSince == nil || !c.StateSince.Equal(since) {
		t.Errorf("can0 state %q since %v, want capturing since %v", c.State, c.StateSince, since)
	}
	if f.FramesPerS == nil || *f.FramesPerS != 0 {
		t.Errorf("file1 frames/s %v (%q), want 0: its counter stood still", f.FramesPerS, f.FramesPerSReason)
	}
	if f.LastFrameAgeS != nil || f.LastFrameAgeReason == "" || f.DropsLastMinute != nil || f.DropsLastMinuteReason == "" {
		t.Errorf("file1 age %v (%q), minute %v (%q): want both null with a reason", f.LastFrameAgeS, f.LastFrameAgeReason, f.DropsLastMinute, f.DropsLastMinuteReason)
	}
	if st.Transmit.Sending != "no port can send" {
		t.Errorf("sending %q with no port able to send", st.Transmit.Sending)
	}

	html := renderPage(t, st)
	for _, want := range []string{`<span id="sending">no port can send</span>`, `<td class="n fps">250.0`, `1.5 s ago`,
		`<span class="minute">6</span> / <span class="total">13</span>`, `<span class="state">capturing</span>`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	// Right after start no sample is a step old: no rate, a reason.
	fresh := Build(Sources{Ports: fakePorts{st: []ports.Status{can}}, Rates: NewRates()}, t0)
	if p := fresh.Ports[0]; p.FramesPerS != nil || !strings.HasPrefix(p.FramesPerSReason, "measuring") {
		t.Errorf("fresh frames/s %v (%q), want null while measuring", p.FramesPerS, p.FramesPerSReason)
	}
	tx.st.Ports[0].CanSend = true
	if got := Build(Sources{Transmit: tx}, t0).Transmit.Sending; got != "can send on can0" {
		t.Errorf("sending %q, want can0 named", got)
	}
}

// TestRatesRingIsBounded: sampling for longer than the window keeps
// rateSamples per port, and a sample closer than rateStep is not kept.
func TestRatesRingIsBounded(t *testing.T) {
	r := NewRates()
	for i := range 1000 {
		r.Sample([]ports.Status{{Name: "p", Frames: uint64(i)}}, t0.Add(time.Duration(i)*rateStep/2))
	}
	ring := r.ports["p"]
	if ring.n != rateSamples {
		t.Fatalf("ring holds %d samples, want %d", ring.n, rateSamples)
	}
	// Kept every other call (rateStep apart): frames rise 2 a step.
	if v, ok := r.perSecond("p", 999, t0.Add(999*rateStep/2)); !ok || v < 1.9 || v > 2.1 {
		t.Errorf("rate %v %v, want 2/s", v, ok)
	}
}

// TestRulesAtAGlance: the engine's verdicts as the page shows them: the
// firing rules most severe first, then the longest firing, and the
// others counted by state; a box without rules says so.
func TestRulesAtAGlance(t *testing.T) {
	lister := fakePorts{st: []ports.Status{
		{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateSilent},
		{Name: "can0", Kind: "can", Live: true, State: ports.StateCapturing},
	}}
	rule := func(name, port, sev string, op string) rules.Rule {
		return rules.Rule{Name: name, Kind: rules.KindPortSilent, Port: port, Op: op, Value: 0.5, Window: time.Minute, Severity: sev}
	}
	e, err := rules.New([]rules.Rule{
		rule("span-info", "span0", "info", rules.Above),
		rule("can0-ok", "can0", "critical", rules.Above),
		rule("span-crit", "span0", "critical", rules.Above),
		rule("can0-fires", "can0", "warning", rules.Below),
		rule("gone", "nope", "warning", rules.Above),
	}, rules.Box{Ports: lister})
	if err != nil {
		t.Fatal(err)
	}
	e.Tick(t0.Add(-time.Minute))
	st := Build(Sources{Ports: lister, Rules: e}, t0)
	r := st.Rules
	if r == nil || r.OK != 1 || r.NoData != 1 || r.Pending != 0 || len(r.Firing) != 3 {
		t.Fatalf("rules %+v", r)
	}
	var order []string
	for _, f := range r.Firing {
		order = append(order, f.Name+"/"+f.Severity)
		if !f.Since.Equal(t0.Add(-time.Minute)) {
			t.Errorf("%s since %v", f.Name, f.Since)
		}
	}
	if got := strings.Join(order, " "); got != "span-crit/critical can0-fires/warning span-info/info" {
		t.Errorf("firing order %s", got)
	}
	if st := Build(Sources{Ports: lister}, t0); st.Rules != nil || st.RulesReason == "" {
		t.Errorf("no rules: %+v %q", st.Rules, st.RulesReason)
	}
}
