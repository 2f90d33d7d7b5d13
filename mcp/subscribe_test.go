package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/front"
)

// legacyProtocol is the last protocol with resources/subscribe; the
// 2026-07-28 subscriptions/listen path is not served yet.
const legacyProtocol = "2025-11-25"

// updates counts the resources/updated notifications a client hears.
type updates struct {
	mu   sync.Mutex
	uris []string
}

func (u *updates) handler(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uris = append(u.uris, req.Params.URI)
}

func (u *updates) n() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.uris)
}

// connectors reach one server as a go-sdk client would: over stdio (a
// pipe pair) and over the HTTP endpoint.
var connectors = []struct {
	name    string
	connect func(t *testing.T, b *liveBox, c *sdk.Client, defs ...toolDef) (*sdk.ClientSession, *subscriptions)
}{
	{name: "stdio", connect: func(t *testing.T, b *liveBox, c *sdk.Client, defs ...toolDef) (*sdk.ClientSession, *subscriptions) {
		srv, subs := assemble(b.d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, orLive(defs), false)
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); front.ServeStdio(ctx, srv, sr, sw, testDeps().Log) }()
		s, err := c.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(); cancel(); cw.Close(); sw.Close(); <-done })
		return s, subs
	}},
	{name: "http", connect: func(t *testing.T, b *liveBox, c *sdk.Client, defs ...toolDef) (*sdk.ClientSession, *subscriptions) {
		srv, subs := assemble(b.d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, orLive(defs), false)
		e := front.NewHTTPEndpoint(srv, front.HTTPOptions{Log: testDeps().Log})
		ts := httptest.NewServer(e)
		t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
		s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() }) // before ts.Close, which waits for the client's event stream
		return s, subs
	}},
}

// orLive is defs, or the live views' tools when none are named.
func orLive(defs []toolDef) []toolDef {
	if len(defs) == 0 {
		return liveTools
	}
	return defs
}

// eventually polls cond with a generous deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// quiet feeds frames that move the view's revision but not its rendering
// over a quiet period and checks no notification came.
func quiet(t *testing.T, b *liveBox, u *updates, want int) {
	t.Helper()
	for range 30 { // 1.5 s: six watcher ticks, past the debounce
		b.feed(t, eec1)
		time.Sleep(50 * time.Millisecond)
	}
	if got := u.n(); got != want {
		t.Errorf("%d notifications while the view did not change; want %d (%v)", got, want, u.uris)
	}
}

// TestSubscribedFaultsTellAChange: a subscriber to live/faults hears
// nothing while only engine data flows, one notification once a DM1
// appears, and nothing again while the fault table stays as it is; its
// subscriptions are gone with its connection.
func TestSubscribedFaultsTellAChange(t *testing.T) {
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			b := newLiveBox(t)
			u := &updates{}
			c := sdk.NewClient(&sdk.Implementation{Name: "subscribe-test", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: u.handler})
			s, subs := cn.connect(t, b, c)
			ctx := context.Background()
			if caps := s.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
				t.Fatalf("resources capability %+v", caps.Resources)
			}
			if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://live/faults"}); err != nil {
				t.Fatal(err)
			}
			quiet(t, b, u, 0)
			b.feed(t, dm1)
			eventually(t, "a notification after the DM1", func() bool { return u.n() >= 1 })
			if u.uris[0] != "fieldtap://live/faults" {
				t.Errorf("notified about %v", u.uris)
			}
			quiet(t, b, u, 1)
			s.Close()
			eventually(t, "subscriptions freed with the connection", func() bool { return subs.count() == 0 })
		})
	}
}

// TestSubscriptionBounds: only live views can be subscribed to, at most
// maxSubscriptionsPerSession per connection, and an unsubscribed view
// is no longer watched.
func TestSubscriptionBounds(t *testing.T) {
	b := newLiveBox(t)
	c := sdk.NewClient(&sdk.Implementation{Name: "bounds-test", Version: "1"}, nil)
	s, subs := connectors[0].connect(t, b, c)
	ctx := context.Background()
	if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://docs/filter"}); err == nil || !strings.Contains(err.Error(), "not a live view") {
		t.Errorf("reference page subscribed: %v", err)
	}
	for i := range maxSubscriptionsPerSession {
		uri := "fieldtap://live/dialogs/call-" + string(rune('a'+i))
		if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscription %d: %v", i+1, err)
		}
	}
	if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://live/faults"}); err == nil || !strings.Contains(err.Error(), "already has 16 subscriptions") {
		t.Errorf("17th subscription: %v", err)
	}
	if err := s.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "fieldtap://live/dialogs/call-a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://live/faults"}); err != nil {
		t.Errorf("subscription after an unsubscribe: %v", err)
	}
	if n := subs.count(); n != maxSubscriptionsPerSession {
		t.Errorf("%d subscriptions held, want %d", n, maxSubscriptionsPerSession)
	}
}

// hookSession is the least a session needs to be found in a context.
type hookSession struct{}

func (hookSession) Initialize()                                           {}
func (hookSession) Initialized() bool                                     { return true }
func (hookSession) NotificationChannel() chan<- mcpgo.JSONRPCNotification { return nil }
func (hookSession) SessionID() string                                     { return "hook-test" }

// TestSubscribeCheckSeesAnEscapedMethod: the hook skips decoding
// messages that cannot name a subscription method, and a method spelt
// with JSON escapes is not one of those.
func TestSubscribeCheckSeesAnEscapedMethod(t *testing.T) {
	srv, subs := assemble(newLiveBox(t).d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, orLive(nil), false)
	h := &server.Hooks{}
	subs.hook(h)
	ctx := srv.WithContext(context.Background(), hookSession{})
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"fieldtap://docs/filter"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources\/subscribe","params":{"uri":"fieldtap://docs/filter"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/\u0073ubscribe","params":{"uri":"fieldtap://docs/filter"}}`,
	} {
		err := h.OnRequestInitialization[0](ctx, 1, json.RawMessage(msg))
		if err == nil || !strings.Contains(err.Error(), "not a live view") {
			t.Errorf("%s: %v", msg, err)
		}
	}
	if err := h.OnRequestInitialization[0](ctx, 1, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"capture_status"}}`)); err != nil {
		t.Errorf("tools/call: %v", err)
	}
}
