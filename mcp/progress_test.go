package mcp

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/front"
)

// TestAwaitReportsProgress: a client that sends a progressToken hears
// await_condition's progress while it waits (about once a second, never
// going back), and one that sends none hears nothing.
func TestAwaitReportsProgress(t *testing.T) {
	srv, err := NewServer(sipTestDeps(t), Options{Bundles: []string{"server", "sip"}})
	if err != nil {
		t.Fatal(err)
	}
	s, pr := progressSession(t, srv)
	ctx := context.Background()

	never := map[string]any{"filter": `final_code == 699`, "timeout_seconds": 3}
	if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "await_condition", Arguments: never}); err != nil {
		t.Fatal(err)
	}
	if n := len(pr.list()); n != 0 {
		t.Errorf("%d progress notifications without a progress token", n)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "await_condition", Arguments: never, Meta: sdk.Meta{"progressToken": "wait-1"}})
	if err != nil || res.IsError {
		t.Fatalf("await: %v %v", err, res)
	}
	got := pr.await()
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

// progressRecorder keeps the progress notifications a client heard.
type progressRecorder struct {
	mu  sync.Mutex
	got []*sdk.ProgressNotificationParams
}

func (r *progressRecorder) list() []*sdk.ProgressNotificationParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// await returns what was heard once at least one notification came, or
// after a generous deadline: notifications may still be in flight behind
// the answer.
func (r *progressRecorder) await() []*sdk.ProgressNotificationParams {
	for deadline := time.Now().Add(5 * time.Second); len(r.list()) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return r.list()
}

// progressSession connects a go-sdk client to srv over stdio pipes,
// recording the progress notifications it hears; closed with the test.
func progressSession(t *testing.T, srv *server.MCPServer) (*sdk.ClientSession, *progressRecorder) {
	t.Helper()
	pr := &progressRecorder{}
	client := sdk.NewClient(&sdk.Implementation{Name: "progress-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			pr.mu.Lock()
			pr.got = append(pr.got, req.Params)
			pr.mu.Unlock()
		},
	})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); front.ServeStdio(ctx, srv, sr, sw, testDeps().Log) }()
	s, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); cancel(); cw.Close(); sw.Close(); <-done })
	return s, pr
}
