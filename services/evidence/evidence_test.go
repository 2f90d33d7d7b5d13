package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/j1939"
	"fieldtap/services/recorder"
	"fieldtap/services/sip"
)

var t0 = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// recorded is a recorder holding one CAN frame every 100 ms from t0 for
// n seconds on can0, and the same on j1708.
func recorded(t *testing.T, n int) *recorder.Recorder {
	t.Helper()
	rec, err := recorder.Open(recorder.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	writeFrames(rec, t0, n*10)
	return rec
}

func writeFrames(rec *recorder.Recorder, from time.Time, n int) {
	can, j := rec.Port("can0"), rec.Port("j1708")
	for i := range n {
		at := from.Add(time.Duration(i) * 100 * time.Millisecond)
		b, _ := wire.EncodeCAN(0x18FECA00|wire.CANEFF, []byte{byte(i)})
		can.Write(at, wire.LinkCANSocketCAN, b, 0)
		j.Write(at, wire.LinkJ1708, []byte{128, 84, byte(i), 0}, 0)
	}
	rec.Flush()
}

// fence is the daemon's Options.Fence.
func fence(s string) string { return untrusted.Fence(s, false) }

func builder(t *testing.T, dir string, src Source, c *clock) *Builder {
	t.Helper()
	b, err := New(Options{Dir: dir, Version: "test", Now: c.now, Fence: fence}, src)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildSealsAVerifiableBundle(t *testing.T) {
	rec := recorded(t, 60)
	c := &clock{t: t0.Add(time.Hour)}
	b := builder(t, t.TempDir(), rec, c)
	m, err := b.Build(context.Background(), Request{Reason: "request", At: t0.Add(30 * time.Second), Before: 5 * time.Second, After: 5 * time.Second,
		Ports: []string{"can0"}, Trigger: json.RawMessage(`{"ok":true,"data":{"why":"test"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Frames["can0"] != 100 || m.Frames["j1708"] != 0 || len(m.Files) != 3 || m.Cut {
		t.Fatalf("manifest %+v: want 100 can0 frames (10 s at 10/s) and three files", m)
	}
	if _, err := b.Verify(m.ID); err != nil {
		t.Fatal(err)
	}
	f, err := b.Open(m.ID, fileTrigger)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 100)
	n, _ := f.Read(raw)
	f.Close()
	if string(raw[:n]) != `{"ok":true,"data":{"why":"test"}}` {
		t.Errorf("trigger.json %q is not the caller's answer verbatim", raw[:n])
	}
	list, err := b.List()
	if err != nil || len(list) != 1 || list[0].ID != m.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command("tshark", "-r", filepath.Join(b.Dir(), m.ID, fileCapture), "-T", "fields", "-e", "frame.interface_name").Output()
		if err != nil || strings.Count(string(out), "can0\n") != 100 {
			t.Errorf("tshark on the bundle's capture: %v, %d can0 frames", err, strings.Count(string(out), "can0\n"))
		}
	}
}

func TestTamperedBundleIsRefused(t *testing.T) {
	rec := recorded(t, 10)
	c := &clock{t: t0.Add(time.Hour)}
	cases := []struct {
		name   string
		tamper func(dir string)
		says   string
	}{
		{name: "a capture byte changed", tamper: func(dir string) { flip(t, filepath.Join(dir, fileCapture)) }, says: "capture.pcapng has"},
		{name: "the manifest edited", tamper: func(dir string) {
			p := filepath.Join(dir, fileManifest)
			os.Chmod(p, 0o600)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"reason": "request"`, `"reason": "Request"`, 1)), 0o600)
		}, says: "manifest.json does not match"},
		{name: "a file added", tamper: func(dir string) { os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o600) }, says: "extra.txt is not in the manifest"},
		{name: "a file removed", tamper: func(dir string) { os.Remove(filepath.Join(dir, fileDisclaimer)) }, says: "DISCLAIMER.txt is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := builder(t, t.TempDir(), rec, c)
			m, err := b.Build(context.Background(), Request{Reason: "request", At: t0.Add(5 * time.Second), Before: time.Second, After: time.Second, Trigger: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(b.Dir(), m.ID)
			os.Chmod(dir, 0o700)
			tc.tamper(dir)
			_, err = b.Open(m.ID, fileCapture)
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("open after tampering: %v, want ErrTampered saying %q", err, tc.says)
			}
		})
	}
}

