package front

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// countedEndpoint serves an endpoint whose MCP server counts the sessions
// mcp-go registers and unregisters: the difference is what mcp-go holds.
func countedEndpoint(t *testing.T, o HTTPOptions) (*httptest.Server, *HTTPEndpoint, func() int64) {
	t.Helper()
	var reg, unreg atomic.Int64
	h := &server.Hooks{}
	h.AddOnRegisterSession(func(context.Context, server.ClientSession) { reg.Add(1) })
	h.AddOnUnregisterSession(func(context.Context, server.ClientSession) { unreg.Add(1) })
	s := server.NewMCPServer("t", "1", server.WithHooks(h), server.WithToolCapabilities(false))
	o.Log = testLog()
	e := NewHTTPEndpoint(s, o)
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	return ts, e, func() int64 { return reg.Load() - unreg.Load() }
}

func initialize(t *testing.T, ts *httptest.Server, hdr map[string]string) string {
	t.Helper()
	resp := post(t, ts, hdr, initBody)
	io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get(server.HeaderKeySessionID)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
	}
	return id
}

func withSession(hdr map[string]string, id string) map[string]string {
	out := map[string]string{server.HeaderKeySessionID: id}
	for k, v := range hdr {
		out[k] = v
	}
	return out
}

const listBody = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`

// TestSessionBoundReachesMCPGo initializes far more sessions than one
// owner's share: fieldtap's table keeps its bound, mcp-go holds exactly
// the sessions the table holds (each eviction told it), the newest
// session works and the oldest is gone.
func TestSessionBoundReachesMCPGo(t *testing.T) {
	ts, e, held := countedEndpoint(t, HTTPOptions{})
	const n = maxSessionsPerToken + 300
	var first, last string
	for i := range n {
		id := initialize(t, ts, nil)
		if i == 0 {
			first = id
		}
		last = id
	}
	st := e.stats()
	if st.SessionsOpen != maxSessionsPerToken || st.SessionsEvicted != n-maxSessionsPerToken {
		t.Errorf("table holds %d sessions, evicted %d; want %d and %d", st.SessionsOpen, st.SessionsEvicted, maxSessionsPerToken, n-maxSessionsPerToken)
	}
	if got := held(); got != maxSessionsPerToken {
		t.Errorf("mcp-go holds %d sessions, the table %d: evictions did not reach it", got, st.SessionsOpen)
	}
	if got := post(t, ts, withSession(nil, last), listBody).StatusCode; got != http.StatusOK {
		t.Errorf("newest session: status %d", got)
	}
	if got := post(t, ts, withSession(nil, first), listBody).StatusCode; got != http.StatusNotFound {
		t.Errorf("evicted session: status %d, want 404", got)
	}
}

// TestOneTokenCannotEvictAnother: a token initializing in a loop evicts
// its own sessions, never another token's.
func TestOneTokenCannotEvictAnother(t *testing.T) {
	ts, _, _ := countedEndpoint(t, HTTPOptions{Tokens: testTokens(t)})
	other := initialize(t, ts, bearer(secretOther))
	for range maxSessionsPerToken + 10 {
		initialize(t, ts, bearer(secretRead))
	}
	if got := post(t, ts, withSession(bearer(secretOther), other), listBody).StatusCode; got != http.StatusOK {
		t.Errorf("the other token's session after the flood: status %d, want 200", got)
	}
}

// TestCloseForgetsEverySession goes through mcp-go's CloseSessions, which
// resolves the session manager without a request (as its idle sweeper
// does): both tables end empty.
func TestCloseForgetsEverySession(t *testing.T) {
	ts, e, held := countedEndpoint(t, HTTPOptions{})
	for range 3 {
		initialize(t, ts, nil)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if open := e.stats().SessionsOpen; open != 0 || held() != 0 {
		t.Errorf("after Close: table %d, mcp-go %d; want both empty", open, held())
	}
	if got := e.sess.ResolveSessionIdManager(nil).Generate(); got != "" {
		t.Errorf("the sweeper's manager made a session %q", got)
	}
}

// get opens GET /mcp with hdr and returns the response as soon as its
// header is in.
func get(t *testing.T, ts *httptest.Server, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+Path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestEventStreamNeedsItsSession(t *testing.T) {
	ts, e, _ := countedEndpoint(t, HTTPOptions{Tokens: testTokens(t)})
	id := initialize(t, ts, bearer(secretRead))
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{name: "no session is answered at once", hdr: bearer(secretRead), status: http.StatusBadRequest},
		{name: "forged session", hdr: withSession(bearer(secretRead), sessionPrefix+"00000000000000000000000000000000"), status: http.StatusNotFound},
		{name: "another token's session", hdr: withSession(bearer(secretOther), id), status: http.StatusNotFound},
		{name: "no token", hdr: withSession(nil, id), status: http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if resp := get(t, ts, tc.hdr); resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	t.Run("own session streams until the server stops streams", func(t *testing.T) {
		resp := get(t, ts, withSession(bearer(secretRead), id))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		ended := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()
		e.StopStreams()
		select {
		case <-ended:
		case <-time.After(giveUpTest):
			t.Fatal("the event stream outlived StopStreams")
		}
		if resp := get(t, ts, withSession(bearer(secretRead), id)); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a stream opened after StopStreams: status %d, want 503", resp.StatusCode)
		}
	})
}

// giveUpTest bounds a wait for something that must happen; it is not a
// measurement.
const giveUpTest = 30 * time.Second

// TestRefusedClientKeepsNoConnection: a 401 closes its connection, so a
// crowd of clients without a token cannot sit on descriptors.
func TestRefusedClientKeepsNoConnection(t *testing.T) {
	ts, _, _ := countedEndpoint(t, HTTPOptions{Tokens: testTokens(t)})
	resp := post(t, ts, nil, initBody)
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("status %d, close %v: want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// TestSlowBodyIsCut sends half a body and stalls: the request is
// answered 400 and its connection closed once the body's read deadline
// passes, although the server has no ReadTimeout.
func TestSlowBodyIsCut(t *testing.T) {
	ts, e, _ := countedEndpoint(t, HTTPOptions{})
	e.gate.bodyTimeout = 100 * time.Millisecond
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", Path, len(initBody), initBody[:10])
	c.SetReadDeadline(time.Now().Add(giveUpTest))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	if resp.StatusCode != http.StatusBadRequest || !resp.Close {
		t.Errorf("status %d, close %v: want 400 and the connection closed", resp.StatusCode, resp.Close)
	}
}
