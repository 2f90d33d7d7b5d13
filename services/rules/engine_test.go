package rules

import (
	"strings"
	"testing"
	"time"
)

// script reads the next value each tick; NaN-free: ok false where skip.
type script struct {
	vals []float64
	skip map[int]bool
	i    int
}

func (s *script) Read(Rule, time.Time) Reading {
	i := s.i
	s.i++
	if s.skip[i] || i >= len(s.vals) {
		return Reading{Why: "figure missing"}
	}
	return Reading{OK: true, Value: s.vals[i], Evidence: Evidence{Tool: "t", Figures: map[string]float64{"v": s.vals[i]}}}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func run(t *testing.T, r Rule, s *script, ticks int) ([]string, []Transition, *Engine) {
	t.Helper()
	e, err := New([]Rule{r}, s)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	var trs []Transition
	for i := range ticks {
		trs = append(trs, e.Tick(t0.Add(time.Duration(i)*5*time.Second))...)
		states = append(states, e.Verdicts()[0].State)
	}
	return states, trs, e
}

func TestEngineLevelForAndRecovery(t *testing.T) {
	r := Rule{Name: "load", Kind: KindBusLoad, Port: "can0", Op: Above, Value: 0.8, Window: 30 * time.Second, For: 10 * time.Second, Severity: "warning"}
	s := &script{vals: []float64{0.5, 0.9, 0.9, 0.9, 0.9, 0.4}}
	states, trs, e := run(t, r, s, 6)
	want := "ok pending pending firing firing ok"
	if got := strings.Join(states, " "); got != want {
		t.Fatalf("states %s, want %s", got, want)
	}
	// no_data→ok, ok→pending, pending→firing, firing→ok
	if len(trs) != 4 || trs[2].To != StateFiring || !trs[2].At.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("transitions %+v", trs)
	}
	v := e.Verdicts()[0]
	if v.Transitions != 4 || v.Value != 0.4 || !v.HasValue || v.Evidence.Figures["v"] != 0.4 {
		t.Fatalf("verdict %+v", v)
	}
}

func TestEngineCounterIncreaseOverWindow(t *testing.T) {
	// Drops total: 0, 0, 5, 5, 5, 5, 5, 5, 5; window 20 s holds 5 samples
	// plus the one before it, so the 5 drops leave it after 20 s.
	r := Rule{Name: "drops", Kind: KindPortDrops, Port: "span0", Op: Above, Value: 0, Window: 20 * time.Second, Severity: "critical"}
	s := &script{vals: []float64{0, 0, 5, 5, 5, 5, 5, 5, 5}}
	states, _, e := run(t, r, s, 9)
	want := "no_data ok firing firing firing firing firing ok ok"
	if got := strings.Join(states, " "); got != want {
		t.Fatalf("states %s, want %s", got, want)
	}
	if v := e.Verdicts()[0]; v.Value != 0 || v.Samples != 6 {
		t.Fatalf("verdict %+v", v)
	}
}

func TestEngineCounterRestart(t *testing.T) {
	r := Rule{Name: "gaps", Kind: KindRecGaps, Op: Above, Value: 2, Window: time.Minute, Severity: "info"}
	s := &script{vals: []float64{4, 5, 1}} // restarted at 1: 1 + 1 = 2 in the window, not above
	states, _, e := run(t, r, s, 3)
	if states[2] != StateOK || e.Verdicts()[0].Value != 2 {
		t.Fatalf("states %v verdict %+v", states, e.Verdicts()[0])
	}
}

func TestEnginePopulationGuard(t *testing.T) {
	r := Rule{Name: "free", Kind: KindDiskFree, Op: Below, Value: 100, Window: 12 * time.Second, MinSamples: 3, Severity: "critical"}
	// Samples at 0,5,10 s fill the guard; 15 s is missing so only 10 s
	// and 5 s... the window (12 s) holds 5 s and 10 s: no_data again.
	s := &script{vals: []float64{50, 50, 50, 50}, skip: map[int]bool{3: true}}
	states, _, e := run(t, r, s, 4)
	want := "no_data no_data firing no_data"
	if got := strings.Join(states, " "); got != want {
		t.Fatalf("states %s, want %s", got, want)
	}
	if v := e.Verdicts()[0]; v.Why != "figure missing" || v.HasValue {
		t.Fatalf("verdict %+v", v)
	}
}

