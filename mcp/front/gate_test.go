package front

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/mcp"
	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
)

const (
	secretRead  = "read-secret-0123456789abcdef"
	secretOther = "other-secret-0123456789abcdef"
)

func testTokens(t *testing.T) *auth.Tokens {
	t.Helper()
	tok, err := auth.ParseTokens(strings.NewReader("# ci tokens\n" + auth.HashToken("ci reader", secretRead) + "\n" + auth.HashToken("other", secretOther, auth.ScopeRead, auth.ScopeTransmit) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func httpServer(t *testing.T, o HTTPOptions) *httptest.Server {
	t.Helper()
	s := testServer(t, mcp.Options{Audit: o.Audit})
	o.Log = testLog()
	e := NewHTTPEndpoint(s, o)
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	return ts
}

// post sends one JSON-RPC message to /mcp.
func post(t *testing.T, ts *httptest.Server, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func callBody(tool string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
}

func bearer(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

func TestHTTPAccessRules(t *testing.T) {
	ts := httpServer(t, HTTPOptions{Tokens: testTokens(t), AllowedHosts: []string{"box.local"}, ResourceURL: "https://box.local/mcp"})
	cases := []struct {
		name      string
		hdr       map[string]string
		status    int
		challenge string // expected WWW-Authenticate, "" for none
	}{
		{name: "no token: challenge without error code", hdr: nil, status: 401,
			challenge: `Bearer realm="fieldtap", resource_metadata="https://box.local/.well-known/oauth-protected-resource/mcp"`},
		{name: "wrong token", hdr: bearer("guess"), status: 401,
			challenge: `Bearer realm="fieldtap", error="invalid_token", resource_metadata="https://box.local/.well-known/oauth-protected-resource/mcp"`},
		{name: "other scheme is a rejected credential", hdr: map[string]string{"Authorization": "Basic " + secretRead}, status: 401,
			challenge: `Bearer realm="fieldtap", error="invalid_token", resource_metadata="https://box.local/.well-known/oauth-protected-resource/mcp"`},
		{name: "good token", hdr: bearer(secretRead), status: 200},
		{name: "allowed host", hdr: map[string]string{"Authorization": "Bearer " + secretRead, "Host": "box.local:8731"}, status: 200},
		{name: "rebinding host", hdr: map[string]string{"Authorization": "Bearer " + secretRead, "Host": "evil.example:8731"}, status: 403},
		{name: "foreign origin", hdr: map[string]string{"Authorization": "Bearer " + secretRead, "Origin": "https://evil.example"}, status: 403},
		{name: "local origin", hdr: map[string]string{"Authorization": "Bearer " + secretRead, "Origin": "http://localhost:3000"}, status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts, tc.hdr, initBody)
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tc.challenge)
			}
		})
	}
	t.Run("metadata is public and names no authorization server", func(t *testing.T) {
		resp, err := ts.Client().Get(ts.URL + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d err %v", resp.StatusCode, err)
		}
		if _, has := m["authorization_servers"]; has || m["resource"] != "https://box.local/mcp" {
			t.Errorf("metadata = %v", m)
		}
	})
	t.Run("body limit", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxRequestBody) + `"}}`
		if resp := post(t, ts, bearer(secretRead), big); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
	})
}

func TestSessionsAreBoundToTheirToken(t *testing.T) {
	ts := httpServer(t, HTTPOptions{Tokens: testTokens(t)})
	resp := post(t, ts, bearer(secretRead), initBody)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
	}
	with := func(secret, session string) int {
		h := bearer(secret)
		h["Mcp-Session-Id"] = session
		return post(t, ts, h, callBody(toolCaptureStatus)).StatusCode
	}
	if got := with(secretRead, id); got != 200 {
		t.Errorf("own session: %d", got)
	}
	if got := with(secretOther, id); got != 404 {
		t.Errorf("another token's session: %d, want 404", got)
	}
	if got := with(secretRead, sessionPrefix+"00000000000000000000000000000000"); got != 404 {
		t.Errorf("forged session: %d, want 404", got)
	}
}

