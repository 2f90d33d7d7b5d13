package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/drivers/wire"
	"fieldtap/services/recorder"
)

// benchFrames is the recording find_in_captures searches: 200 000 CAN
// frames (about 10 MB of segment), one match in 1000.
const benchFrames = 200_000

// BenchmarkFindInCaptures times one whole tools/call: argument checks,
// the recorder's scan of every block, the envelope. Reported per call,
// with the segment bytes read per second.
func BenchmarkFindInCaptures(b *testing.B) {
	rec, err := recorder.Open(recorder.Options{Dir: b.TempDir(), SegmentBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	p := rec.Port("can0")
	t0 := time.Now().Add(-time.Hour)
	for i := range benchFrames {
		id := uint32(0x0CF00400 | wire.CANEFF)
		if i%1000 == 0 {
			id = 0x18FEF100 | wire.CANEFF
		}
		f, _ := wire.EncodeCAN(id, []byte{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8})
		p.Write(t0.Add(time.Duration(i)*time.Millisecond), wire.LinkCANSocketCAN, f, 0)
		if i%10_000 == 0 {
			rec.Flush() // the pending buffer holds one 100 ms batch, not the whole recording
		}
	}
	rec.Flush()
	d := fullDeps(b)
	d.BlackBox.Recorder = rec
	s := build(d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, blackboxTools, false)
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "find_in_captures",
		"arguments": map[string]any{"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "until": t0.Add(time.Hour).Format(time.RFC3339Nano), "can_id": "18FEF100", "max_hits": 1000}}})
	var read float64
	b.ReportAllocs()
	for b.Loop() {
		res, ok := s.HandleMessage(context.Background(), req).(mcpgo.JSONRPCResponse)
		if !ok {
			b.Fatal("not a response")
		}
		var env struct {
			Data findOut `json:"data"`
		}
		// Without output schemas the envelope is the text content only.
		if err := json.Unmarshal([]byte(res.Result.(*mcpgo.CallToolResult).Content[0].(mcpgo.TextContent).Text), &env); err != nil {
			b.Fatal(err)
		}
		if n := len(env.Data.Hits); n != benchFrames/1000 {
			b.Fatalf("%d hits", n)
		}
		read = float64(env.Data.Scan.BytesRead)
	}
	b.ReportMetric(read*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}
