package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/pcapfile"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/services/sandbox"
	"fieldtap/tools/refdata"
)

// TestMediaSwitchChangesRTPStreams: [media] heuristic_rtp decides whether
// rtp_streams shows the RTP nobody signalled. SIP_CALL_RTP_G711.pcap has
// three signalled streams and two relay legs no SDP names
// (../shared/testdata/sip/PROVENANCE.md); media.interval reaches rtp_stats.
func TestMediaSwitchChangesRTPStreams(t *testing.T) {
	capturePath := refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap")
	cases := []struct {
		name         string
		toml         string
		wantStreams  int
		wantOrphans  int
		wantInterval float64
	}{
		{name: "default: off", toml: "", wantStreams: 3, wantOrphans: 0, wantInterval: 5},
		{name: "heuristic on", toml: "[media]\nheuristic_rtp = true\ninterval = \"2s\"\n", wantStreams: 5, wantOrphans: 2, wantInterval: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fieldtapd.toml")
			if err := os.WriteFile(path, []byte(tc.toml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			opt, err := mediaOptions(cfg.Media)
			if err != nil {
				t.Fatal(err)
			}
			an := testAnalysers(t, opt, testSource{name: "span0", kind: capture.KindEthernet})
			consume, _, err := an.attach("span0", capture.KindEthernet)
			if err != nil {
				t.Fatal(err)
			}
			replay(t, capturePath, consume)

			// The box's own Deps, recorder off: the media bundle reads
			// the analyser and interval the daemon wires.
			files, err := sandbox.New()
			if err != nil {
				t.Fatal(err)
			}
			b := &box{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)), an: an, rec: &recording{}, seal: &sealing{}, files: files}
			d, _ := b.mcpDeps()
			s, err := mcp.NewServer(d, mcp.Options{Bundles: []string{"media"}})
			if err != nil {
				t.Fatal(err)
			}
			var streams struct {
				Items []struct {
					ID       string `json:"stream_id"`
					Orphaned bool   `json:"orphaned"`
					CallID   string `json:"call_id"`
				} `json:"items"`
			}
			callTool(t, s, "rtp_streams", map[string]any{}, &streams)
			orphans := 0
			for _, r := range streams.Items {
				if r.Orphaned {
					orphans++
				}
			}
			if len(streams.Items) != tc.wantStreams || orphans != tc.wantOrphans {
				t.Errorf("rtp_streams: %d streams, %d orphaned; want %d and %d", len(streams.Items), orphans, tc.wantStreams, tc.wantOrphans)
			}
			var stats struct {
				Data struct {
					IntervalSeconds float64 `json:"interval_seconds"`
				} `json:"data"`
			}
			callTool(t, s, "rtp_stats", map[string]any{"stream_id": streams.Items[0].ID}, &stats)
			if stats.Data.IntervalSeconds != tc.wantInterval {
				t.Errorf("rtp_stats interval_seconds %v, want %v", stats.Data.IntervalSeconds, tc.wantInterval)
			}
		})
	}
}

func TestMediaIntervalBounds(t *testing.T) {
	cases := []struct {
		interval string
		ok       bool
	}{
		{"5s", true}, {"1s", true}, {"10m", true}, {"500ms", false}, {"11m", false}, {"five", false}, {"", false},
	}
	for _, tc := range cases {
		t.Run(tc.interval, func(t *testing.T) {
			_, err := mediaOptions(config.Media{Interval: tc.interval})
			if (err == nil) != tc.ok {
				t.Errorf("media.interval %q: err %v, want ok=%v", tc.interval, err, tc.ok)
			}
		})
	}
}

// replay hands every frame of a capture file to consume, as a port does.
func replay(t *testing.T, path string, consume consumer) {
	t.Helper()
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		if bad := consume([]capture.Frame{{Time: rec.Time, Link: rec.Link, Data: bytes.Clone(rec.Data), OrigLen: rec.OrigLen}}); bad != 0 {
			t.Fatalf("%d frames undecodable", bad)
		}
	})
}

// callTool runs one tools/call in-process and decodes its envelope (the
// text block: structuredContent rides only with output schemas on).
func callTool(t *testing.T, s *server.MCPServer, name string, args map[string]any, out any) {
	t.Helper()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s.HandleMessage(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Result.IsError || len(resp.Result.Content) == 0 {
		t.Fatalf("%s: %s", name, b)
	}
	if err := json.Unmarshal([]byte(resp.Result.Content[0].Text), out); err != nil {
		t.Fatal(err)
	}
}
