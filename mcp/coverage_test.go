package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fieldtap/services/budget"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
)

// TestEveryToolSaysWhatItReads: a tool either names the captured data
// its answers read, so the adapter adds their coverage, or says it reads
// none; a tool that says neither would answer with no coverage block and
// no one would notice. Its output schema offers coverage exactly when it
// reads captured data.
func TestEveryToolSaysWhatItReads(t *testing.T) {
	for bundle, infos := range allInfos(t) {
		for _, i := range infos {
			if i.reads == 0 {
				t.Errorf("%s (%s): reads is not set: name the families its answers read, or readsNothing", i.name, bundle)
				continue
			}
			if i.reads&readsNothing != 0 && i.reads != readsNothing {
				t.Errorf("%s: reads both nothing and %v", i.name, i.reads.Names())
			}
			offers := strings.Contains(string(i.output()), `"coverage"`)
			if offers != (i.reads != readsNothing) {
				t.Errorf("%s: output schema offers coverage %v, reads %v", i.name, offers, i.reads.Names())
			}
		}
	}
}

// coverageDeps is a box with one SPAN port whose dialog store evicted
// most of what it saw, and that lost frames at a known time.
func coverageDeps(t *testing.T) Deps {
	t.Helper()
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	last := t0.Add(time.Hour)
	oldest := t0.Add(50 * time.Minute)
	st := []ports.Status{{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateCapturing, LastTime: &last,
		Losses: []ports.Loss{{At: t0.Add(55 * time.Minute), Cause: "kernel", N: 12}}}}
	uses := []budget.Use{{Store: budget.SIPDialogs, Items: 7174, Evicted: 92826, Oldest: &oldest, EvictedTo: oldest.Add(-time.Second)}}
	d := withPorts(testDeps(), fakePorts(st))
	d.Coverage = func(q coverage.Query) coverage.Report {
		return coverage.Build(q, coverage.Inputs{Ports: st, Stores: uses})
	}
	return d
}

// TestCoverageRidesEveryReadingAnswer: the adapter, not the tool, adds
// the block and its warnings; a tool that reads nothing gets neither.
func TestCoverageRidesEveryReadingAnswer(t *testing.T) {
	type out struct {
		N int `json:"n"`
	}
	reading := tool[noArgs, out]{name: "reading", desc: "x", hints: readOnly(), reads: readsSIP,
		run: func(*call, noArgs) (out, error) { return out{N: 7174}, nil }}
	quiet := tool[noArgs, out]{name: "quiet", desc: "x", hints: readOnly(), reads: readsNothing,
		run: func(*call, noArgs) (out, error) { return out{}, nil }}
	s := testServer(t, coverageDeps(t), reading, quiet)

	var env struct {
		Coverage *coverageBlock `json:"coverage"`
		Warnings []string       `json:"warnings"`
	}
	r, _ := callTool(t, s, "reading", map[string]any{})
	if err := json.Unmarshal([]byte(r.Content[0].Text), &env); err != nil {
		t.Fatal(err)
	}
	c := env.Coverage
	if c == nil || c.Complete {
		t.Fatalf("coverage = %+v, want an incomplete block", c)
	}
	if len(c.Stores) != 1 || c.Stores[0].Seen != 100000 || c.Stores[0].Held != 7174 || c.Stores[0].Evicted != 92826 {
		t.Errorf("stores = %+v, want sip_dialogs seen 100000 = held 7174 + evicted 92826", c.Stores)
	}
	if len(c.Ports) != 1 || c.Ports[0].Lost["kernel"] != 12 || c.Ports[0].State != ports.StateCapturing {
		t.Errorf("ports = %+v, want span0 capturing with 12 kernel losses", c.Ports)
	}
	if c.Window.From == nil || !c.Window.From.Equal(time.Date(2026, 1, 5, 9, 50, 0, 0, time.UTC)) {
		t.Errorf("window from %v, want the oldest dialog held", c.Window.From)
	}
	joined := strings.Join(env.Warnings, "\n")
	for _, want := range []string{"evicted 92826 of 100000 dialogs", "93 %", "memory_limit_mib", "find_in_captures", "lost 12 frames"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings do not say %q:\n%s", want, joined)
		}
	}

	r, _ = callTool(t, s, "quiet", map[string]any{})
	if strings.Contains(r.Content[0].Text, `"coverage"`) {
		t.Errorf("a tool that reads nothing carries coverage: %s", r.Content[0].Text)
	}
}
