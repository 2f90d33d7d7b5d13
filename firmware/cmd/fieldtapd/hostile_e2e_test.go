//go:build linux

package main

// Load and flood tests on the real binary over loopback, each bounded in
// time: what a token holder can do must not take the box down. They read
// the daemon's resident set from /proc and its audit file from disk.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
	"fieldtap/mcp/front"
)

// rssSlack is how far the resident set may rise over a test and still
// count as flat: the runtime keeps freed heap for a while (GOGC and the
// scavenger's pace), so a few tens of MiB of churn are not a leak, while
// the leaks these tests guard against (10 KB per session, a record
// buffered per call) are hundreds of MiB over the same load.
const rssSlack = 60 << 20

// rss is a process's resident set in bytes, from /proc/PID/status.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "VmRSS:"); found {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// cpu is a process's user+system CPU time so far, from /proc/PID/stat
// (clock ticks of 1/100 s, USER_HZ on Linux): for the benchmarks page,
// never asserted.
func cpu(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// rawClient posts JSON-RPC messages to one endpoint over a pool of
// keep-alive connections (fewer than the per-address cap).
type rawClient struct {
	url    string
	token  string
	client *http.Client
}

const loadWorkers = 8

func newRawClient(url, token string) *rawClient {
	return &rawClient{url: url, token: token, client: &http.Client{
		Timeout:   giveUp,
		Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers, MaxConnsPerHost: loadWorkers},
	}}
}

// post sends body with session (if any) and returns the status, the
// session header and the JSON-RPC reply (from JSON or an event stream).
func (c *rawClient) post(session, body string) (int, string, map[string]any, error) {
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, found := strings.CutPrefix(sc.Text(), "data: "); found {
				b = []byte(d)
			}
		}
	}
	var m map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &m); err != nil {
			return resp.StatusCode, "", nil, fmt.Errorf("reply %q: %w", b, err)
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), m, nil
}