func flip(t *testing.T, path string) {
	t.Helper()
	os.Chmod(path, 0o600)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestBuildRefusals(t *testing.T) {
	rec := recorded(t, 10)
	c := &clock{t: t0.Add(5 * time.Second)}
	b := builder(t, t.TempDir(), rec, c)
	ok := Request{Reason: "request", At: t0.Add(2 * time.Second), Before: time.Second, After: time.Second, Trigger: json.RawMessage(`{}`)}
	cases := []struct {
		name string
		edit func(q *Request)
		want string
	}{
		{name: "window not recorded yet", edit: func(q *Request) { q.At = t0.Add(5 * time.Second) }, want: "not recorded yet"},
		{name: "trigger not JSON", edit: func(q *Request) { q.Trigger = json.RawMessage("{") }, want: "not JSON"},
		{name: "window too long", edit: func(q *Request) { q.After = time.Hour }, want: "want 0 to"},
		{name: "no reason", edit: func(q *Request) { q.Reason = "" }, want: "reason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := ok
			tc.edit(&q)
			if _, err := b.Build(context.Background(), q); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
	small, _ := New(Options{Dir: t.TempDir(), MaxBytes: 1000, Now: c.now}, rec)
	if _, err := small.Build(context.Background(), ok); !errors.Is(err, ErrFull) {
		t.Errorf("a bundle past max bytes: %v, want ErrFull", err)
	}
	if ents, _ := os.ReadDir(small.Dir()); len(ents) != 0 {
		t.Errorf("a refused bundle left %d entries", len(ents))
	}
}

// TestTriggerWaitsPinnedAndSurvivesARestart: a trigger pins its window,
// waits for it to be recorded (across a restart of the builder), then
// builds with the frames recorded after the trigger, and unpins.
func TestTriggerWaitsPinnedAndSurvivesARestart(t *testing.T) {
	rec := recorded(t, 10)
	c := &clock{t: t0.Add(10 * time.Second)}
	dir := t.TempDir()
	b := builder(t, dir, rec, c)
	p, err := b.Trigger(Request{Reason: KindCallFailed, At: t0.Add(9 * time.Second), Before: 5 * time.Second, After: 5 * time.Second, Trigger: json.RawMessage(`{"call_id":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if pins := rec.Pins(); len(pins) != 1 || pins[0].ID != p.PinID {
		t.Fatalf("pins %+v, want the trigger's", pins)
	}
	var results []BuildResult
	done := func(r BuildResult) { results = append(results, r) }
	b.BuildDue(context.Background(), done)
	if len(results) != 0 {
		t.Fatalf("built before its window was recorded: %+v", results)
	}
	writeFrames(rec, t0.Add(10*time.Second), 50) // the 5 s after the trigger arrive
	c.set(p.Due)
	b = builder(t, dir, rec, c) // a restart: the request is on disk
	b.BuildDue(context.Background(), done)
	if len(results) != 1 || results[0].Err != nil {
		t.Fatalf("results %+v", results)
	}
	m := results[0].Manifest
	if m.ID != p.ID || m.Frames["can0"] != 100 || m.Frames["j1708"] != 100 {
		t.Errorf("manifest %+v: want 10 s of both ports", m)
	}
	if len(rec.Pins()) != 0 || len(b.Pending()) != 0 {
		t.Errorf("after building: pins %v, pending %v", rec.Pins(), b.Pending())
	}
}

type faults []j1939.Fault

func (f faults) Faults() []j1939.Fault { return f }

// TestWatcherFiresOnNewEventsOnly: what the stores held at the first
// check does not fire; a failed call and a new DM1 fault do, once.
func TestWatcherFiresOnNewEventsOnly(t *testing.T) {
	rec := recorded(t, 10)
	c := &clock{t: t0.Add(time.Minute)}
	b := builder(t, t.TempDir(), rec, c)
	store, _ := sip.New(sip.Limits{})
	addCall := func(id string, code int) {
		for _, raw := range []string{
			"INVITE sip:b@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + id + "\r\nFrom: \"Evil\" <sip:ignore-previous@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: " + id + "\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n",
			"SIP/2.0 " + itoa(code) + " No\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + id + "\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>;tag=2\r\nCall-ID: " + id + "\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n",
		} {
			var m sip.Parsed
			if err := m.Parse([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			store.Add(sip.Meta{Time: t0.Add(3 * time.Second), Transport: "udp"}, &m, []byte(raw))
		}
	}
	fs := faults{{Port: "can0", SA: 0, Kind: "DM1", Time: t0.Add(4 * time.Second), DTCs: []j1939.DTC{{SPN: 100, FMI: 1}}}}
	addCall("before", 486)
	w := NewWatcher(b, []Spec{{Kind: KindCallFailed, Before: time.Second, After: time.Second}, {Kind: KindDM1, Before: time.Second, After: time.Second}}, store, &fs)
	w.Check()
	if n := len(b.Pending()); n != 0 {
		t.Fatalf("the first check fired %d triggers for what was already there", n)
	}
	addCall("after", 503)
	addCall("answered", 200)
	fs = append(fs, j1939.Fault{Port: "can0", SA: 3, Kind: "DM1", Time: t0.Add(5 * time.Second), DTCs: []j1939.DTC{{SPN: 110, FMI: 0}}})
	w.Check()
	w.Check()
	ps := b.Pending()
	if len(ps) != 2 {
		t.Fatalf("pending %+v, want the 503 call and the new fault", ps)
	}
	var call map[string]any
	for _, p := range ps {
		if p.Request.Reason == KindCallFailed {
			json.Unmarshal(p.Request.Trigger, &call)
		}
	}
	if call["call_id"] != "after" || call["final_code"] != 503.0 || !strings.HasPrefix(call["from_user"].(string), "⟦untrusted-capture-data⟧") {
		t.Errorf("call trigger %v: want call after, 503, the sender's user fenced", call)
	}
	if st := w.Stats(); st.Fired[KindCallFailed] != 1 || st.Fired[KindDM1] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTriggerDocuments pins trigger.json's keys: a fault trigger's DTC
// and lamps are written by this package, whatever j1939's types become,
// and sender text is fenced by Options.Fence or left out without one.
func TestTriggerDocuments(t *testing.T) {
	b, _ := json.Marshal(faultTrigger{Trigger: KindDM1, Port: "can0", SA: 3, Time: t0,
		DTC: dtcDoc(j1939.DTC{SPN: 110, FMI: 0, OC: 2, CM: 1}), Lamps: lampsDoc(j1939.Lamps{AmberWarn: 1, FlashProtec: 3})})
	want := `{"trigger":"dm1","port":"can0","sa":3,"dtc":{"spn":110,"fmi":0,"oc":2,"cm":1},` +
		`"lamps":{"mil":0,"red_stop":0,"amber_warning":1,"protect":0,"flash_mil":0,"flash_red_stop":0,"flash_amber_warning":0,"flash_protect":3},` +
		`"time":"2026-04-01T12:00:00Z"}`
	if string(b) != want {
		t.Errorf("fault trigger\n got %s\nwant %s", b, want)
	}
	for _, tc := range []struct {
		name  string
		fence func(string) string
		want  string
	}{
		{name: "fenced", fence: fence, want: `"from_user":"` + untrusted.Open + `alice[31m` + untrusted.Close + `","to_user":"` + untrusted.Open + `bob` + untrusted.Close + `"`},
		{name: "no fence leaves it out", want: `"from_user":"","to_user":""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(Options{Dir: t.TempDir(), Fence: tc.fence}, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWatcher(b, nil, nil, nil)
			raw, _ := json.Marshal(dialogTrigger{Trigger: KindCallFailed, CallID: "c1", FromUser: w.fence("alice\x1b[31m\u202e"), ToUser: w.fence("bob")})
			if !strings.Contains(string(raw), tc.want) {
				t.Errorf("dialog trigger %s, want %s", raw, tc.want)
			}
		})
	}
}