// rpcReply reads a JSON-RPC reply from a JSON or event-stream body.
func rpcReply(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if d, found := strings.CutPrefix(sc.Text(), "data: "); found {
				b = []byte(d)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	return m
}

func readAudit(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestLoadAtTenTimesTheRateLimit is a bounded load test on loopback, not a
// timed assertion: at ten times the per-peer rate, the excess is refused
// with -32000, every admitted call answers correctly, the audit file
// accounts for every call exactly once (a record per call, or a
// coalesced refusal record counting its calls), every line is whole and
// numbered in order, and the heap returns to its baseline.
func TestLoadAtTenTimesTheRateLimit(t *testing.T) {
	const (
		rate    = 20
		calls   = 10 * rate
		workers = 8
	)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	auditLog, err := audit.Open(path, audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer auditLog.Close()
	ts := httpServer(t, HTTPOptions{RatePerPeer: rate, MaxConcurrent: workers * 2, Audit: auditLog})
	session := post(t, ts, nil, initBody).Header.Get("Mcp-Session-Id")

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var mu sync.Mutex
	admitted, refused := 0, 0
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range jobs {
				m := rpcReply(t, post(t, ts, map[string]string{"Mcp-Session-Id": session}, callBody(toolCaptureStatus)))
				mu.Lock()
				if e, isErr := m["error"].(map[string]any); isErr {
					if e["code"] != float64(CodeBusy) || !strings.Contains(e["message"].(string), "retry") {
						t.Errorf("refusal = %v", e)
					}
					refused++
				} else {
					res := m["result"].(map[string]any)
					var env envelopeProbe
					text := res["content"].([]any)[0].(map[string]any)["text"].(string)
					if err := json.Unmarshal([]byte(text), &env); err != nil || !env.OK || len(env.Data.Ports) != 1 {
						t.Errorf("admitted call answered %s", text)
					}
					admitted++
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	for i := range calls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)

	// The bucket holds rate calls and refills at rate a second.
	if maxAdmitted := rate + int(elapsed.Seconds()*rate) + 1; admitted > maxAdmitted || refused == 0 {
		t.Errorf("admitted %d, refused %d in %s: the limit of %d/s did not hold", admitted, refused, elapsed, rate)
	}
	auditLog.Close() // writes the refusals still being counted
	recs := readAudit(t, path)
	outcomes := map[string]int{}
	coalesced := 0
	for i, r := range recs {
		outcomes[r.Outcome] += int(max(r.Count, 1))
		if r.Count > 0 {
			coalesced++
		}
		if r.Seq != uint64(i+1) {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
	}
	if refused > audit.DefaultRefusalsPerWindow && coalesced == 0 {
		t.Errorf("%d refusals written as %d records: none coalesced", refused, len(recs))
	}
	if outcomes[audit.OutcomeOK] != admitted || outcomes[audit.OutcomeRefused] != refused {
		t.Errorf("audit outcomes %v, want ok=%d refused=%d", outcomes, admitted, refused)
	}

	ts.Client().CloseIdleConnections()
	var after runtime.MemStats
	for range 5 {
		runtime.GC()
		runtime.ReadMemStats(&after)
		if after.HeapInuse <= before.HeapInuse+heapSlack {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if after.HeapInuse > before.HeapInuse+heapSlack {
		t.Errorf("heap in use %d after the load, baseline %d: something kept per-call state", after.HeapInuse, before.HeapInuse)
	}
}

// heapSlack absorbs allocator noise (spans, pools) around the baseline;
// per-call state kept for 200 calls would exceed it many times over only
// if calls leaked their answers, so it is loose on purpose.
const heapSlack = 4 << 20

type envelopeProbe struct {
	OK   bool `json:"ok"`
	Data struct {
		Ports []any `json:"ports"`
	} `json:"data"`
}
