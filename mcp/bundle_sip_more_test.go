package mcp

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
	"fieldtap/services/sip"
)

// unfenced strips the untrusted-data markers from a fenced value.
func unfenced(v any) string {
	s, _ := v.(string)
	return strings.TrimSuffix(strings.TrimPrefix(s, fenceOpen), fenceClose)
}

func TestSIPMoreTools(t *testing.T) {
	d := sipTestDeps(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		ok    bool
		check func(t *testing.T, out map[string]any)
	}{
		{name: "search text", tool: toolSearchMessages, args: map[string]any{"query": "busy here"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				items := out["items"].([]any)
				if len(items) != 2 {
					t.Fatalf("items %v", items)
				}
				hit := items[0].(map[string]any)["hits"].([]any)[0].(map[string]any)
				if hit["part"] != "start_line" || hit["line"].(float64) != 0 {
					t.Errorf("hit %v", hit)
				}
			}},
		{name: "search regex in header, paged", tool: toolSearchMessages, args: map[string]any{"query": "^User-Agent: ua-call-[0-4]$", "regex": true, "case_sensitive": true, "limit": 2}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				page := out["page"].(map[string]any)
				if page["total_matched"].(float64) != 15 || page["returned"].(float64) != 2 || page["next_cursor"] == "" {
					t.Errorf("page %v", page)
				}
				hit := out["items"].([]any)[0].(map[string]any)["hits"].([]any)[0].(map[string]any)
				if hit["part"] != "header" || hit["header"] != "User-Agent" {
					t.Errorf("hit %v", hit)
				}
			}},
		{name: "search bad regex", tool: toolSearchMessages, args: map[string]any{"query": "(", "regex": true}, ok: false},
		{name: "search fields projection", tool: toolSearchMessages, args: map[string]any{"query": "INVITE", "fields": []any{"hits"}}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				item := out["items"].([]any)[0].(map[string]any)
				if _, has := item["message"]; has || item["call_id"] == nil || item["index"] == nil {
					t.Errorf("item %v", item)
				}
			}},
		{name: "group by final_code", tool: toolGroupDialogs, args: map[string]any{"dimension": "from_user"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				all := out["data"].(map[string]any)["overall"].(map[string]any)
				asr := all["asr"].(map[string]any)
				// 3 answered of 5 attempts; 2 busy count for NER.
				if asr["value"].(float64) != 0.6 || asr["population"].(float64) != 5 || asr["unit"] != "ratio" {
					t.Errorf("asr %v", asr)
				}
				if ner := all["ner"].(map[string]any); ner["value"].(float64) != 1 {
					t.Errorf("ner %v", ner)
				}
				acd := all["acd"].(map[string]any)
				if acd["value"] != nil || acd["null_reason"] == "" || acd["population"].(float64) != 0 {
					t.Errorf("acd %v: no BYE, so no basis", acd)
				}
				if p := all["pdd_p95"].(map[string]any); p["value"].(float64) != 1 || p["unit"] != "ms" {
					t.Errorf("pdd %v", p)
				}
			}},
		{name: "timeline keeps empty buckets", tool: toolTimeline, args: map[string]any{"bucket_seconds": 1, "since": "1970-01-01T00:16:38Z", "until": "1970-01-01T00:16:42Z"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				b := out["data"].(map[string]any)["buckets"].([]any)
				if len(b) != 4 || b[0].(map[string]any)["dialogs"].(float64) != 0 || b[2].(map[string]any)["dialogs"].(float64) != 5 {
					t.Errorf("buckets %v", b)
				}
			}},
		{name: "timeline too many buckets", tool: toolTimeline, args: map[string]any{"bucket_seconds": 1, "since": "1970-01-01T00:00:00Z", "until": "1971-01-01T00:00:00Z"}, ok: false},
		{name: "tail without cursor is the newest", tool: toolTailDialogs, args: map[string]any{"limit": 2}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				items := out["items"].([]any)
				if len(items) != 2 || items[1].(map[string]any)["call_id"] != "call-4" || out["page"].(map[string]any)["next_cursor"] == "" {
					t.Errorf("tail %v", out)
				}
			}},
		{name: "await met at once", tool: toolAwaitCondition, args: map[string]any{"filter": "final_code == 486", "min_count": 2}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if data["met"] != true || data["matched"].(float64) != 2 {
					t.Errorf("await %v", data)
				}
			}},
		{name: "await deadline is an answer", tool: toolAwaitCondition, args: map[string]any{"filter": "final_code == 404", "timeout_seconds": 1}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if data["met"] != false || data["deadline_passed"] != true || data["waited_ms"].(float64) < 900 {
					t.Errorf("await %v", data)
				}
			}},
		{name: "await timeout over 60", tool: toolAwaitCondition, args: map[string]any{"filter": "", "timeout_seconds": 61}, ok: false},
		{name: "ladder", tool: toolRenderLadder, args: map[string]any{"call_id": "call-1"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				l := unfenced(out["data"].(map[string]any)["ladder"])
				for _, want := range []string{"192.0.2.1:5060", "192.0.2.2:5060", "|-INVITE sip:2002@h SIP/2.0--", "|-SIP/2.0 486 Busy Here--"} {
					if !strings.Contains(l, want) {
						t.Errorf("ladder lacks %q:\n%s", want, l)
					}
				}
			}},
		{name: "export needs one selector", tool: toolExportCapture, args: map[string]any{}, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := callSIP(t, d, tc.tool, tc.args)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v: %v", ok, tc.ok, out)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// TestTailCursorSeesEachUpdateOnce polls with the cursor across new messages.
func TestTailCursorSeesEachUpdateOnce(t *testing.T) {
	d := sipTestDeps(t)
	out, _ := callSIP(t, d, toolTailDialogs, map[string]any{})
	cursor := out["page"].(map[string]any)["next_cursor"].(string)
	out, _ = callSIP(t, d, toolTailDialogs, map[string]any{"cursor": cursor})
	if n := len(out["items"].([]any)); n != 0 {
		t.Fatalf("no change yet, got %d rows", n)
	}
	var m sip.Parsed
	raw := "BYE sip:2002@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKbye\r\nFrom: <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: call-0\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n"
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	d.SIP.Add(sip.Meta{Time: time.Unix(1001, 0), Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: "udp"}, &m, []byte(raw))
	out, _ = callSIP(t, d, toolTailDialogs, map[string]any{"cursor": cursor})
	items := out["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["call_id"] != "call-0" {
		t.Fatalf("after a BYE: %v", items)
	}
}

// TestExportCaptureOpensInTshark feeds frames through the analyser with
// frame references, exports one dialog and has tshark read the file back.
func TestExportCaptureOpensInTshark(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	fs, err := framestore.New(ring.Limits{Items: 1000, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	an := sip.NewAnalyser(st, netdecode.Options{})
	ex := sip.NewExporter(t.TempDir())
	ex.AddPort("span0", fs)
	for i, start := range []string{"INVITE sip:b@h SIP/2.0", "SIP/2.0 180 Ringing", "SIP/2.0 200 OK", "OPTIONS sip:b@h SIP/2.0"} {
		callID, method := "exp-1", "INVITE"
		if strings.HasPrefix(start, "OPTIONS") {
			callID, method = "other", "OPTIONS"
		}
		msg := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContent-Length: 0\r\n\r\n", start, i, callID, method)
		frame := udpFrame(t, []byte(msg))
		at := time.Unix(2000, int64(i)*int64(time.Millisecond))
		seq, err := fs.Append(framestore.Record{Time: at, Link: layers.LinkTypeEthernet, Data: frame, OrigLen: len(frame)})
		if err != nil {
			t.Fatal(err)
		}
		an.FeedFrame(sip.FrameRef{Port: "span0", Seq: seq}, at, layers.LinkTypeEthernet, frame)
	}
	d := testDeps()
	d.SIP, d.SIPExport = st, ex
	out, ok := callSIP(t, d, toolExportCapture, map[string]any{"call_id": "exp-1"})
	if !ok {
		t.Fatalf("export: %v", out)
	}
	data := out["data"].(map[string]any)
	if data["frames"].(float64) != 3 || data["messages"].(float64) != 3 {
		t.Fatalf("export %v", data)
	}
	path := data["path"].(string)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: the file was written but not opened")
	}
	res, err := exec.Command("tshark", "-r", path, "-Y", "sip", "-T", "fields", "-e", "sip.Call-ID").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, res)
	}
	if got := strings.Fields(string(res)); len(got) != 3 || got[0] != "exp-1" || got[2] != "exp-1" {
		t.Errorf("tshark read %q", res)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("file mode %v", st.Mode())
	}
}

// udpFrame wraps payload in Ethernet/IPv4/UDP 192.0.2.1:5060 → 192.0.2.2:5060.
func udpFrame(t *testing.T, payload []byte) []byte {
	t.Helper()
	ipLen := 20 + 8 + len(payload)
	f := make([]byte, 14+ipLen)
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:]
	ip[0], ip[2], ip[3], ip[8], ip[9] = 0x45, byte(ipLen>>8), byte(ipLen), 64, 17
	copy(ip[12:16], []byte{192, 0, 2, 1})
	copy(ip[16:20], []byte{192, 0, 2, 2})
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	udp := ip[20:]
	udp[0], udp[1], udp[2], udp[3] = 0x13, 0xc4, 0x13, 0xc4
	udp[4], udp[5] = byte((8+len(payload))>>8), byte(8+len(payload))
	copy(udp[8:], payload)
	return f
}
