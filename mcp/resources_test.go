package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/docs"
	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
	"fieldtap/services/sip"
)

// countingPorts is a port lister whose CAN port counts the frames a test
// feeds, as the daemon's registry does: a live view's revision.
type countingPorts struct{ can atomic.Uint64 }

func (p *countingPorts) Snapshot() []ports.Status {
	return []ports.Status{
		{Name: "span0", Kind: portKindEthernet, Live: true, Frames: 3},
		{Name: "can0", Kind: portKindCAN, Live: true, Frames: p.can.Load()},
		{Name: "j1708", Kind: portKindJ1708, Live: true},
	}
}

// liveBox is a box with every kind of store: SIP dialogs, RTP streams,
// CAN frames and J1939 on can0, J1587 on j1708. feed puts one J1939
// frame on can0 and counts it.
type liveBox struct {
	d     Deps
	ports *countingPorts
	mu    sync.Mutex
	at    time.Time
}

func newLiveBox(t *testing.T) *liveBox {
	t.Helper()
	d := sipTestDeps(t)
	md := mediaTestDeps(t)
	d.Media, d.MediaInterval = md.Media, md.MediaInterval
	jd := j1708Deps(t)
	d.J1587 = jd.J1587
	var err error
	if d.CAN, err = canbus.New(ring.Limits{Items: 1000, Bytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CAN.Port("can0", 250_000); err != nil {
		t.Fatal(err)
	}
	if d.J1939, err = j1939.New(j1939.Limits{Samples: ring.Limits{Items: 1000, Bytes: 1000 * j1939.SampleBytes()}, Sessions: ring.Limits{Items: 10, Bytes: 10 * j1939.SessionBytes()}}); err != nil {
		t.Fatal(err)
	}
	b := &liveBox{d: d, ports: &countingPorts{}, at: time.Unix(5000, 0).UTC()}
	b.d = withPorts(b.d, b.ports)
	b.feed(t, eec1)
	return b
}

// J1939 frames (29-bit ids without flags): EEC1 from the engine, and a
// DM1 from the engine with SPN 110 FMI 0, occurrence 3, amber lamp on.
var (
	eec1 = j1939Frame{id: 0x0CF00400, data: []byte{0xF0, 0x7D, 0x7D, 0x00, 0x20, 0x00, 0xF0, 0x7D}}
	dm1  = j1939Frame{id: 0x18FECA00, data: []byte{0x04, 0xFF, 110, 0x00, 0x00, 0x03, 0xFF, 0xFF}}
)

type j1939Frame struct {
	id   uint32
	data []byte
}

func (b *liveBox) feed(t testing.TB, f j1939Frame) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = b.at.Add(10 * time.Millisecond)
	p := b.d.CAN.Lookup("can0")
	p.Add(b.at, f.id|wire.CANEFF, f.data)
	if err := b.d.J1939.Feed("can0", b.at, f.id, true, f.data); err != nil {
		t.Error(err)
	}
	b.ports.can.Add(1)
}

// liveTools are the tools behind every live view.
var liveTools = []toolDef{listDialogs, rtpStreams, canFrames, j1939Faults, j1587Summary, captureStatusTool}

type resourceContents struct {
	Contents []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
	} `json:"contents"`
}

func readResource(t *testing.T, s *server.MCPServer, uri string) resourceContents {
	t.Helper()
	var r resourceContents
	if err := json.Unmarshal(rpc(t, s, "resources/read", map[string]any{"uri": uri}), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) == 0 || r.Contents[0].URI != uri || r.Contents[0].MIMEType != mimeJSON {
		t.Fatalf("%s: contents %+v", uri, r.Contents)
	}
	return r
}

// TestLiveViewsAreTheToolsAnswers: every live view reads exactly what its
// tool answers for the same arguments (the envelope byte for byte, and
// the provenance note when the answer carries sender text), an unknown
// id is an empty page, and the reference pages are the docs/ pages.
func TestLiveViewsAreTheToolsAnswers(t *testing.T) {
	b := newLiveBox(t)
	b.feed(t, dm1)
	s := testServer(t, b.d, liveTools...)
	tests := []struct {
		name, uri, tool string
		args            map[string]any
		rows            int
	}{
		{name: "dialogs", uri: "fieldtap://live/dialogs", tool: "list_dialogs", rows: 5},
		{name: "one dialog", uri: "fieldtap://live/dialogs/call-3", tool: "list_dialogs", args: map[string]any{"filter": `call_id == "call-3"`}, rows: 1},
		{name: "streams", uri: "fieldtap://live/streams", tool: "rtp_streams", rows: 2},
		{name: "a call's streams", uri: "fieldtap://live/streams/call-1", tool: "rtp_streams", args: map[string]any{"call_id": "call-1"}, rows: 2},
		{name: "can port", uri: "fieldtap://live/can/can0", tool: "can_frames", args: map[string]any{"port": "can0"}, rows: 2},
		{name: "faults", uri: "fieldtap://live/faults", tool: "j1939_faults", rows: 1},
		{name: "j1587", uri: "fieldtap://live/j1587", tool: "j1587_summary", rows: -1},
		{name: "status", uri: "fieldtap://status", tool: toolCaptureStatus, rows: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readResource(t, s, tc.uri)
			res, env := callTool(t, s, tc.tool, tc.args)
			if got.Contents[0].Text != res.Content[0].Text {
				t.Errorf("view and tool disagree:\nview %s\ntool %s", got.Contents[0].Text, res.Content[0].Text)
			}
			if len(got.Contents) != len(res.Content) || len(res.Content) > 1 && got.Contents[1].Text != res.Content[1].Text {
				t.Errorf("view has %d blocks, tool %d", len(got.Contents), len(res.Content))
			}
			if env["ok"] != true {
				t.Errorf("tool failed: %v", env)
			}
			if tc.rows >= 0 && len(items(env)) != tc.rows {
				t.Errorf("rows = %d, want %d", len(items(env)), tc.rows)
			}
		})
	}
	for _, uri := range []string{"fieldtap://live/dialogs/no-such-call", "fieldtap://live/streams/no-such-call", "fieldtap://live/can/can9"} {
		t.Run("unknown "+uri, func(t *testing.T) {
			var env map[string]any
			if err := json.Unmarshal([]byte(readResource(t, s, uri).Contents[0].Text), &env); err != nil {
				t.Fatal(err)
			}
			if env["ok"] != true || len(items(env)) != 0 || pageOf(env)["total_matched"] != 0.0 {
				t.Errorf("not an empty page: %v", env)
			}
		})
	}
	var unknown map[string]any
	json.Unmarshal([]byte(readResource(t, s, "fieldtap://live/can/can9").Contents[0].Text), &unknown)
	if w, _ := unknown["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), `no CAN port "can9"`) {
		t.Errorf("unknown port's page does not say why: %v", unknown["warnings"])
	}
	var page struct {
		Contents []struct{ Text, MIMEType string } `json:"contents"`
	}
	json.Unmarshal(rpc(t, s, "resources/read", map[string]any{"uri": "fieldtap://docs/filter"}), &page)
	if len(page.Contents) != 1 || page.Contents[0].Text != docs.Filter || page.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("filter page: %+v", page.Contents)
	}
}

