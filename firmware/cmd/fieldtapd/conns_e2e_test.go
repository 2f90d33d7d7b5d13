//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"fieldtap/mcp/auth"
	"fieldtap/mcp/front"
)

// The connection flood's network: a /16 inside two namespaces, the box
// at .0.1, the second client at .0.2, the crowd spread over floodAddrs
// addresses from .1.0 on.
const (
	floodBox       = "10.233.0.1"
	floodClient    = "10.233.0.2"
	floodConns     = 10000
	floodAddrs     = 400 // 25 connections each: within the per-address cap, so only the global one bounds them
	floodBudgetMiB = 64
)

// nsDialer dials TCP from inside a network namespace: one goroutine
// locked on an OS thread that entered it makes every socket (a socket
// keeps the namespace it was made in).
type nsDialer struct{ reqs chan dialReq }

type dialReq struct {
	local, remote string
	res           chan dialRes
}

type dialRes struct {
	c   net.Conn
	err error
}

func newNSDialer(t *testing.T, ns string) *nsDialer {
	t.Helper()
	d := &nsDialer{reqs: make(chan dialReq)}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/var/run/netns/" + ns)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		ready <- err
		if err != nil {
			return
		}
		for r := range d.reqs {
			nd := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(r.local)}}
			c, err := nd.Dial("tcp4", r.remote)
			r.res <- dialRes{c, err}
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("enter namespace %s: %v", ns, err)
	}
	t.Cleanup(func() { close(d.reqs) })
	return d
}

func (d *nsDialer) dial(local, remote string) (net.Conn, error) {
	res := make(chan dialRes, 1)
	d.reqs <- dialReq{local, remote, res}
	r := <-res
	return r.c, r.err
}

