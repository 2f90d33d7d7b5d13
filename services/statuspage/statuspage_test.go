package statuspage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/budget"
	"fieldtap/services/canbus"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
	"fieldtap/services/transmit"
)

// fakePorts is a registry with fixed answers.
type fakePorts struct {
	st  []ports.Status
	arm ports.Arm
}

func (f fakePorts) Snapshot() []ports.Status { return f.st }
func (f fakePorts) Arm() ports.Arm           { return f.arm }

type fakeTransmit struct {
	st transmit.Status
}

func (f fakeTransmit) Status(transmit.Owner) transmit.Status { return f.st }

type fakeRecorder struct{ st recorder.Status }

func (f fakeRecorder) Status() recorder.Status { return f.st }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// truck is a CAN store with 90 s of frames at a steady rate and a J1939
// store with one DM1 (SPN 110 FMI 0 OC 3, amber lamp) from SA 00.
func truck(t testing.TB) (*canbus.Store, *j1939.Store) {
	t.Helper()
	cs, _ := canbus.New(ring.Limits{Items: 10_000, Bytes: 1 << 20})
	p, err := cs.Port("can0", 250_000)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := j1939.New(j1939.Limits{})
	dm1 := []byte{0x04, 0xFF, 0x6E, 0x00, 0x00, 0x03, 0xFF, 0xFF}
	for i := range 90 * 10 { // 10 frames/s for 90 s
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		p.Add(at, 0x0CF00400|wire.CANEFF, make([]byte, 8))
		if i%10 == 0 {
			p.Add(at, 0x18FECA00|wire.CANEFF, dm1)
			js.Feed("can0", at, 0x18FECA00, true, dm1)
		}
	}
	return cs, js
}

func TestBuild(t *testing.T) {
	cs, js := truck(t)
	armed := true
	tests := []struct {
		name  string
		src   Sources
		check func(t *testing.T, st Status)
	}{{
		name: "armed box with a transmitter and a CAN port",
		src: Sources{
			Board: "sim", Started: t0.Add(-time.Minute),
			Ports: fakePorts{
				st:  []ports.Status{{Name: "can0", Kind: "can", Frames: 990, Drops: map[string]uint64{"handoff_full": 3}, Store: budget.Use{Store: "can_frames", Port: "can0", Items: 50, MaxItems: 100}}},
				arm: ports.Arm{On: true, Input: ports.ArmInputFile, Where: "/run/arm"},
			},
			ArmedLED: func() (bool, bool, string) { return armed, true, "" },
			Transmit: fakeTransmit{st: transmit.Status{Armed: true, Plans: 1, Confirmations: transmit.ConfirmStatus{Waiting: 2}, Ports: []transmit.PortStatus{
				{Port: "can0", Enabled: true, CanSend: true}, {Port: "can1"}}}},
			CAN: cs, J1939: js,
		},
		check: func(t *testing.T, st Status) {
			tv := st.Transmit
			if !tv.KeySwitch.On || !tv.Armed || tv.ArmedLED == nil || !*tv.ArmedLED || tv.PlansPending != 1 || tv.ConfirmationsPending != 2 {
				t.Errorf("transmit = %+v, want armed, LED on, 1 plan, 2 confirmations", tv)
			}
			if len(tv.EnabledPorts) != 1 || tv.EnabledPorts[0] != "can0" || len(tv.CanSendNow) != 1 {
				t.Errorf("enabled %v can send %v, want [can0] [can0]", tv.EnabledPorts, tv.CanSendNow)
			}
			if p := st.Ports[0]; p.DropsTotal != 3 || p.StoreUse != 0.5 || p.Restarts != nil || p.RestartsReason == "" {
				t.Errorf("port = %+v, want 3 drops, half full, no restarts with a reason", p)
			}
			if st.Box.UptimeS != 180 {
				t.Errorf("uptime %d s, want 180", st.Box.UptimeS)
			}
			if len(st.Faults.J1939) != 1 {
				t.Fatalf("J1939 faults %+v, want one", st.Faults.J1939)
			}
			f := st.Faults.J1939[0]
			if f.SA != 0 || f.SAName != "Engine #1" || f.SPN != 110 || f.FMI != 0 || f.OC != 3 || len(f.Lamps) != 1 || f.Lamps[0] != "amber_warning" {
				t.Errorf("fault = %+v, want Engine #1 SPN 110 FMI 0 OC 3 amber", f)
			}
			if st.Faults.J1587Reason == "" || st.VoIP != nil || st.VoIPReason == "" {
				t.Errorf("J1587 and VoIP should say why they are empty: %+v %q", st.Faults, st.VoIPReason)
			}
			if st.Recorder != nil || st.RecorderReason != "no recorder" {
				t.Errorf("recorder %+v %q, want none with a reason", st.Recorder, st.RecorderReason)
			}
		},
	}, {
		name: "the recorder off, and why",
		src:  Sources{NoRecorder: "recorder off (recorder.enabled is false; see docs/recorder.md)"},
		check: func(t *testing.T, st Status) {
			if st.Recorder != nil || st.RecorderReason != "recorder off (recorder.enabled is false; see docs/recorder.md)" {
				t.Errorf("recorder %+v %q, want none with the daemon's reason", st.Recorder, st.RecorderReason)
			}
		},
	}, {
		name: "no transmitter, no arm input, a recorder on a full disk",
		src:  Sources{Recorder: fakeRecorder{diskFull()}},
		check: func(t *testing.T, st Status) {
			if st.Transmit.Available || st.Transmit.Reason == "" || st.Transmit.KeySwitch.Input != ports.ArmInputNone || st.Transmit.ArmedLED != nil {
				t.Errorf("transmit = %+v, want unavailable with reasons", st.Transmit)
			}
			r := st.Recorder
			if r == nil || st.RecorderReason != "" {
				t.Fatalf("recorder = %+v %q", r, st.RecorderReason)
			}
			if r.State != recorder.StateRAMOnly || r.Reason == "" || r.UsedBytes != 10 || r.LimitBytes != 100 || r.FreeBytes == nil || *r.FreeBytes != 0 ||
				r.Segments != 2 || r.WriteErrors != 1 || r.GapsTotal != 7 {
				t.Errorf("recorder = %+v, want ram_only with its reason, bytes, free, segments, errors and gaps", r)
			}
			if len(r.Gaps) != recorderGaps || r.Gaps[0].Reason != "g2" || r.Gaps[recorderGaps-1].End != nil {
				t.Errorf("gaps %+v, want the newest %d, the last still open", r.Gaps, recorderGaps)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, Build(tc.src, t0.Add(2*time.Minute))) })
	}
}