// tinyLog is a three-frame candump -l file: --board none needs one
// source, and a quiet one keeps the stores out of the memory measured.
func tinyLog(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tiny.log")
	body := "(1.000000) can0 18FEF100#FF00000000000000\n(1.100000) can0 18FEF100#FF01000000000000\n(1.200000) can0 0CF00400#00000000000000FF\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`

// TestInitializeFloodLeavesRSSFlat initializes 20,000 sessions and never
// ends one, as a client looping on connect would: the session tables
// (fieldtap's and mcp-go's) stay bounded, so the daemon's resident set
// ends within rssSlack of where it started.
func TestInitializeFloodLeavesRSSFlat(t *testing.T) {
	const inits = 20_000
	cmd, url, stderr := startHTTP(t, "--board", "none", "--source", tinyLog(t))
	c := newRawClient(url, "")
	if status, _, _, err := c.post("", rawInit); err != nil || status != http.StatusOK {
		t.Fatalf("first initialize: %d %v\n%s", status, err, stderr.String())
	}
	before, cpu0 := rss(t, cmd.Process.Pid), cpu(t, cmd.Process.Pid)
	var next, failed atomic.Int64
	deadline := time.Now().Add(giveUp)
	var wg sync.WaitGroup
	for range loadWorkers {
		wg.Go(func() {
			for next.Add(1) <= inits && time.Now().Before(deadline) {
				if status, session, _, err := c.post("", rawInit); err != nil || status != http.StatusOK || session == "" {
					if failed.Add(1) == 1 {
						t.Errorf("initialize: status %d session %q err %v", status, session, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if time.Now().After(deadline) {
		t.Fatalf("%d initializes not done within %s", inits, giveUp)
	}
	after := rss(t, cmd.Process.Pid)
	t.Logf("%d initializes: RSS %d → %d MiB, daemon CPU %s", inits, before>>20, after>>20, cpu(t, cmd.Process.Pid)-cpu0)
	if after > before+rssSlack {
		t.Errorf("RSS rose from %d to %d MiB over %d initializes: sessions are kept past their bound", before>>20, after>>20, inits)
	}
}

// loadRun sends tools/call bodies from loadWorkers workers until stop
// says so, each worker pacing itself with every (0: no pacing). It
// returns how many calls got an answer and how many a -32000 refusal.
func loadRun(t *testing.T, c *rawClient, session string, body func(i int64) string, stop func(i int64) bool, every time.Duration) (sent, refused int64) {
	t.Helper()
	var n, nRefused, failed atomic.Int64
	var wg sync.WaitGroup
	for range loadWorkers {
		wg.Go(func() {
			tick := time.Now()
			for {
				i := n.Add(1)
				if stop(i) {
					n.Add(-1)
					return
				}
				status, _, m, err := c.post(session, body(i))
				if err != nil || status != http.StatusOK {
					if failed.Add(1) == 1 {
						t.Errorf("call %d: status %d err %v", i, status, err)
					}
					continue
				}
				if e, isErr := m["error"].(map[string]any); isErr && e["code"] == float64(front.CodeBusy) {
					nRefused.Add(1)
				}
				if every > 0 {
					tick = tick.Add(every)
					time.Sleep(time.Until(tick))
				}
			}
		})
	}
	wg.Wait()
	return n.Load() - failed.Load(), nRefused.Load()
}

// checkAudit reads the audit file (and its rotated predecessor): every
// line a whole record, numbered in order, and the calls the records
// stand for equal to calls. It returns the bytes on disk.
func checkAudit(t *testing.T, path string, calls int64) int64 {
	t.Helper()
	var recs []audit.Record
	var size int64
	for _, p := range []string{path + ".1", path} {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		size += st.Size()
		recs = append(recs, readAuditFile(t, p)...)
	}
	var accounted int64
	for i, r := range recs {
		if i > 0 && r.Seq != recs[i-1].Seq+1 {
			t.Errorf("seq %d follows %d: a record went missing", r.Seq, recs[i-1].Seq)
		}
		if r.Outcome == audit.OutcomeAuditGap || r.Outcome == audit.OutcomeAuditRecovered {
			t.Errorf("unexpected %s record: %+v", r.Outcome, r)
			continue
		}
		accounted += int64(max(r.Count, 1))
	}
	if accounted != calls {
		t.Errorf("%d audit records account for %d calls, want %d", len(recs), accounted, calls)
	}
	return size
}

// TestLoadAtTenTimesTheRateLimit calls capture_status at ten times the
// per-peer rate for ten seconds: every call is answered (the excess with
// -32000), the audit accounts for every call once, its lines are whole,
// and the resident set stays flat.
func TestLoadAtTenTimesTheRateLimit(t *testing.T) {
	const (
		rate     = 20
		duration = 10 * time.Second
	)
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	cmd, url, stderr := startHTTP(t, "--board", "none", "--source", tinyLog(t), "--mcp-audit-file", audit, "--mcp-rate-limit-per-peer", strconv.Itoa(rate))
	c := newRawClient(url, "")
	_, session, _, err := c.post("", rawInit)
	if err != nil || session == "" {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	before, cpu0 := rss(t, cmd.Process.Pid), cpu(t, cmd.Process.Pid)
	end := time.Now().Add(duration)
	// Each worker paces itself so that together they send 10 × rate a second.
	every := time.Duration(loadWorkers) * time.Second / (10 * rate)
	sent, refused := loadRun(t, c, session, func(i int64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}`, i)
	}, func(int64) bool { return time.Now().After(end) }, every)
	after, cpu1 := rss(t, cmd.Process.Pid), cpu(t, cmd.Process.Pid)
	if refused == 0 || refused == sent {
		t.Errorf("%d calls, %d refused: the rate limit did not both admit and refuse", sent, refused)
	}
	stopDaemon(t, cmd, stderr)
	size := checkAudit(t, audit, sent)
	t.Logf("%d calls in %s (%d refused): audit %d bytes, RSS %d → %d MiB, daemon CPU %s", sent, duration, refused, size, before>>20, after>>20, cpu1-cpu0)
	if after > before+rssSlack {
		t.Errorf("RSS rose from %d to %d MiB under load", before>>20, after>>20)
	}
}

// maxFloodAudit is the bound on what a 10 s flood may write.
const maxFloodAudit = 20 << 20

// TestRefusedCallFloodIsCounted floods the box for ten seconds, as fast as
// loopback allows, with calls to an unknown tool carrying 1 KB of
// arguments from one token, the flood that once wrote 158 MB: the audit
// accounts for every call, writes under maxFloodAudit, every line whole,
// and the resident set stays flat.
func TestRefusedCallFloodIsCounted(t *testing.T) {
	const duration = 10 * time.Second
	dir := t.TempDir()
	const secret = "flood-secret-5b7e2f0c1d"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(auth.HashToken("flooder", secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	cmd, url, stderr := startHTTP(t, "--board", "none", "--source", tinyLog(t), "--mcp-audit-file", audit, "--mcp-tokens-file", tokens)
	c := newRawClient(url, secret)
	_, session, _, err := c.post("", rawInit)
	if err != nil || session == "" {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	before, cpu0 := rss(t, cmd.Process.Pid), cpu(t, cmd.Process.Pid)
	args := strings.Repeat("a", 1000)
	end := time.Now().Add(duration)
	sent, refused := loadRun(t, c, session, func(i int64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"no_such_tool","arguments":{"x":"%s"}}}`, i, args)
	}, func(int64) bool { return time.Now().After(end) }, 0)
	after, cpu1 := rss(t, cmd.Process.Pid), cpu(t, cmd.Process.Pid)
	stopDaemon(t, cmd, stderr)
	size := checkAudit(t, audit, sent)
	t.Logf("%d calls in %s (%d refused by the rate limit): audit %d bytes, RSS %d → %d MiB, daemon CPU %s", sent, duration, refused, size, before>>20, after>>20, cpu1-cpu0)
	if size >= maxFloodAudit {
		t.Errorf("a %s flood wrote %d bytes of audit, over %d", duration, size, maxFloodAudit)
	}
	if after > before+rssSlack {
		t.Errorf("RSS rose from %d to %d MiB under the flood", before>>20, after>>20)
	}
}
