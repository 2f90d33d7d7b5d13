package statuspage

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/services/ports"
	"fieldtap/services/transmit"
)

var update = flag.Bool("update", false, "rewrite testdata/page_*.html from the renderer")

// pageCases are Status values that between them take every branch of
// the page: each optional value present and absent, every list empty
// and full, and operator or wire text that needs escaping.
func pageCases() map[string]Status {
	f := func(v float64) *float64 { return &v }
	u := func(v uint64) *uint64 { return &v }
	b := func(v bool) *bool { return &v }
	i := func(v int) *int { return &v }
	i64 := func(v int64) *int64 { return &v }
	tm := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	load := LoadSeries{Port: `can<0>&"x"`, End: t0, BinS: 60, PeakMax: 0.62,
		Bins: []LoadBin{{Start: t0.Add(-3 * time.Minute)}, {Start: t0.Add(-2 * time.Minute), Mean: f(0.3), Peak: f(0.62)},
			{Start: t0.Add(-time.Minute), Mean: f(0.2), Peak: f(0.4)}, {Start: t0}, {Start: t0, Mean: f(0.1), Peak: f(0.1)}}}
	full := Status{
		Generated: t0,
		Box:       Box{Version: `v1.2-3-gabc "dev" <x> & 'y'`, Board: "sim<b>", UptimeS: 3725},
		Transmit: TransmitView{
			KeySwitch: ports.Arm{On: true, Input: ports.ArmInputGPIO, Where: "gpiochip0:17", Changes: 4},
			ArmedLED:  b(true), Available: true, Armed: true, PlansPending: 2, ConfirmationsPending: 1,
			EnabledPorts: []string{"can0", "can<1>"}, CanSendNow: []string{"can0"}, Sending: "can send on can0",
			Recent: []transmit.Recent{{Time: t0.Add(-time.Minute).In(time.FixedZone("X", 3600)), Port: "can0", Event: "refused", Gate: "arm", Sent: 0},
				{Time: t0, Port: "can0", Event: "sent", Sent: 3}},
		},
		Ports: []PortView{
			{Name: "can0", Kind: "can", Live: true, State: ports.StateCapturing, StateSince: tm(-time.Hour), Frames: 1200,
				FramesPerS: f(250.04), LastFrameAgeS: f(1.25), Drops: map[string]uint64{"kernel": 3, "handoff_full": 0, "a&b": 2},
				DropsTotal: 5, DropsLastMinute: u(2), Restarts: u(1), StoppedEarly: `bus-off <"hard">`, StoreUse: 0.4567, StoreEvicted: 10},
			{Name: "file1", Kind: "ethernet", State: ports.StateEnded, Frames: 40, FramesPerSReason: "no basis",
				LastFrameAgeReason: "a file's clock is the file's", DropsLastMinuteReason: "file", RestartsReason: "file"},
		},
		BusLoad: []LoadSeries{load},
		Faults: FaultsView{
			J1939: []J1939Fault{{Port: "can0", SA: 0, SAName: "Engine #1", SPN: 110, FMI: 0, OC: 3, Lamps: []string{"amber_warning", "mil"}},
				{Port: "can1", SA: 0xF9, SAName: "Off-board <diag>", SPN: 520192, FMI: 31, OC: 127}},
			J1587: []J1587Fault{{MID: 128, MIDName: "Engine #1", Code: 110, CodeName: "Coolant", FMI: 3, Count: i(2)},
				{MID: 136, MIDName: "Brakes", Code: 2, IsSID: true, CodeName: "SID & <2>", FMI: 12}},
		},
		VoIP: &VoIPView{Calls: 12, Active: 2, Attempts: 10, Answered: 7, ASR: f(0.7),
			MOS: MOSHistogram{Bands: []MOSBand{{Label: "very satisfied", Min: 4.34, Max: 5}, {Label: "satisfied <", Min: 4.03, Max: 4.34, Streams: 3}},
				Streams: 3, NotGrounded: 1},
			OneWay: []string{`call-1@"host"`, "call-2<x>"}, OneWayCount: 5},
		Recorder: &RecorderView{State: "ram_only", Reason: "disk <full>", Dir: "/data/&rec", UsedBytes: 1536, LimitBytes: 3 << 30,
			FreeBytes: i64(1 << 20), Segments: 4, Oldest: tm(-2 * time.Hour), Newest: tm(-time.Minute), WriteErrors: 2, GapsTotal: 9,
			Gaps: []Gap{{Start: t0.Add(-time.Hour), End: tm(-50 * time.Minute), Reason: "write <error>"}, {Start: t0.Add(-time.Minute), Reason: "disk full"}}},
		Rules: &RulesView{Firing: []RuleFiring{{Name: "span-silent", Severity: "critical", Kind: "port_silent", Port: "span<0>", Since: t0.Add(-90 * time.Second), Value: 1},
			{Name: "can0-load", Severity: "warning", Kind: "bus_load", Since: t0.Add(-time.Hour), Value: 0.8123}}, Pending: 1, OK: 3, NoData: 2},
	}
	bare := Status{
		Generated: t0.In(time.FixedZone("Y", -7200)),
		Box:       Box{Version: "dev", Board: "sim"},
		Transmit: TransmitView{KeySwitch: ports.Arm{Input: ports.ArmInputNone, Where: "no arm input <configured>"},
			ArmedLEDReason: "no LED & none", Reason: "no transmitter <configured>", Sending: "no port can send"},
		Faults:         FaultsView{J1939Reason: "no CAN <port>", J1587Reason: "no J1708 & port"},
		VoIPReason:     "no SPAN <port>",
		RecorderReason: "recorder off & <why>",
		RulesReason:    "no [[rule]] <configured>",
	}
	empty := Status{
		Generated: t0,
		Box:       Box{Version: "dev", Board: "sim"},
		Transmit: TransmitView{KeySwitch: ports.Arm{Input: ports.ArmInputFile, Where: "/run/arm"}, ArmedLED: b(false),
			Available: true, Sending: "no port can send"},
		Ports:    []PortView{{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateSilent, FramesPerS: f(0), LastFrameAgeS: f(0), DropsLastMinute: u(0), Restarts: u(0), Drops: map[string]uint64{"kernel": 0}}},
		Faults:   FaultsView{},
		VoIP:     &VoIPView{ASRReason: "no attempt <yet>", MOS: MOSHistogram{Bands: []MOSBand{{Label: "poor", Min: 1, Max: 3.1}}}},
		Recorder: &RecorderView{State: "recording", Dir: "/data", Segments: 0},
		Rules:    &RulesView{Firing: []RuleFiring{}, OK: 1},
	}
	return map[string]Status{"full": full, "bare": bare, "empty": empty}
}

// TestPageGolden renders every case against testdata/page_<case>.html,
// first written by the html/template renderer the page had before.
func TestPageGolden(t *testing.T) {
	for name, st := range pageCases() {
		t.Run(name, func(t *testing.T) {
			got := renderPage(t, st)
			path := filepath.Join("testdata", "page_"+name+".html")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range max(len(gl), len(wl)) {
					if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
						var g, w string
						if i < len(gl) {
							g = gl[i]
						}
						if i < len(wl) {
							w = wl[i]
						}
						t.Fatalf("line %d:\n got %s\nwant %s", i+1, g, w)
					}
				}
			}
		})
	}
}