// TestLoadSeries checks the bins against the frames fed: 10 frames/s of
// FrameBits(true, 8) bits plus one DM1 a second, on a 250 kbit/s bus.
func TestLoadSeries(t *testing.T) {
	cs, _ := truck(t)
	p := cs.Lookup("can0")
	perSecond := float64(11*canbus.FrameBits(true, 8)) / 250_000
	tests := []struct {
		name      string
		live      bool
		now       time.Time
		wantBins  int // bins with a basis
		wantFirst float64
	}{
		{name: "finished port ends at its last second", live: false, now: t0.Add(48 * time.Hour), wantBins: 2, wantFirst: perSecond},
		{name: "live port ends now", live: true, now: t0.Add(10 * time.Minute), wantBins: 11, wantFirst: perSecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls := loadSeries("can0", p.Seconds(), tc.live, tc.now)
			if len(ls.Bins) != loadBins {
				t.Fatalf("%d bins, want %d", len(ls.Bins), loadBins)
			}
			var with []LoadBin
			for _, b := range ls.Bins {
				if b.Mean != nil {
					with = append(with, b)
				}
			}
			if len(with) != tc.wantBins {
				t.Fatalf("%d bins with a basis, want %d", len(with), tc.wantBins)
			}
			if got := *with[0].Mean; got != round(tc.wantFirst) {
				t.Errorf("first bin mean %v, want %v", got, round(tc.wantFirst))
			}
			if tc.live && *with[len(with)-1].Mean != 0 {
				t.Errorf("a quiet minute of a live port reads %v, want 0", *with[len(with)-1].Mean)
			}
		})
	}
}

func TestLoadChart(t *testing.T) {
	v := 0.4
	ls := LoadSeries{Port: `<can&0>`, End: t0, Bins: []LoadBin{{}, {Mean: &v, Peak: &v}, {Mean: &v, Peak: &v}, {}, {Mean: &v, Peak: &v}}, PeakMax: v}
	svg := LoadChart(ls)
	for _, want := range []string{`<svg `, `&lt;can&amp;0&gt;`, `50%`, `<polyline`} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "<can&0>") || strings.Contains(svg, "<script") {
		t.Errorf("chart carries unescaped text or script:\n%s", svg)
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d polylines, want mean and peak", n)
	}
	if n := strings.Count(svg, "<circle"); n != 2 {
		t.Errorf("%d dots, want the lone last bin drawn for mean and peak", n)
	}
}

