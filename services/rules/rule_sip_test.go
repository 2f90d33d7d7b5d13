package rules

import (
	"strings"
	"testing"
	"time"
)

// populations reads each tick's value with its population.
type populations struct {
	vals []float64
	pops []int
	i    int
}

func (p *populations) Read(Rule, time.Time) Reading {
	i := p.i
	p.i++
	return Reading{OK: true, Value: p.vals[i], Population: p.pops[i], Evidence: Evidence{Tool: "group_dialogs"}}
}

// TestWindowedKindGuardsOnItsPopulation: a windowed kind's reading stands
// for its whole window, so the guard weighs the reading's population, not
// how many evaluations there were, and only the newest reading counts.
func TestWindowedKindGuardsOnItsPopulation(t *testing.T) {
	r := Rule{Name: "asr", Kind: KindSIPASR, Op: Below, Value: 0.5, Window: time.Minute, MinSamples: 10, Severity: "warning"}
	p := &populations{vals: []float64{0.2, 0.2, 0.9}, pops: []int{4, 12, 12}}
	e, err := New([]Rule{r}, p)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for i := range p.vals {
		e.Tick(t0.Add(time.Duration(i) * 5 * time.Second))
		states = append(states, e.Verdicts()[0].State)
	}
	if got := strings.Join(states, " "); got != "no_data firing ok" {
		t.Fatalf("states %s", got)
	}
	v := e.Verdicts()[0]
	if v.Samples != 12 || v.Value != 0.9 {
		t.Errorf("verdict %+v", v)
	}
	e, _ = New([]Rule{r}, &populations{vals: []float64{0.2}, pops: []int{4}})
	e.Tick(t0)
	if v := e.Verdicts()[0]; v.Why != "4 call attempts with a final response in the window, fewer than the population guard 10" {
		t.Errorf("why %q", v.Why)
	}
}

// TestRegFailuresTotalNeverRestarts: the registration table's failure
// total goes down only when rows leave it at its bound: no increase, not
// a restart counting the new total again.
func TestRegFailuresTotalNeverRestarts(t *testing.T) {
	r := Rule{Name: "reg", Kind: KindRegFailures, Op: Above, Value: 0, Window: time.Minute, Severity: "info"}
	states, _, e := run(t, r, &script{vals: []float64{7, 7, 3, 4}}, 4)
	if got := strings.Join(states, " "); got != "no_data ok ok firing" || e.Verdicts()[0].Value != 1 {
		t.Fatalf("states %s verdict %+v", got, e.Verdicts()[0])
	}
}

func TestCheckNamesTheSIPFault(t *testing.T) {
	good := map[string]Rule{
		KindSIPASR:      {Kind: KindSIPASR, Group: "dst_ip", Key: "192.0.2.1"},
		KindSIPPDD:      {Kind: KindSIPPDD, Percentile: 95},
		KindMOSShare:    {Kind: KindMOSShare, Band: "many dissatisfied"},
		KindRegFailures: {Kind: KindRegFailures, AoR: "@pbx.example.com"},
		KindSIPSecurity: {Kind: KindSIPSecurity, Finding: "register_flood"},
	}
	base := func(kind string) Rule {
		r := good[kind]
		r.Name, r.Op, r.Window, r.Severity = "a", Above, time.Minute, "info"
		return r
	}
	for kind := range good {
		if err := base(kind).Check(); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
	}
	for _, c := range []struct {
		kind string
		mod  func(*Rule)
		want string
	}{
		{KindSIPASR, func(r *Rule) { r.Group = "trunk" }, `group "trunk": want one of [method`},
		{KindSIPASR, func(r *Rule) { r.Key = "" }, "group dst_ip needs a key"},
		{KindSIPASR, func(r *Rule) { r.Group = "" }, `key "192.0.2.1" needs a group`},
		{KindSIPASR, func(r *Rule) { r.Value = 50 }, "value 50: kind sip_asr is a ratio, want 0 to 1"},
		{KindSIPASR, func(r *Rule) { r.Percentile = 50 }, "kind sip_asr takes no percentile"},
		{KindSIPASR, func(r *Rule) { r.Port = "span0" }, "takes no port"},
		{KindSIPPDD, func(r *Rule) { r.Percentile = 90 }, "percentile 90: want one of [50 95]"},
		{KindMOSShare, func(r *Rule) { r.Band = "poor" }, `band "poor": want one of ["very satisfied"`},
		{KindMOSShare, func(r *Rule) { r.Group, r.Key = "dst_ip", "x" }, "kind mos_share takes no group"},
		{KindRegFailures, func(r *Rule) { r.Finding = "register_flood" }, "kind sip_reg_failures takes no finding"},
		{KindSIPSecurity, func(r *Rule) { r.Finding = "ddos" }, `finding "ddos": want one of [scanner_user_agent`},
		{KindSIPSecurity, func(r *Rule) { r.AoR = "x" }, "kind sip_security takes no aor"},
		{KindSIPSecurity, func(r *Rule) { r.Band = "satisfied" }, "kind sip_security takes no band"},
	} {
		r := base(c.kind)
		c.mod(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", r, err, c.want)
		}
	}
	if err := (Rule{Name: "b", Kind: KindDiskFree, Op: Below, Window: time.Minute, Severity: "info", Group: "dst_ip"}).Check(); err == nil ||
		!strings.Contains(err.Error(), "kind disk_free takes no group") {
		t.Errorf("disk_free with a group: %v", err)
	}
}