// TestResourceListsFollowTheLoadedTools: a view is listed only when its
// tool is loaded; the reference pages and the files template always are.
func TestResourceListsFollowTheLoadedTools(t *testing.T) {
	names := func(raw json.RawMessage, key, field string) []string {
		var m map[string][]map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range m[key] {
			out = append(out, r[field].(string))
		}
		slices.Sort(out)
		return out
	}
	b := newLiveBox(t)
	all := testServer(t, b.d, liveTools...)
	if got, want := names(rpc(t, all, "resources/list", nil), "resources", "uri"), []string{
		"fieldtap://docs/filter", "fieldtap://docs/tools", "fieldtap://docs/transmit-safety",
		"fieldtap://live/dialogs", "fieldtap://live/faults", "fieldtap://live/j1587", "fieldtap://live/streams", "fieldtap://status",
	}; !slices.Equal(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
	}
	if got, want := names(rpc(t, all, "resources/templates/list", nil), "resourceTemplates", "uriTemplate"), []string{
		filesTemplate, "fieldtap://live/can/{port}", "fieldtap://live/dialogs/{call_id}", "fieldtap://live/streams/{call_id}",
	}; !slices.Equal(got, want) {
		t.Errorf("templates = %v, want %v", got, want)
	}
	some := testServer(t, b.d, captureStatusTool)
	if got, want := names(rpc(t, some, "resources/list", nil), "resources", "uri"), []string{
		"fieldtap://docs/filter", "fieldtap://docs/tools", "fieldtap://docs/transmit-safety", "fieldtap://status",
	}; !slices.Equal(got, want) {
		t.Errorf("status only: resources = %v, want %v", got, want)
	}
}

// BenchmarkWatcherRendersDialogs is one watcher tick's work for a
// subscribed live/dialogs on a store of 2000 dialogs: render the first
// page as list_dialogs does (counting every match) and digest it.
func BenchmarkWatcherRendersDialogs(b *testing.B) {
	st, _ := sip.New(sip.Limits{})
	for i := range 2000 {
		addSIP(b, st, i, fmt.Sprintf("INVITE sip:2002@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>\r\nCall-ID: bench-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, i))
	}
	d := testDeps()
	d.SIP = st
	_, subs := assemble(d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, []toolDef{listDialogs}, false)
	lv, val, _ := subs.v.find("fieldtap://live/dialogs")
	b.ReportAllocs()
	for b.Loop() {
		r, err := subs.v.render(context.Background(), lv, val)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.digest()
	}
}

// TestDigestIgnoresTickingCoverage: a live view's subscribers hear of a
// change to its data or to whether it is whole and a port's state, not
// of the coverage counters every frame moves.
func TestDigestIgnoresTickingCoverage(t *testing.T) {
	env := func(items, to, state string, held int, warn string) rendering {
		return rendering{envelope: fmt.Sprintf(`{"ok":true,"items":[%s],"coverage":{"complete":true,"window":{"from":null,"to":%q},"ports":[{"port":"can0","state":%q,"lost":{},"restarts":0}],"stores":[{"store":"j1939_samples","seen":%d,"held":%d}]},"warnings":[%q],"errors":[]}`, items, to, state, held, held, warn)}
	}
	base := env(`{"kind":"DM1"}`, "2026-01-05T09:00:01Z", "capturing", 10, "")
	for _, tc := range []struct {
		name string
		r    rendering
		same bool
	}{
		{name: "the window's end and a store's count moved", r: env(`{"kind":"DM1"}`, "2026-01-05T09:00:02Z", "capturing", 11, "held 11"), same: true},
		{name: "the data changed", r: env(`{"kind":"DM2"}`, "2026-01-05T09:00:01Z", "capturing", 10, ""), same: false},
		{name: "a port went away", r: env(`{"kind":"DM1"}`, "2026-01-05T09:00:01Z", "gone", 10, ""), same: false},
	} {
		if got := tc.r.digest() == base.digest(); got != tc.same {
			t.Errorf("%s: same digest %v, want %v", tc.name, got, tc.same)
		}
	}
}
