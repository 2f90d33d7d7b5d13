//go:build linux

package main

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveUpdates records the resources/updated notifications a client hears.
type liveUpdates struct {
	mu   sync.Mutex
	uris []string
}

func (u *liveUpdates) add(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uris = append(u.uris, req.Params.URI)
}

func (u *liveUpdates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, x := range u.uris {
		if x == uri {
			n++
		}
	}
	return n
}

// TestSubscribersHearTheSimBoardsFaults: on the real binary and the sim
// board, over stdio and HTTP (protocol 2025-11-25, which has
// resources/subscribe), a subscriber to live/faults is told once the
// engine's DM1 is in the store, and a subscriber to a view that cannot
// change (a CAN port the box does not have: an empty page) hears nothing
// while the bus keeps talking.
func TestSubscribersHearTheSimBoardsFaults(t *testing.T) {
	const faults, still = "fieldtap://live/faults", "fieldtap://live/can/can9"
	connect := map[string]func(t *testing.T, ctx context.Context, c *sdk.Client) *sdk.ClientSession{
		"stdio": func(t *testing.T, ctx context.Context, c *sdk.Client) *sdk.ClientSession {
			cmd := exec.Command(binary, "--mcp-transport", "stdio")
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			s, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
			}
			return s
		},
		"http": func(t *testing.T, ctx context.Context, c *sdk.Client) *sdk.ClientSession {
			_, url, stderr := startHTTP(t)
			s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect %s: %v\nstderr:\n%s", url, err, stderr.String())
			}
			return s
		},
	}
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
			defer cancel()
			u := &liveUpdates{}
			s := connect[name](t, ctx, sdk.NewClient(&sdk.Implementation{Name: "fieldtap-e2e", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: u.add}))
			defer s.Close()
			for _, uri := range []string{still, faults} {
				if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
					t.Fatalf("subscribe %s: %v", uri, err)
				}
			}
			deadline := time.Now().Add(giveUp)
			for u.count(faults) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("no notification for %s within %s", faults, giveUp)
				}
				time.Sleep(50 * time.Millisecond)
			}
			res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: faults})
			if err != nil || len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, `"kind":"DM1"`) {
				t.Fatalf("live/faults after the notification: %v %+v", err, res)
			}
			// The bus keeps talking (EEC1 every 10 ms) while the empty page
			// stays as it is: a quiet period of three watcher seconds.
			time.Sleep(3 * time.Second)
			if n := u.count(still); n != 0 {
				t.Errorf("%d notifications for %s, which cannot change", n, still)
			}
		})
	}
}
