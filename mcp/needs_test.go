package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// clearers take one need's field out of a Deps.
var clearers = map[need]func(*Deps){
	needCAN:         func(d *Deps) { d.CAN = nil },
	needJ1939:       func(d *Deps) { d.J1939 = nil },
	needDBC:         func(d *Deps) { d.DBC = nil },
	needUDS:         func(d *Deps) { d.UDS = nil },
	needJ1587:       func(d *Deps) { d.J1587 = nil },
	needSIP:         func(d *Deps) { d.SIP = nil },
	needSIPStats:    func(d *Deps) { d.SIPStats = nil },
	needSIPExport:   func(d *Deps) { d.SIPExport = nil },
	needMedia:       func(d *Deps) { d.Media = nil },
	needTransmit:    func(d *Deps) { d.Transmit = nil },
	needCaptures:    func(d *Deps) { d.BlackBox.Captures = nil },
	needFileCatalog: func(d *Deps) { d.BlackBox.Files = nil },
	needPorts:       func(d *Deps) { d.Ports = nil },
	needSource:      func(d *Deps) { d.Source = nil },
	needLog:         func(d *Deps) { d.Log = nil },
	needCoverage:    func(d *Deps) { d.Coverage = nil },
	needFiles:       func(d *Deps) { d.Files = nil },
	needTrunk:       func(d *Deps) { d.Trunk = nil },
	needMarks:       func(d *Deps) { d.Marks = nil },
}

// TestEveryNeedHasAClearer keeps the table above whole: a need added to
// depsFields without one would go untested below.
func TestEveryNeedHasAClearer(t *testing.T) {
	for _, f := range depsFields {
		if clearers[f.need] == nil {
			t.Errorf("no clearer for Deps.%s", f.field)
		}
	}
}

// TestNewServerRefusesAMissingNeed: taking away any field a loaded
// bundle needs, or a box-wide one, makes NewServer fail naming the field
// (and the bundle), where it used to answer UNAVAILABLE or panic on the
// first call.
func TestNewServerRefusesAMissingNeed(t *testing.T) {
	for _, f := range depsFields {
		d := fullDeps(t)
		clearers[f.need](&d)
		_, err := NewServer(d, Options{Bundles: BundleNames()})
		if err == nil || !strings.Contains(err.Error(), "Deps."+f.field) {
			t.Errorf("without Deps.%s: err = %v", f.field, err)
			continue
		}
		if needBox.has(f.need) {
			continue
		}
		for _, b := range allBundles() {
			if b.needs.has(f.need) {
				if _, err := NewServer(d, Options{Bundles: []string{b.name}}); err == nil || !strings.Contains(err.Error(), "bundle "+b.name) {
					t.Errorf("bundle %s without Deps.%s: err = %v", b.name, f.field, err)
				}
			}
		}
	}
}

// TestBundlesDeclareWhatTheyRead loads each bundle alone over a box
// holding SIP, RTP, J1939 and J1587 data but only the stores the bundle
// declares (and the box-wide fields), then calls each of its tools with
// no arguments and with the ids the data holds, and asks completion for
// every argument: a tool or server part that reads a store its bundle
// did not declare dereferences nil, which the recovery middleware turns
// into INTERNAL (or the completion panics).
func TestBundlesDeclareWhatTheyRead(t *testing.T) {
	held := map[string]any{"call_id": "call-1", "port": "can0", "pgn": 61444, "spn": 190, "sa": 0, "mid": 128, "pid": 84}
	for _, b := range allBundles() {
		d := newLiveBox(t).d
		full := fullDeps(t)
		d.DBC, d.UDS, d.SIPExport, d.Transmit, d.BlackBox.Captures, d.BlackBox.Files = full.DBC, full.UDS, full.SIPExport, full.Transmit, full.BlackBox.Captures, full.BlackBox.Files
		for n, clear := range clearers {
			if !(needBox | b.needs).has(n) {
				clear(&d)
			}
		}
		s, err := NewServer(d, Options{Bundles: []string{b.name}})
		if err != nil {
			t.Fatalf("bundle %s: %v", b.name, err)
		}
		for _, tool := range listTools(t, s) {
			var schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(tool.InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{}
			for name, v := range held {
				if _, ok := schema.Properties[name]; ok {
					args[name] = v
				}
			}
			for _, a := range []map[string]any{{}, args} {
				_, env := callTool(t, s, tool.Name, a)
				if errs, _ := env["errors"].([]any); len(errs) > 0 {
					if code, msg, _ := firstError(t, env); code == CodeInternal {
						t.Errorf("bundle %s, %s %v: %s", b.name, tool.Name, a, msg)
					}
				}
			}
		}
		for _, arg := range []string{"call_id", "stream_id", "port", "pgn", "spn", "sa", "mid", "pid", "plan_id"} {
			rpc(t, s, "completion/complete", map[string]any{
				"ref":      map[string]any{"type": "ref/resource", "uri": "fieldtap://live/dialogs/{call_id}"},
				"argument": map[string]any{"name": arg, "value": ""},
			})
		}
	}
}
