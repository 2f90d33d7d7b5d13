package mcp

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/auth"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/marks"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/tools/refdata"
)

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// vep1 is a VEP1 (PGN 65271) frame from SA 0 with SPN 168 at volts.
func vep1(at time.Time, volts float64) vehicleFrame {
	d := []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF}
	binary.LittleEndian.PutUint16(d[4:], uint16(volts/0.05+0.5))
	return vehicleFrame{t: at, id: 0x18FEF700 | wire.CANEFF, data: d}
}

// timelineTruck is the sim board's truck with its workshop session, a
// battery dip to 10 V at 20 s and back at 21 s, a burst of three error
// frames at 30 s and a bus-off at 31 s.
func timelineTruck(t *testing.T) (Deps, time.Time) {
	frames := simTruck(t)
	t0 := frames[0].t
	frames = append(frames, vep1(t0.Add(19*time.Second), 13.5), vep1(t0.Add(20*time.Second), 10), vep1(t0.Add(21*time.Second), 13.5))
	for i := range 3 {
		frames = append(frames, vehicleFrame{t: t0.Add(30*time.Second + time.Duration(i)*10*time.Millisecond), id: wire.CANERR | 0x4, data: make([]byte, 8)})
	}
	frames = append(frames, vehicleFrame{t: t0.Add(31 * time.Second), id: wire.CANERR | 0x40, data: make([]byte, 8)})
	slices.SortStableFunc(frames, func(a, b vehicleFrame) int { return a.t.Compare(b.t) })
	full := fullDeps(t)
	d := vehicleDeps(t, t.TempDir(), frames)
	d.J1587, d.SIP, d.Media, d.Transmit, d.Marks = full.J1587, full.SIP, full.Media, full.Transmit, full.Marks
	return d, t0
}

func kindsOf(rows []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range rows {
		out[r["kind"].(string)]++
	}
	return out
}

// TestWhatHappenedOnTheSimTruck: one ordered answer over the truck's
// minute; the counts come from the generator's scenario (two session
// controls per workshop pass) and the frames this test added.
func TestWhatHappenedOnTheSimTruck(t *testing.T) {
	d, t0 := timelineTruck(t)
	h := newHarnessOf(t, d, timelineTools...)
	env := h.ok("what_happened", map[string]any{"at": rfc(t0.Add(30 * time.Second)), "window": "±30s", "limit": MaxLimit})
	rows := items(env)
	k := kindsOf(rows)
	t.Logf("kinds in the minute: %v", k)
	if k[evUDSSession] != 2 || k[evVoltage] != 2 || k[evCANErrorFrames] != 1 || k[evBusOff] != 1 || k[evDTCActive] == 0 || k[evDTCPrevious] == 0 {
		t.Fatalf("kinds %v", k)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i]["time"].(string) < rows[i-1]["time"].(string) {
			t.Fatalf("row %d at %s is before row %d at %s", i, rows[i]["time"], i-1, rows[i-1]["time"])
		}
	}
	for _, r := range rows {
		det := r["detail"].(map[string]any)
		switch r["kind"] {
		case evCANErrorFrames:
			if !strings.HasPrefix(r["summary"].(string), "3 error frames") || det["tool"] != "can_frames" {
				t.Errorf("error burst %v", r)
			}
		case evVoltage:
			if det["tool"] != "j1939_spn" || r["clock"] != "live" || r["port"] != "can0" {
				t.Errorf("voltage row %v", r)
			}
		case evUDSSession:
			if det["tool"] != "uds_trace" || det["args"].(map[string]any)["sid"] != "0x10" {
				t.Errorf("session row %v", r)
			}
		}
	}
	// The dip, its recovery and nothing else of SPN 168 from 19 s on.
	env = h.ok("what_happened", map[string]any{"at": rfc(t0.Add(20 * time.Second)), "window": "-1s+2s", "kinds": []any{evVoltage}})
	if rows := items(env); len(rows) != 2 || !strings.Contains(rows[0]["summary"].(string), "outside") || !strings.Contains(rows[1]["summary"].(string), "back within") {
		t.Errorf("voltage rows %v", rows)
	}
	// Pages: every row once, in order.
	all := h.ok("what_happened", map[string]any{"at": rfc(t0.Add(30 * time.Second)), "window": "±30s", "limit": MaxLimit})
	var paged []map[string]any
	cursor := ""
	for range 100 {
		args := map[string]any{"at": rfc(t0.Add(30 * time.Second)), "window": "±30s", "limit": 3}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := h.ok("what_happened", args)
		paged = append(paged, items(env)...)
		next, _ := pageOf(env)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(paged) != len(items(all)) {
		t.Errorf("paged %d rows, one page holds %d", len(paged), len(items(all)))
	}
}