// rssKiB is a process's resident set (VmRSS).
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestConnectionFloodStaysInBudget opens 10,000 TCP connections from 400
// addresses to the MCP endpoint of a box with a 64 MiB budget, inside a
// pair of network namespaces, and holds them. Before the global cap the
// same crowd took 172 MiB of RSS (issue #39). The box's RSS must stay
// inside its budget, /metrics must count what the cap did, at most the
// pool's bound may be open, and a second client's tools/call must still
// be answered (its latency is logged, not asserted).
func TestConnectionFloodStaysInBudget(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the connection flood needs root: network namespaces and a veth pair")
	}
	// 10,000 sockets here and the box's own: raise the descriptor limit.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max < 2*floodConns {
		lim.Max = 2 * floodConns
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot raise RLIMIT_NOFILE to %d: %v", lim.Max, err)
	}

	id := os.Getpid()
	box, peer := fmt.Sprintf("ftap-cbox-%d", id), fmt.Sprintf("ftap-cpeer-%d", id)
	dev, peerDev := fmt.Sprintf("ftcb%d", id), fmt.Sprintf("ftcp%d", id)
	if out, err := exec.Command("ip", "netns", "add", box).CombinedOutput(); err != nil {
		t.Skipf("ip netns does not work here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", box).Run() })
	sh(t, "ip", "netns", "add", peer)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", peer).Run() })
	sh(t, "ip", "link", "add", dev, "netns", box, "type", "veth", "peer", "name", peerDev, "netns", peer)
	for _, ns := range []string{box, peer} {
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	sh(t, "ip", "-n", box, "addr", "add", floodBox+"/16", "dev", dev)
	var batch strings.Builder
	fmt.Fprintf(&batch, "addr add %s/16 dev %s\n", floodClient, peerDev)
	crowd := make([]string, floodAddrs)
	for i := range crowd {
		crowd[i] = fmt.Sprintf("10.233.%d.%d", 1+i/250, 1+i%250)
		fmt.Fprintf(&batch, "addr add %s/16 dev %s\n", crowd[i], peerDev)
	}
	ipBatch := exec.Command("ip", "-n", peer, "-batch", "-")
	ipBatch.Stdin = strings.NewReader(batch.String())
	if out, err := ipBatch.CombinedOutput(); err != nil {
		t.Fatalf("ip -batch: %v\n%s", err, out)
	}
	for _, ns := range []struct{ ns, dev string }{{box, dev}, {peer, peerDev}} {
		sh(t, "ip", "-n", ns.ns, "link", "set", ns.dev, "up")
	}

	dir := t.TempDir()
	const secret = "flood-secret-81d2c4"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(auth.HashToken("flood test", secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "fieldtapd.toml")
	mcpAddr, statusAddr := floodBox+":8731", floodBox+":8732"
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`board = "none"
memory_limit_mib = %d
[mcp]
transport = "http"
listen = %q
tokens_file = %q
[status]
listen = [%q]
metrics = true
`, floodBudgetMiB, mcpAddr, tokens, statusAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	// One small CAN log as the box's source: the flood is about the
	// endpoint, not the stores.
	src := filepath.Join(dir, "bus.log")
	if err := os.WriteFile(src, []byte("(1700000000.000000) can0 18FEF100#FFFF00FFFFFFFFFF\n(1700000000.100000) can0 0CF00400#F07D7D0000FFFFFF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", box, binary, "--config", cfg, "--source", src)
	stderr := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			if strings.Contains(sc.Text(), "serving MCP over HTTP") {
				close(serving)
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pw.Close()
		if t.Failed() {
			t.Logf("fieldtapd stderr:\n%s", stderr.String())
		}
	})
	select {
	case <-serving:
	case <-time.After(giveUp):
		t.Fatalf("fieldtapd never served MCP:\n%s", stderr.String())
	}
	pid := cmd.Process.Pid // ip netns exec execs fieldtapd in its place

	dialer := newNSDialer(t, peer)
	client := &http.Client{Transport: bearerTransportOver(secret, &http.Transport{
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) { return dialer.dial(floodClient, addr) },
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 4*giveUp)
	defer cancel()
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + front.Path, HTTPClient: client}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	timedCall := func() time.Duration {
		start := time.Now()
		captureStatus(t, ctx, s)
		return time.Since(start)
	}
	before := timedCall()
	rss0 := rssKiB(t, pid)

	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	failed := 0
	for i := range floodConns {
		c, err := dialer.dial(crowd[i%floodAddrs], mcpAddr)
		if err != nil {
			failed++
			continue
		}
		held = append(held, c)
	}
	// The box has taken every connection once its counters account for
	// them: each open, refused or closed to make room.
	var m map[string]float64
	for deadline := time.Now().Add(giveUp); ; {
		m = scrape(t, client, "http://"+statusAddr+"/metrics")
		taken := m["fieldtap_http_connections_closed_idle_total"] + m[`fieldtap_http_connections_refused_total{cap="global"}`] +
			m[`fieldtap_http_connections_refused_total{cap="per_address"}`] + m["fieldtap_http_connections"]
		if taken >= float64(len(held)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rss1 := rssKiB(t, pid)
	during := timedCall()
	rss2 := rssKiB(t, pid)

	limit := m["fieldtap_http_connections_limit"]
	t.Logf("%d connections from %d addresses held (%d dials failed); box RSS %d KiB before, %d KiB after the flood, %d KiB after a call; budget %d MiB; "+
		"connections open %v of %v, closed idle %v, refused global %v, refused per address %v; capture_status took %v before, %v during the flood",
		len(held), floodAddrs, failed, rss0, rss1, rss2, floodBudgetMiB, m["fieldtap_http_connections"], limit,
		m["fieldtap_http_connections_closed_idle_total"], m[`fieldtap_http_connections_refused_total{cap="global"}`],
		m[`fieldtap_http_connections_refused_total{cap="per_address"}`], before, during)
	if max(rss1, rss2) > floodBudgetMiB<<10 {
		t.Errorf("box RSS %d KiB with %d connections offered, over its %d MiB budget", max(rss1, rss2), len(held), floodBudgetMiB)
	}
	if limit != front.DefaultMaxConns || m["fieldtap_http_connections"] > limit {
		t.Errorf("connections open %v, limit %v; want at most %d", m["fieldtap_http_connections"], limit, front.DefaultMaxConns)
	}
	if m["fieldtap_http_connections_closed_idle_total"] < float64(len(held)-front.DefaultMaxConns) {
		t.Errorf("closed idle %v, want at least %d of the %d held connections closed to make room",
			m["fieldtap_http_connections_closed_idle_total"], len(held)-front.DefaultMaxConns, len(held))
	}
}

// bearerTransportOver adds a bearer token to every request sent through rt.
func bearerTransportOver(token string, rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// scrape reads the samples of a /metrics page by series (name and labels).
func scrape(t *testing.T, c *http.Client, url string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