func TestEngineTrimsAtMaxSamples(t *testing.T) {
	r := Rule{Name: "free", Kind: KindDiskFree, Op: Below, Value: 1, Window: time.Hour, Severity: "info"}
	vals := make([]float64, MaxSamples+10)
	e, err := New([]Rule{r}, &script{vals: vals})
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		e.Tick(t0.Add(time.Duration(i) * time.Second))
	}
	if v := e.Verdicts()[0]; v.Samples != MaxSamples || v.Trimmed != 10 {
		t.Fatalf("samples %d trimmed %d", v.Samples, v.Trimmed)
	}
}

func TestCheckNamesTheFault(t *testing.T) {
	good := Rule{Name: "a", Kind: KindBusLoad, Port: "can0", Op: Above, Value: 1, Window: time.Minute, Severity: "info"}
	for _, c := range []struct {
		mod  func(*Rule)
		want string
	}{
		{func(r *Rule) { r.Name = "A b" }, "name"},
		{func(r *Rule) { r.Kind = "asr" }, `kind "asr"`},
		{func(r *Rule) { r.Port = "" }, "needs a port"},
		{func(r *Rule) { r.Op = "=" }, `op "="`},
		{func(r *Rule) { r.Window = 0 }, "window 0s"},
		{func(r *Rule) { r.For = -time.Second }, "for -1s"},
		{func(r *Rule) { r.Severity = "page" }, `severity "page"`},
		{func(r *Rule) { r.MinSamples = -1 }, "min_samples -1"},
		{func(r *Rule) { r.Kind, r.Port = KindDiskFree, "can0" }, "takes no port"},
		{func(r *Rule) { r.Kind, r.Port = KindJ1587, "j1708" }, "takes no port"},
		{func(r *Rule) { r.Code = 5 }, "takes no code"},
	} {
		r := good
		c.mod(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", r, err, c.want)
		}
	}
	if err := CheckAll([]Rule{good, good}); err == nil || !strings.Contains(err.Error(), "name used twice") {
		t.Errorf("duplicate: %v", err)
	}
	if err := good.Check(); err != nil {
		t.Error(err)
	}
}

// TestEngineHistoryKeepsTheNewestChanges: every change is kept in order
// with its value and evidence until HistoryLen, then the oldest are let
// go and counted by the first kept number.
func TestEngineHistoryKeepsTheNewestChanges(t *testing.T) {
	r := Rule{Name: "load", Kind: KindBusLoad, Port: "can0", Op: Above, Value: 0.8, Window: 30 * time.Second, Severity: "warning"}
	// 0.9, 0.1, 0.9, 0.1, … flaps every tick: no_data→firing, then one
	// change per tick.
	const ticks = HistoryLen + 10
	vals := make([]float64, ticks)
	for i := range vals {
		vals[i] = 0.1
		if i%2 == 0 {
			vals[i] = 0.9
		}
	}
	_, trs, e := run(t, r, &script{vals: vals}, 3)
	h := e.History()
	if h.FirstSeq() != 0 || h.EndSeq() != 3 || h.Len() != len(trs) {
		t.Fatalf("history %d..%d, %d changes returned", h.FirstSeq(), h.EndSeq(), len(trs))
	}
	first, _ := h.Get(0)
	second, _ := h.Get(1)
	if first.From != StateNoData || first.To != StateFiring || !first.At.Equal(t0) || first.Verdict.Value != 0.9 || first.Verdict.Evidence.Figures["v"] != 0.9 ||
		second.From != StateFiring || second.To != StateOK || second.Verdict.Value != 0.1 {
		t.Fatalf("history starts %+v, %+v", first, second)
	}
	e, err := New([]Rule{r}, &script{vals: vals})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ticks {
		e.Tick(t0.Add(time.Duration(i) * 5 * time.Second))
	}
	h = e.History()
	if h.FirstSeq() != ticks-HistoryLen || h.EndSeq() != ticks || h.Len() != HistoryLen {
		t.Fatalf("full history %d..%d (%d kept), want %d let go of %d", h.FirstSeq(), h.EndSeq(), h.Len(), ticks-HistoryLen, ticks)
	}
	last, _ := h.Get(ticks - 1)
	if !last.At.Equal(t0.Add(time.Duration(ticks-1)*5*time.Second)) || last.To != StateOK {
		t.Fatalf("newest change %+v", last)
	}
}