// TestWhatHappenedSIPFailuresMatchTshark: a SIPp scenario whose tshark
// count of Call-IDs with a last INVITE final response of 400 or more is
// 1148 (of 1250); the 488 capture's one failure at tshark's time.
func TestWhatHappenedSIPFailuresMatchTshark(t *testing.T) {
	d := captureDeps(t, refdata.File(t, "sip", "branch-scenario-sipp.pcapng"), rtp.Options{})
	full := fullDeps(t)
	d.CAN, d.J1939, d.J1587, d.UDS, d.Transmit, d.Marks = full.CAN, full.J1939, full.J1587, full.UDS, full.Transmit, full.Marks
	h := newHarnessOf(t, d, timelineTools...)
	// tshark: first packet 1479419555.303, last 1479419688.603.
	at := time.Unix(1479419555, 0)
	env := h.ok("what_happened", map[string]any{"at": rfc(at), "window": "-1m+5m", "kinds": []any{evSIPFailure}})
	if n := pageOf(env)["total_matched"]; n != 1148.0 {
		t.Errorf("%v sip failures, tshark counts 1148", n)
	}
	r := items(env)[0]
	if r["detail"].(map[string]any)["tool"] != "triage_call" || !strings.Contains(r["summary"].(string), "INVITE answered 403") {
		t.Errorf("row %v", r)
	}

	d = captureDeps(t, refdata.File(t, "sip", "sip-488-Not-Acceptable-Here-codec-null.pcapng"), rtp.Options{})
	d.CAN, d.J1939, d.J1587, d.UDS, d.Transmit, d.Marks = full.CAN, full.J1939, full.J1587, full.UDS, full.Transmit, full.Marks
	h = newHarnessOf(t, d, timelineTools...)
	env = h.ok("what_happened", map[string]any{"at": "2019-08-27T17:26:48Z", "window": "±1m"})
	rows := items(env)
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
	r = rows[0]
	want := time.Unix(1566926808, 887985000).UTC()
	if r["time"] != rfc(want) || r["text"] != untrusted.Open+"Not Acceptable Here"+untrusted.Close ||
		r["detail"].(map[string]any)["args"].(map[string]any)["call_id"] != "NA4y5nr9Jk" {
		t.Errorf("488 row %v, want at %s (tshark) with the fenced reason", r, rfc(want))
	}
}

// TestMarkOnEveryPortAndRefusals: a mark shows once per port, its label
// fenced; bad arguments are refused naming what was wrong.
func TestMarkOnEveryPortAndRefusals(t *testing.T) {
	d, t0 := timelineTruck(t)
	d = withPorts(d, fakePorts{{Name: "can0", Kind: "can", Live: true}, {Name: "span0", Kind: "ethernet"}})
	h := newHarnessOf(t, d, timelineTools...)
	env := h.ok("mark", map[string]any{"label": "horn pressed", "at": rfc(t0.Add(5 * time.Second))})
	if data := env["data"].(map[string]any); data["seq"] != 1.0 || data["journaled"] != false {
		t.Errorf("mark answer %v", data)
	}
	env = h.ok("what_happened", map[string]any{"at": rfc(t0.Add(5 * time.Second)), "window": "±1s", "kinds": []any{evMark}})
	rows := items(env)
	if len(rows) != 2 || rows[0]["port"] == rows[1]["port"] || rows[0]["text"] != untrusted.Open+"horn pressed"+untrusted.Close {
		t.Errorf("mark rows %v", rows)
	}
	if w := strings.Join(anyStrings(env["warnings"]), " "); !strings.Contains(w, "span0") || !strings.Contains(w, "file") {
		t.Errorf("warnings %q do not say span0's clock is its file's", w)
	}
	for name, c := range map[string]struct {
		tool string
		args map[string]any
	}{
		"two-line label":   {"mark", map[string]any{"label": "a\nb"}},
		"window sideless":  {"what_happened", map[string]any{"window": "2m"}},
		"window too long":  {"what_happened", map[string]any{"window": "±13h"}},
		"at not a time":    {"what_happened", map[string]any{"at": "yesterday"}},
		"kind unknown":     {"what_happened", map[string]any{"kinds": []any{"weather"}}},
		"port not the box": {"what_happened", map[string]any{"port": "can9"}},
	} {
		if _, r := h.call(c.tool, c.args); !r.IsError || !strings.Contains(r.Content[0].Text, CodeInvalidArgument) {
			t.Errorf("%s: %s", name, r.Content[0].Text)
		}
	}
}