func TestHandler(t *testing.T) {
	src := Sources{Board: "sim", Ports: fakePorts{arm: ports.Arm{On: true, Input: ports.ArmInputFile, Where: "x"}}}
	h := Handler(src, func() time.Time { return t0 })
	tests := []struct {
		name, method, path string
		code               int
		ctype, body        string
	}{
		{name: "page", method: "GET", path: "/status", code: 200, ctype: "text/html; charset=utf-8", body: "TRANSMIT ARMED"},
		{name: "json", method: "GET", path: "/status.json", code: 200, ctype: "application/json", body: `"key_switch":{"on":true`},
		{name: "root redirects", method: "GET", path: "/", code: http.StatusFound},
		{name: "no writes", method: "POST", path: "/status", code: http.StatusMethodNotAllowed},
		{name: "nothing else", method: "GET", path: "/other", code: http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.code {
				t.Fatalf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.code)
			}
			if tc.ctype != "" && rec.Header().Get("Content-Type") != tc.ctype {
				t.Errorf("Content-Type %q, want %q", rec.Header().Get("Content-Type"), tc.ctype)
			}
			if tc.code == 200 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
				t.Errorf("no CSP: %v", rec.Header())
			}
			if !strings.Contains(rec.Body.String(), tc.body) {
				t.Errorf("body lacks %q:\n%s", tc.body, rec.Body.String())
			}
			if tc.path == "/status.json" && !json.Valid(bytes.TrimSpace(rec.Body.Bytes())) {
				t.Errorf("invalid JSON")
			}
		})
	}
}

// diskFull is a recorder that lost its disk: seven gaps, the newest open.
func diskFull() recorder.Status {
	free := int64(0)
	st := recorder.Status{State: recorder.StateRAMOnly, Reason: "disk full: frames are kept in RAM only", Dir: "/data",
		Bytes: 10, QuotaBytes: 100, FreeBytes: &free, Segments: 2, WriteErrors: 1, GapsTotal: 7}
	for i := range 7 {
		end := t0.Add(time.Duration(i+1) * time.Minute)
		st.Gaps = append(st.Gaps, recorder.Gap{Reason: fmt.Sprintf("g%d", i), From: t0.Add(time.Duration(i) * time.Minute), To: &end})
	}
	st.Gaps[6].To = nil
	return st
}

// TestRecorderOnThePage reads a real recorder, as the daemon passes it:
// the page and its JSON show it recording, with segments, the oldest
// frame (in the open segment: none is closed yet) and free space.
func TestRecorderOnThePage(t *testing.T) {
	r, err := recorder.Open(recorder.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Port("can0").Write(t0, wire.LinkCANSocketCAN, make([]byte, 16), 0)
	r.Flush()
	st := Build(Sources{Recorder: r}, t0)
	if v := st.Recorder; v == nil || v.State != recorder.StateRecording || v.Segments != 1 || v.UsedBytes == 0 || v.FreeBytes == nil || v.Newest == nil || v.Oldest == nil {
		t.Fatalf("recorder %+v (%q), want recording into one segment", v, st.RecorderReason)
	}
	html := renderPage(t, st)
	if !strings.Contains(html, `<td id="recorder-state" class="">recording`) || !strings.Contains(html, "free on disk") || strings.Contains(html, "no recorder") {
		t.Errorf("page's recorder section:\n%s", html[strings.Index(html, "<h2>Recorder"):])
	}

	html = renderPage(t, Build(Sources{Recorder: fakeRecorder{diskFull()}}, t0))
	if !strings.Contains(html, `<td id="recorder-state" class="warn">ram_only <small>disk full`) || !strings.Contains(html, "–now g6") {
		t.Errorf("a full disk's recorder section, want ram_only in red and the open gap:\n%s", html[strings.Index(html, "<h2>Recorder"):])
	}
}

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{n: 0, want: "0 B"}, {n: 1023, want: "1023 B"}, {n: 1536, want: "1.5 KiB"}, {n: 3 << 30, want: "3.0 GiB"}} {
		t.Run(tc.want, func(t *testing.T) {
			if got := humanBytes(tc.n); got != tc.want {
				t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

// renderPage is the page's HTML for st.
func renderPage(t *testing.T, st Status) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, st); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
