package rtp

// Ground truth: tshark 4.0.17's RTP stream tables from
// ../shared/testdata/sip/PROVENANCE.md. drivers/pcapfile is a test-only
// import; the package itself takes plain values.

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// loadCapture runs one file through the SIP analyser with a media hook.
func loadCapture(t testing.TB, path string, o Options) *Analyser {
	t.Helper()
	a := NewAnalyser(o)
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sa := sip.NewAnalyser(st, netdecode.Options{})
	sa.SetMediaHook(a)
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { sa.Feed(rec.Time, rec.Link, rec.Data) })
	return a
}

// row is one line of a PROVENANCE.md stream table. lost is tshark's
// (negative = duplicates).
type row struct {
	src, dst  string
	ssrc      string
	packets   uint64
	lost      int64
	maxJitter float64
}

type streamTruth struct {
	file      string
	heuristic bool // tshark needed SDP we cannot read (TLS) or heuristic RTP
	rows      []row
	digits    string // RFC 2833 digits in time order
	info      string // SIP INFO digits in time order
	why       string
}

var streamGroundTruth = []streamTruth{
	{file: "RTP-Protocol.pcap", rows: []row{
		{"10.33.6.101:6040", "10.33.6.100:6020", "0x06C156FD", 201, 0, 3.293},
		{"10.33.6.100:6020", "10.33.6.101:6040", "0x44C61AFB", 47, 0, 0.556},
	}},
	{file: "SIP_CALL_RTP_G711.pcap", rows: []row{
		{"200.57.7.202:30000", "200.57.7.196:40362", "0x00002E3D", 6, 0, 0.639},
		{"200.57.7.196:40376", "200.57.7.204:8000", "0x58F33DEA", 891, 0, 0.251},
		{"200.57.7.204:8000", "200.57.7.196:40376", "0xD2BD4E3E", 548, 0, 7.407},
	}},
	{file: "SIP_CALL_RTP_G711.pcap", heuristic: true, why: "tshark's heuristic RTP adds the relay's other legs", rows: []row{
		{"200.57.7.202:30000", "200.57.7.196:40362", "0x00002E3D", 6, 0, 0.639},
		{"200.57.7.196:40376", "200.57.7.204:8000", "0x58F33DEA", 891, 0, 0.251},
		{"200.57.7.204:8000", "200.57.7.196:40376", "0xD2BD4E3E", 548, 0, 7.407},
		{"200.57.7.199:4800", "200.57.7.196:40378", "0x58F33DEA", 891, 0, 0.078},
		{"200.57.7.196:40378", "200.57.7.199:4800", "0xD2BD4E3E", 548, 0, 7.400},
	}},
	{file: "sip-rtp-g711.pcap", rows: []row{
		{"10.0.2.15:28102", "10.0.2.20:6000", "0x343FFA34", 414, 0, 0.019},
		{"10.0.2.15:27942", "10.0.2.20:6000", "0x343DA99B", 425, 0, 0.010},
	}},
	{file: "sip-488-Not-Acceptable-Here-codec-null.pcapng"},
	{file: "DTMFsipinfo.pcap", info: "1342"},
	{file: "SIP-Call-Flow-Over-TCP.pcap", rows: []row{
		{"10.33.6.100:6000", "10.33.6.101:6050", "0x5A3361B3", 24, 0, 0.069},
		{"10.33.6.101:6050", "10.33.6.100:6000", "0x42F433D4", 42, 0, 3.063},
	}},
	{file: "branch-scenario-sipp.pcapng"},
	{file: "ipv6frag.pcap"},
	{file: "websocket-sip.pcapng"},
	{file: "gen-sipp-hold-resume-rfc2833-udp.pcapng", digits: "1", rows: []row{
		{"127.0.0.1:6000", "127.0.0.1:6100", "0x0E05384E", 10, -2, 0},
		{"127.0.0.1:6000", "127.0.0.1:6100", "0xDEE0EE8F", 167, 0, 0.830},
		{"127.0.0.1:6100", "127.0.0.1:6000", "0xDEE0EE8F", 150, 0, 125.808},
	}},
	{file: "gen-sipp-hold-resume-tls13-with-keys.pcapng", heuristic: true,
		why: "SIP is TLS-encrypted here (tshark read the embedded keys; we do not decrypt), so the streams are found by heuristic",
		rows: []row{
			{"127.0.0.1:6000", "127.0.0.1:6100", "0x0E05384E", 10, -2, 0},
			{"127.0.0.1:6000", "127.0.0.1:6100", "0xDEE0EE8F", 168, 0, 0.826},
			{"127.0.0.1:6100", "127.0.0.1:6000", "0xDEE0EE8F", 150, 0, 125.933},
		}},
}

