package mcp

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAwaitReportsProgress: a client that sends a progressToken hears
// await_condition's progress while it waits (about once a second, never
// going back), and one that sends none hears nothing.
func TestAwaitReportsProgress(t *testing.T) {
	srv, err := NewServer(sipTestDeps(t), Options{Bundles: []string{"server", "sip"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	client := sdk.NewClient(&sdk.Implementation{Name: "progress-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ServeStdio(ctx, srv, sr, sw, testDeps().Log) }()
	s, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close(); cancel(); cw.Close(); sw.Close(); <-done }()

	never := map[string]any{"filter": `final_code == 699`, "timeout_seconds": 3}
	if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "await_condition", Arguments: never}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 0 {
		t.Errorf("%d progress notifications without a progress token", len(got))
	}
	mu.Unlock()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "await_condition", Arguments: never, Meta: sdk.Meta{"progressToken": "wait-1"}})
	if err != nil || res.IsError {
		t.Fatalf("await: %v %v", err, res)
	}
	// Notifications may still be in flight behind the answer.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 1 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress notification over a 3 s wait")
	}
	// Progress is the seconds waited: notifications at least a second
	// apart, never going back.
	for i, p := range got {
		if p.ProgressToken != "wait-1" || p.Total != 3 || p.Message != "0 of 1 dialogs match" || (i > 0 && p.Progress-got[i-1].Progress < 0.999) {
			t.Errorf("notification %d: %+v (previous %+v)", i, p, got[max(i-1, 0)])
		}
	}
}
