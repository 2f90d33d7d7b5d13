package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

type countWriter struct{ n atomic.Int64 }

func (w *countWriter) WriteFrame(context.Context, uint32, []byte) error { w.n.Add(1); return nil }

type on struct{}

func (on) Armed() bool { return true }

type okAudit struct{}

func (okAudit) Record(context.Context, transmit.Record) error { return nil }

// vinPlanFile writes what an agent would save from a j1939_request dry run.
func vinPlanFile(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	svc, _ := transmit.New(transmit.Options{Ports: []transmit.Port{{Name: "can0", Medium: transmit.MediumCAN, Bitrate: 250_000}}})
	sp, _ := transmit.J1939Request{Port: "can0", PGN: 65260, Destination: 0, Source: 0xF9, Priority: 6}.Spec()
	p, err := svc.Plan(context.Background(), transmit.Caller{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"ok": true, "data": map[string]any{"plan": p}})
	if edit != nil {
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m["data"].(map[string]any)["plan"].(map[string]any))
		b, _ = json.Marshal(m)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(path, b, 0o600)
	return path
}

func TestPlanShow(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"plan", "show", vinPlanFile(t, nil)}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "18EA00F9 [3] EC FE 00") || strings.Contains(out.String(), "WARNING") {
		t.Errorf("show:\n%s", out.String())
	}
	edited := vinPlanFile(t, func(p map[string]any) { p["frames"].([]any)[0].(map[string]any)["data"] = "D3FE00" })
	out.Reset()
	run([]string{"plan", "show", edited}, &out, &errb)
	if !strings.Contains(out.String(), "WARNING") || !strings.Contains(out.String(), "risk: erase") {
		t.Errorf("an edited DM11 plan must warn and read as erase:\n%s", out.String())
	}
}

func TestPlanRunAsksOnTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		sent         int64
		code         int
	}{
		{"yes", "y\n", 1, exitOK},
		{"no", "n\n", 0, exitFail},
		{"empty", "\n", 0, exitFail},
		{"eof", "", 0, exitFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &countWriter{}
			pf, _ := readPlanFile(vinPlanFile(t, nil))
			o := transmit.Options{Ports: []transmit.Port{{Name: "can0", Medium: transmit.MediumCAN, Transmit: true, Writer: w}}, Arm: on{}, Audit: okAudit{}}
			var out, errb bytes.Buffer
			code := runWith(o, pf, strings.NewReader(tc.answer), &out, &errb)
			if code != tc.code || w.n.Load() != tc.sent {
				t.Fatalf("exit %d, sent %d\n%s%s", code, w.n.Load(), out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "send? [y/N]") {
				t.Error("no question asked")
			}
		})
	}
}

func TestPlanRunRefusesEditedPlan(t *testing.T) {
	w := &countWriter{}
	pf, _ := readPlanFile(vinPlanFile(t, func(p map[string]any) { p["frames"].([]any)[0].(map[string]any)["data"] = "D3FE00" }))
	o := transmit.Options{Ports: []transmit.Port{{Name: "can0", Medium: transmit.MediumCAN, Transmit: true, Writer: w}}, Arm: on{}, Audit: okAudit{}}
	var out, errb bytes.Buffer
	if code := runWith(o, pf, strings.NewReader("y\n"), &out, &errb); code != exitFail || w.n.Load() != 0 {
		t.Fatalf("exit %d sent %d", code, w.n.Load())
	}
}

// TestPlanRunFromConfig: with the box's configuration and no transmit
// writer in this build, the gatekeeper refuses naming port_config.
func TestPlanRunFromConfig(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fieldtap.toml")
	os.WriteFile(cfgPath, []byte("board = \"sim\"\n[transmit]\narm_file = \""+filepath.Join(dir, "arm")+"\"\naudit_file = \""+filepath.Join(dir, "audit.jsonl")+"\"\n[[port]]\nname = \"can0\"\ndriver = \"slcan\"\ndevice = \"/dev/ttyACM9\"\ntransmit = true\n"), 0o600)
	if _, err := config.Load(cfgPath); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"plan", "run", vinPlanFile(t, nil), "--port", "can0", "--config", cfgPath}, &out, &errb)
	if code != exitFail || !strings.Contains(errb.String(), "gate port_config") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), `transmit_execute {"plan_id": "tx-`) || !strings.Contains(errb.String(), "fieldtapd owns the port") {
		t.Errorf("the refusal does not say how to send through the box:\n%s", errb.String())
	}
	audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(audit), `"gate":"port_config"`) {
		t.Errorf("audit: %s", audit)
	}
}

// TestPlanRunPrintsNextSteps runs a plan for the sim board's can0,
// disarmed and without an audit file: the refusal is followed by one next
// step per refusing gate, each naming what works on the sim board (its
// arm file, its sim_ports), none a [[port]] table.
func TestPlanRunPrintsNextSteps(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fieldtap.toml")
	armFile := filepath.Join(dir, "arm")
	os.WriteFile(cfgPath, []byte("board = \"sim\"\n[transmit]\narm_file = \""+armFile+"\"\n"), 0o600)
	var out, errb bytes.Buffer
	code := run([]string{"plan", "run", vinPlanFile(t, nil), "--port", "can0", "--config", cfgPath}, &out, &errb)
	t.Logf("stderr:\n%s", errb.String())
	if code != exitFail || !strings.Contains(errb.String(), "refused by gate port_config") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_, steps, ok := strings.Cut(errb.String(), "next steps:\n")
	if !ok {
		t.Fatalf("no next steps:\n%s", errb.String())
	}
	for _, want := range []string{"port_config: add it to [transmit] sim_ports", "arm: arm the sim board: write \"armed\" into its arm file " + armFile, "audit: set [transmit] audit_file"} {
		if !strings.Contains(steps, want) {
			t.Errorf("next steps lack %q:\n%s", want, steps)
		}
	}
	if strings.Contains(errb.String(), "[[port]]") {
		t.Errorf("a sim board hint names a [[port]] table:\n%s", errb.String())
	}
}