// jitterTolerance is the bound against tshark: 2 %, and 1 µs for
// values tshark prints as 0.000 at its 3-decimal precision.
const (
	jitterTolerance = 0.02
	jitterFloorMs   = 0.001
)

func TestStreamGroundTruth(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	for _, gt := range streamGroundTruth {
		name := gt.file
		if gt.heuristic {
			name += "/heuristic"
		}
		t.Run(name, func(t *testing.T) {
			a := loadCapture(t, filepath.Join(dir, gt.file), Options{Heuristic: gt.heuristic})
			sn := a.Snapshot(false)
			if len(sn.Streams) != len(gt.rows) {
				for _, s := range sn.Streams {
					t.Logf("got %s %s packets %d", s.ID, s.SSRC, s.Packets)
				}
				t.Fatalf("streams = %d, want %d (%s)", len(sn.Streams), len(gt.rows), gt.why)
			}
			for _, r := range gt.rows {
				var got *StreamView
				for i, s := range sn.Streams {
					if s.Src == r.src && s.Dst == r.dst && "0x"+s.SSRC == r.ssrc { // tshark writes 0x…
						got = &sn.Streams[i]
					}
				}
				if got == nil {
					t.Errorf("stream %s → %s %s missing", r.src, r.dst, r.ssrc)
					continue
				}
				wantLost := max(r.lost, 0)
				if got.Packets != r.packets || got.Lost != wantLost || got.Expected-int64(got.Packets) != r.lost {
					t.Errorf("%s: packets %d lost %d expected %d, want packets %d lost %d (tshark lost %d)",
						got.ID, got.Packets, got.Lost, got.Expected, r.packets, wantLost, r.lost)
				}
				if d := math.Abs(got.MaxJitterMs - r.maxJitter); d > max(jitterTolerance*r.maxJitter, jitterFloorMs) {
					t.Errorf("%s: max jitter %.3f ms, tshark %.3f ms", got.ID, got.MaxJitterMs, r.maxJitter)
				}
				t.Logf("%s %s packets %d lost %d dup %d max jitter %.3f (tshark %.3f) codec %s mos %v",
					r.src+"→"+r.dst, r.ssrc, got.Packets, got.Lost, got.Duplicates, got.MaxJitterMs, r.maxJitter, got.Codec, fmtMOS(got.MOS))
			}
			var digits, info strings.Builder
			for _, e := range sn.Events {
				if e.Method == MethodRFC4733 {
					digits.WriteString(e.Digit)
				} else {
					info.WriteString(e.Digit)
				}
			}
			if !gt.heuristic && digits.String() != gt.digits {
				t.Errorf("RFC 2833 digits %q, want %q", digits.String(), gt.digits)
			}
			if info.String() != gt.info {
				t.Errorf("SIP INFO digits %q, want %q", info.String(), gt.info)
			}
		})
	}
}

func fmtMOS(m MOS) any {
	if m.Value == nil {
		return m.Reason
	}
	return *m.Value
}

func TestOneWayG711(t *testing.T) {
	a := loadCapture(t, filepath.Join(refdata.Dir(t, "sip"), "sip-rtp-g711.pcap"), Options{})
	sn := a.Snapshot(false)
	for _, call := range []string{"1-1966@10.0.2.20", "1-1968@10.0.2.20"} {
		dg := sn.Diagnose(call)
		if !dg.Applicable {
			t.Fatalf("%s: not applicable: %s", call, dg.Reason)
		}
		found := false
		for _, f := range dg.Findings {
			t.Logf("%s: %s %s: %s", call, f.Severity, f.Code, f.Message)
			found = found || f.Code == FindingOneWay
		}
		if !found {
			t.Errorf("%s: one-way media not reported", call)
		}
	}
	if dg := sn.Diagnose("no-such-call"); dg.Applicable || dg.Reason == "" {
		t.Errorf("unknown call = %+v", dg)
	}
}

func TestCleanCallSaysSo(t *testing.T) {
	a := loadCapture(t, filepath.Join(refdata.Dir(t, "sip"), "RTP-Protocol.pcap"), Options{})
	sn := a.Snapshot(false)
	for id := range sn.Dialogs {
		dg := sn.Diagnose(id)
		if !dg.Applicable || len(dg.Findings) == 0 {
			t.Fatalf("%s: %+v", id, dg)
		}
		t.Logf("%s: %+v", id, dg.Findings)
	}
}
