package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/evidence"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
	"fieldtap/services/sandbox"
)

// The recorded traffic of every blackbox test: bbCAN frames of
// 18FEF100 on can0 and bbJ1708 MID 128 messages on j1708, 10 ms apart,
// an hour ago (so every window is already recorded).
const (
	bbCAN   = 120
	bbJ1708 = 60
	bbStep  = 10 * time.Millisecond
	// bbStored is what the CAN store keeps: the rest only the recorder has.
	bbStored = 20
)

var bbStart = time.Now().Add(-time.Hour).Truncate(time.Second)

// blackboxDeps records the test traffic on a real recorder in a temp
// directory and builds the evidence builder and sandbox over it, as the
// daemon does.
func blackboxDeps(t *testing.T) Deps {
	t.Helper()
	dir := t.TempDir()
	rec, err := recorder.Open(recorder.Options{Dir: filepath.Join(dir, "rec")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	store, err := canbus.New(ring.Limits{Items: bbStored, Bytes: bbStored * canbus.FrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := store.Port("can0", 0)
	if err != nil {
		t.Fatal(err)
	}
	can, j := rec.Port("can0"), rec.Port("j1708")
	for i := range bbCAN {
		data := []byte{byte(i), 2, 3, 4, 5, 6, 7, 8}
		b, err := wire.EncodeCAN(0x18FEF100|wire.CANEFF, data)
		if err != nil {
			t.Fatal(err)
		}
		can.Write(bbStart.Add(time.Duration(i)*bbStep), wire.LinkCANSocketCAN, b, 0)
		sp.Add(bbStart.Add(time.Duration(i)*bbStep), 0x18FEF100|wire.CANEFF, data)
		if i < bbJ1708 {
			msg := []byte{128, 84, byte(i)}
			msg = append(msg, byte(-int(msg[0]+msg[1]+msg[2])))
			j.Write(bbStart.Add(time.Duration(i)*bbStep+time.Millisecond), wire.LinkJ1708, msg, 0)
		}
	}
	rec.Flush()
	b, err := evidence.New(evidence.Options{Dir: filepath.Join(dir, "evidence"), Version: "test"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	files, err := sandbox.New(sandbox.Root{Name: "evidence", Dir: b.Dir(), Verify: func(rel string) error {
		id, _, _ := strings.Cut(rel, "/")
		_, err := b.Verify(id)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	d := bbPortDeps()
	d.CAN = store
	d.Files = files
	d.BlackBox = BlackBox{Recorder: rec, Evidence: b, Downloads: idleDownloads{}}
	return d
}

// idleDownloads is a file server that has served nothing, at most
// maxDownloads at once.
type idleDownloads struct{}

const maxDownloads = 4

func (idleDownloads) Stats() FileStats { return FileStats{Max: maxDownloads} }

// bbPortDeps has the recorded ports as capture_status lists them.
func bbPortDeps() Deps {
	return withPorts(testDeps(), fakePorts{
		{Name: "can0", Kind: "can", Drops: map[string]uint64{}, Errors: map[string]uint64{}},
		{Name: "j1708", Kind: "j1708", Drops: map[string]uint64{}, Errors: map[string]uint64{}},
	})
}

func at(i int) string { return bbStart.Add(time.Duration(i) * bbStep).Format(time.RFC3339Nano) }

func TestListCaptures(t *testing.T) {
	c := newChecker(t, testServer(t, blackboxDeps(t), blackboxTools...))
	cases := []struct {
		name string
		args map[string]any
		rows int
	}{
		{name: "all", args: map[string]any{}, rows: 1},
		{name: "a recorded port", args: map[string]any{"port": "j1708"}, rows: 1},
		{name: "a port never recorded", args: map[string]any{"port": "span0"}, rows: 0},
		{name: "a window the segment overlaps", args: map[string]any{"since": at(100), "until": at(1000)}, rows: 1},
		{name: "a window after it", args: map[string]any{"since": at(bbCAN + 1)}, rows: 0},
		{name: "a window before it", args: map[string]any{"until": at(-1)}, rows: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, env := c.call("list_captures", tc.args)
			if r.IsError {
				t.Fatal(r.Content[0].Text)
			}
			rows := items(env)
			if len(rows) != tc.rows {
				t.Fatalf("%d rows, want %d: %s", len(rows), tc.rows, r.Content[0].Text)
			}
			if tc.rows == 0 {
				return
			}
			s := rows[0]
			if s["frames"] != float64(bbCAN+bbJ1708) || s["open"] != true || !strings.HasSuffix(s["name"].(string), ".pcapng") {
				t.Errorf("segment %v", s)
			}
			if ps := s["ports"].([]any); len(ps) != 2 {
				t.Errorf("ports %v, want can0 and j1708", ps)
			}
		})
	}
	if _, env := c.call("list_captures", map[string]any{"fields": []string{"bytes"}}); len(items(env)[0]) != 2 {
		t.Errorf("fields=bytes: %v, want bytes and seq", items(env)[0])
	}
}

func TestBlackboxToolsWithoutRecorder(t *testing.T) {
	d := bbPortDeps()
	d.BlackBox.RecorderOff = "recorder off (recorder.enabled is false)"
	c := newChecker(t, testServer(t, d, append([]toolDef{captureStatusTool}, blackboxTools...)...))
	for tool, args := range map[string]map[string]any{
		"list_captures":          {},
		"find_in_captures":       {"since": at(0), "until": at(10)},
		"build_evidence_package": {"at": at(0)},
	} {
		if _, env := c.call(tool, args); env["ok"] != false {
			t.Errorf("%s answered without a recorder", tool)
		} else if code, msg, _ := firstError(t, env); code != CodeUnavailable || !strings.Contains(msg, "recorder.enabled") {
			t.Errorf("%s: %s %s", tool, code, msg)
		}
	}
	_, env := c.call("capture_status", nil)
	sec := env["data"].(map[string]any)["recorder"].(map[string]any)
	if sec["state"] != "off" || sec["status"] != nil || !strings.Contains(sec["why"].(string), "recorder.enabled") {
		t.Errorf("recorder section %v", sec)
	}
}

func TestCaptureStatusRecorderSection(t *testing.T) {
	c := newChecker(t, testServer(t, blackboxDeps(t), captureStatusTool))
	_, env := c.call("capture_status", nil)
	sec := env["data"].(map[string]any)["recorder"].(map[string]any)
	st := sec["status"].(map[string]any)
	if sec["state"] != recorder.StateRecording || st["segments"] != 1.0 || st["quota_bytes"] != float64(recorder.DefaultQuotaBytes) || st["segments_deleted"] != 0.0 {
		t.Errorf("recorder section %v", sec)
	}
	if st["bytes"].(float64) <= 0 || st["writes"].(float64) < 1 {
		t.Errorf("nothing written: %v", st)
	}
	ev := sec["evidence"].(map[string]any)
	if ev["bundles"] != 0.0 || len(ev["pending"].([]any)) != 0 {
		t.Errorf("evidence %v", ev)
	}
	if dl := sec["downloads"].(map[string]any); dl["max_concurrent"] != float64(maxDownloads) {
		t.Errorf("downloads %v", dl)
	}
}

func TestFindInCaptures(t *testing.T) {
	c := newChecker(t, testServer(t, blackboxDeps(t), blackboxTools...))
	whole := map[string]any{"since": at(-1), "until": at(bbCAN + 1)}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range whole {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name  string
		args  map[string]any
		hits  int
		trunc bool
	}{
		{name: "CAN id", args: with("can_id", "18FEF100", "max_hits", 1000), hits: bbCAN},
		{name: "CAN id under a mask", args: with("can_id", "FEF100", "mask", "FFFF00", "max_hits", 1000), hits: bbCAN},
		{name: "other CAN id", args: with("can_id", "18FEF200"), hits: 0},
		{name: "MID", args: with("mid", 128, "max_hits", 1000), hits: bbJ1708},
		{name: "MID on the CAN port only", args: with("mid", 128, "port", "can0"), hits: 0},
		{name: "max_hits", args: with("mid", 128, "max_hits", 7), hits: 7, trunc: true},
		{name: "bytes", args: with("contains", "80542A"), hits: 1}, // MID 128, PID 84, counter 42
		{name: "a narrow window", args: map[string]any{"since": at(10), "until": at(20), "can_id": "18FEF100"}, hits: 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, env := c.call("find_in_captures", tc.args)
			if r.IsError {
				t.Fatal(r.Content[0].Text)
			}
			d := env["data"].(map[string]any)
			if hits := d["hits"].([]any); len(hits) != tc.hits || d["truncated"] != tc.trunc {
				t.Errorf("%d hits (truncated %v), want %d (%v)", len(hits), d["truncated"], tc.hits, tc.trunc)
			}
			// matched counts matches (and the one past max_hits where a
			// truncated search stopped), never the frames read.
			wantMatched := float64(tc.hits)
			if tc.trunc {
				wantMatched++
			}
			if sc := d["scan"].(map[string]any); sc["matched"] != wantMatched {
				t.Errorf("scan.matched %v of %v frames read, want %v", sc["matched"], sc["frames"], wantMatched)
			}
			if tc.trunc && len(env["warnings"].([]any)) == 0 {
				t.Error("truncated without a warning")
			}
		})
	}
	for name, args := range map[string]map[string]any{
		"no arguments":         {},
		"until before since":   {"since": at(10), "until": at(5)},
		"l4_port, no host":     with("l4_port", 5060),
		"not an address":       with("host", "10.0.0"),
		"odd hex":              with("contains", "805"),
		"a mask without an id": with("mask", "FF"),
	} {
		if _, env := c.call("find_in_captures", args); env["ok"] != false {
			t.Errorf("%s: answered", name)
		} else if code, _, _ := firstError(t, env); code != CodeInvalidArgument {
			t.Errorf("%s: %s", name, code)
		}
	}
}

// TestFindInCapturesHonoursCancellation: a call whose context is done
// answers that it was cancelled, not a partial list that looks whole.
func TestFindInCapturesHonoursCancellation(t *testing.T) {
	s := testServer(t, blackboxDeps(t), blackboxTools...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "find_in_captures", "arguments": map[string]any{"since": at(-1), "until": at(bbCAN + 1), "mid": 128}}})
	out, _ := json.Marshal(s.HandleMessage(ctx, req))
	if !bytes.Contains(out, []byte(`"isError":true`)) || !bytes.Contains(out, []byte("cancelled")) {
		t.Errorf("cancelled search answered %s", out)
	}
}

func TestBuildEvidencePackage(t *testing.T) {
	d := blackboxDeps(t)
	c := newChecker(t, testServer(t, d, blackboxTools...))
	r, env := c.call("build_evidence_package", map[string]any{"at": at(40), "before_s": 0, "after_s": 1, "trigger": `{"why":"test"}`})
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	data := env["data"].(map[string]any)
	if data["sealed"] != true || !strings.HasPrefix(data["id"].(string), "ev-") {
		t.Fatalf("answer %v", data)
	}
	frames := data["frames"].(map[string]any)
	if frames["can0"] != 80.0 || frames["j1708"] != 20.0 { // at(40)+1 s reaches past the last frame
		t.Errorf("frames %v, want can0 80 (40..119) and j1708 20 (40..59)", frames)
	}
	var pcap string
	for _, f := range data["files"].([]any) {
		f := f.(map[string]any)
		name := f["name"].(string)
		path, err := d.Files.Path(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if f["sha256"] != hex.EncodeToString(sum[:]) || f["bytes"] != float64(len(body)) {
			t.Errorf("%s: answer says %v %v, the file has %d bytes and %x", name, f["bytes"], f["sha256"], len(body), sum)
		}
		if strings.HasSuffix(name, "/capture.pcapng") {
			pcap = path
		}
	}
	if pcap == "" {
		t.Fatal("no capture.pcapng in the bundle")
	}
	var links int
	for _, ct := range r.Content[1:] {
		if ct.Type == "resource_link" {
			links++
		}
	}
	if want := len(data["files"].([]any)); links != want {
		t.Errorf("%d resource links, want one per file (%d)", links, want)
	}
	// Ground truth from outside: capinfos counts the packets.
	if _, err := exec.LookPath("capinfos"); err != nil {
		t.Log("capinfos not installed: the pcapng's packet count is not checked independently")
	} else {
		out, err := exec.Command("capinfos", "-M", "-c", pcap).CombinedOutput()
		if err != nil {
			t.Fatalf("capinfos: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "Number of packets:   "+strconv.Itoa(80+20)) {
			t.Errorf("capinfos says\n%s\nwant 100 packets", out)
		}
	}

	// A plain label as the trigger: sealed as JSON.
	r, env = c.call("build_evidence_package", map[string]any{"at": at(40), "before_s": 0, "after_s": 1, "trigger": "power dip {"})
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	data = env["data"].(map[string]any)
	if f := data["frames"].(map[string]any); f["can0"] != 80.0 || f["j1708"] != 20.0 {
		t.Errorf("labelled: frames %v, want can0 80 and j1708 20", f)
	}
	for _, f := range data["files"].([]any) {
		name := f.(map[string]any)["name"].(string)
		if !strings.HasSuffix(name, "/trigger.json") {
			continue
		}
		path, _ := d.Files.Path(name)
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte(`{"label":"power dip {"}`)) {
			t.Errorf("trigger.json %s, want the label as JSON", body)
		}
	}

	// A window that ends in the future is pending, not sealed.
	r, env = c.call("build_evidence_package", map[string]any{"at": time.Now().Format(time.RFC3339), "after_s": 30})
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	if data := env["data"].(map[string]any); data["sealed"] != false || data["pending"] == nil || data["due"] == nil {
		t.Errorf("future window: %v", data)
	}
	for name, args := range map[string]map[string]any{
		"no moment":              {},
		"an empty window":        {"at": at(10), "before_s": 0, "after_s": 0},
		"a window too long":      {"at": at(10), "before_s": 601},
		"window with before_s":   {"at": at(10), "window": "±1s", "before_s": 1},
		"a window side too long": {"at": at(10), "window": "±11m"},
		"a window not a window":  {"at": at(10), "window": "soon"},
	} {
		if _, env := c.call("build_evidence_package", args); env["ok"] != false {
			t.Errorf("%s: answered", name)
		} else if code, _, _ := firstError(t, env); code != CodeInvalidArgument {
			t.Errorf("%s: %s", name, code)
		}
	}
}

// TestExportCANLogReadsTheRecorder: the store keeps the newest bbStored
// frames; export_canlog gives every frame of the window, the older ones
// from the recorder. The lines are checked with a pattern of the candump
// -l format, not with the codec that wrote them.
func TestExportCANLogReadsTheRecorder(t *testing.T) {
	c := newChecker(t, testServer(t, blackboxDeps(t), exportCANLog))
	line := regexp.MustCompile(`^\((\d+)\.(\d{6})\) can0 18FEF100#([0-9A-F]{2})02030405060708$`)
	cases := []struct {
		name         string
		args         map[string]any
		first, lines int
		fromRecorder int
		truncated    bool
	}{
		{name: "everything", args: map[string]any{}, first: 0, lines: bbCAN, fromRecorder: bbCAN - bbStored},
		{name: "a window the store holds", args: map[string]any{"since": at(bbCAN - 10)}, first: bbCAN - 10, lines: 10},
		{name: "a window only the recorder holds", args: map[string]any{"since": at(10), "until": at(30)}, first: 10, lines: 20, fromRecorder: 20},
		{name: "max_lines", args: map[string]any{"max_lines": 50, "id": "18FEF100"}, first: 0, lines: 50, fromRecorder: 50, truncated: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, env := c.call("export_canlog", tc.args)
			if r.IsError {
				t.Fatal(r.Content[0].Text)
			}
			x := env["data"].(map[string]any)["exports"].([]any)[0].(map[string]any)
			if x["lines"] != float64(tc.lines) || x["from_recorder"] != float64(tc.fromRecorder) || x["truncated"] != tc.truncated {
				t.Errorf("export %v", x)
			}
			text := strings.TrimSuffix(x["candump"].(string), "\n")
			got := strings.Split(text, "\n")
			if len(got) != tc.lines {
				t.Fatalf("%d lines, want %d", len(got), tc.lines)
			}
			for k, l := range got {
				m := line.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("line %d %q is not a candump -l line of the test frames", k, l)
				}
				i := tc.first + k
				want := bbStart.Add(time.Duration(i) * bbStep)
				if m[1] != strconv.FormatInt(want.Unix(), 10) || m[2] != fmt.Sprintf("%06d", want.Nanosecond()/1000) || m[3] != fmt.Sprintf("%02X", i) {
					t.Fatalf("line %d %q, want frame %d at %s", k, l, i, want)
				}
			}
		})
	}
	if _, env := c.call("export_canlog", map[string]any{"id": "123"}); env["ok"] != false {
		t.Error("an id nothing has answered")
	} else if code, _, _ := firstError(t, env); code != CodeNotFound {
		t.Errorf("nothing to export: %s", code)
	}
}

// TestFindInCapturesReportsProgress: a client that sends a progressToken
// hears how many of the planned bytes the search has read; the recorder
// reports at the end of every search, so even this small one sends one.
func TestFindInCapturesReportsProgress(t *testing.T) {
	s, pr := progressSession(t, testServer(t, blackboxDeps(t), blackboxTools...))
	ctx := context.Background()
	args := map[string]any{"since": at(-1), "until": at(bbCAN + 1), "mid": 128}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "find_in_captures", Arguments: args, Meta: sdk.Meta{"progressToken": "find-1"}})
	if err != nil || res.IsError {
		t.Fatalf("find: %v %v", err, res)
	}
	var planned float64
	if st, ok := res.StructuredContent.(map[string]any); ok {
		planned = st["data"].(map[string]any)["scan"].(map[string]any)["bytes_planned"].(float64)
	}
	got := pr.await()
	if len(got) == 0 {
		t.Fatal("no progress notification")
	}
	if p := got[0]; p.ProgressToken != "find-1" || p.Total != planned || p.Progress <= 0 || p.Progress > p.Total || !strings.Contains(p.Message, "segments read") {
		t.Errorf("notification %+v, want progress of %v planned bytes", p, planned)
	}
}