// TestWindowSpellings: the window argument's forms.
func TestWindowSpellings(t *testing.T) {
	for in, want := range map[string][2]time.Duration{
		"":       {time.Minute, time.Minute},
		"±2m":    {2 * time.Minute, 2 * time.Minute},
		"+-30s":  {30 * time.Second, 30 * time.Second},
		"-5m":    {5 * time.Minute, 0},
		"+30s":   {0, 30 * time.Second},
		"-1m+4m": {time.Minute, 4 * time.Minute},
	} {
		b, a, err := windowArg(in).around()
		if err != nil || b != want[0] || a != want[1] {
			t.Errorf("%q: %v %v %v, want %v", in, b, a, err, want)
		}
	}
	for _, bad := range []string{"2m", "±-2m", "±2m+1m", "-0s", "+1m+1m", "-25h", "±x"} {
		if _, _, err := windowArg(bad).around(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCanReAnalyseMarksRanksThePressedBit: a simulated ECU's frame whose
// bit flips at each mark (and a counter that changes in every frame):
// can_re_analyse's marks analysis puts that bit first.
func TestCanReAnalyseMarksRanksThePressedBit(t *testing.T) {
	t0 := time.Unix(1e9, 0).UTC()
	ms := marks.New(nil, nil)
	var frames []vehicleFrame
	state := byte(0)
	next := 0
	presses := []time.Duration{4 * time.Second, 11 * time.Second, 19 * time.Second, 26 * time.Second, 33 * time.Second}
	for i := range 400 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		for next < len(presses) && !t0.Add(presses[next]).After(at) {
			state ^= 0x04
			next++
		}
		frames = append(frames, vehicleFrame{t: at, id: 0x123, data: []byte{byte(i), 0x10, state, 0x99}})
	}
	for _, p := range presses {
		if _, err := ms.Add(t0.Add(p).Add(-40*time.Millisecond), "press", marks.SourceButton); err != nil {
			t.Fatal(err)
		}
	}
	d := vehicleDeps(t, t.TempDir(), frames)
	d.Marks = ms
	h := newHarnessOf(t, d, canreTools...)
	env := h.ok("can_re_analyse", map[string]any{"id": "123", "analyses": []any{"marks"}})
	m := env["data"].(map[string]any)["marks"].(map[string]any)
	top := m["bits"].([]any)[0].(map[string]any)
	if m["marks"] != 5.0 || top["index"] != 18.0 || top["lift"] != 1.0 {
		t.Errorf("marks analysis %v, want bit 18 (byte 2 bit 2) first with lift 1", m)
	}
	if env["data"].(map[string]any)["entropy"] != nil {
		t.Error("naming marks alone ran the other analyses too")
	}
	env = h.ok("can_re_analyse", map[string]any{"id": "123"})
	if env["data"].(map[string]any)["marks"] != nil {
		t.Error("the default analyses include marks")
	}
}

// FuzzWindowArg: any window is refused or parsed into sides that are
// positive and at most MaxTimelineWindow together.
func FuzzWindowArg(f *testing.F) {
	for _, s := range []string{"±2m", "+-30s", "-5m", "+30s", "-1m+4m", "±", "-", "+1h+1h", "±1.5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, a, err := windowArg(s).around()
		if err == nil && (b < 0 || a < 0 || b+a == 0 || b+a > MaxTimelineWindow) {
			t.Errorf("%q: before %v after %v", s, b, a)
		}
	})
}

// TestMarkNeedsOnlyARead: a mark changes no bus, so a read token may set
// one; every other tool that is not read-only still needs transmit.
func TestMarkNeedsOnlyARead(t *testing.T) {
	for _, def := range []toolDef{markTool, buildEvidencePackage, whatHappened} {
		i := def.info()
		want := auth.ScopeTransmit
		if i.name != toolMark && *i.hints.ReadOnlyHint {
			want = auth.ScopeRead
		}
		if i.name == toolMark {
			want = auth.ScopeRead
			if *i.hints.ReadOnlyHint {
				t.Error("mark says it is read-only")
			}
		}
		if got := requiredScope(i.mcpTool(false)); got != want {
			t.Errorf("%s needs %s, want %s", i.name, got, want)
		}
	}
}

// TestSharedClock: the SIP and RTP rows (no port) take the SPAN ports'
// clock when they agree, "mixed" when a file and a live port feed them,
// "box" without one; other ports' clocks do not count.
func TestSharedClock(t *testing.T) {
	eth := func(name string, live bool) ports.Status {
		return ports.Status{Name: name, Kind: portKindEthernet, Live: live}
	}
	can := ports.Status{Name: "can0", Kind: "can", Live: true}
	for _, c := range []struct {
		all  []ports.Status
		want string
	}{
		{[]ports.Status{eth("file1", false), can}, "file"},
		{[]ports.Status{eth("span0", true), eth("span1", true)}, "live"},
		{[]ports.Status{eth("file1", false), eth("span0", true)}, "mixed"},
		{[]ports.Status{can}, "box"},
	} {
		tl := &timeline{clocks: clocksOf(c.all)}
		tl.shared = tl.sharedClock(c.all)
		if got := tl.clockOf(""); got != c.want {
			t.Errorf("ports %+v: the shared clock %q, want %q", c.all, got, c.want)
		}
	}
}
