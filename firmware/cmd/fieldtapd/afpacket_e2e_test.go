//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The SPAN test network: two namespaces joined by a veth pair, addresses
// from a private /24 that exists only inside them.
const (
	spanBoxAddr    = "10.231.77.1" // the capture namespace's end
	spanPeerAddr   = "10.231.77.2" // the traffic generator's end
	spanPrefix     = "/24"
	spanSIPPort    = 5060
	spanOtherPort  = 5999 // SIP sent here must be dropped by the port's filter
	spanCalls      = 5
	spanCaptureDev = "span0"
)

// udpPort5060 is `udp port 5060` over IPv4 on Ethernet, printed below in
// the `tcpdump -dd` form the config takes.
var udpPort5060 = []bpf.Instruction{
	bpf.LoadAbsolute{Off: 12, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x0800, SkipFalse: 8},
	bpf.LoadAbsolute{Off: 23, Size: 1},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 17, SkipFalse: 6},
	bpf.LoadMemShift{Off: 14},
	bpf.LoadIndirect{Off: 14, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: spanSIPPort, SkipTrue: 2},
	bpf.LoadIndirect{Off: 16, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: spanSIPPort, SkipFalse: 1},
	bpf.RetConstant{Val: 262144},
	bpf.RetConstant{Val: 0},
}

func tcpdumpDD(t *testing.T, prog []bpf.Instruction) string {
	t.Helper()
	raw, err := bpf.Assemble(prog)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range raw {
		fmt.Fprintf(&b, "{ 0x%x, %d, %d, 0x%08x },\n", r.Op, r.Jt, r.Jf, r.K)
	}
	return b.String()
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// spanBox starts fieldtapd inside the box namespace with the
// configuration text config, over stdio through ip netns exec (the MCP
// wire needs no route into the namespace), and connects to it; its
// stderr is logged when the test fails.
func spanBox(t *testing.T, ctx context.Context, box, config string) (*sdk.ClientSession, *lockedBuffer) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", box, binary, "--mcp-transport", "stdio", "--config", cfg)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	s, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("fieldtapd stderr:\n%s", stderr.String())
		}
	})
	return s, stderr
}

// spanNetwork builds box and peer namespaces joined by a veth pair and
// returns their names and the box's interface; everything is removed at
// cleanup. It skips unless root can create namespaces.
func spanNetwork(t *testing.T) (box, peer, dev string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the SPAN test needs root: network namespaces, a veth pair and AF_PACKET")
	}
	id := os.Getpid()
	box, peer = fmt.Sprintf("ftap-box-%d", id), fmt.Sprintf("ftap-peer-%d", id)
	dev, peerDev := fmt.Sprintf("ftb%d", id), fmt.Sprintf("ftp%d", id)
	if out, err := exec.Command("ip", "netns", "add", box).CombinedOutput(); err != nil {
		t.Skipf("ip netns does not work here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", box).Run() })
	sh(t, "ip", "netns", "add", peer)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", peer).Run() })
	// Deleting a namespace deletes the veth end in it, and with it the pair.
	for _, ns := range []string{box, peer} {
		sh(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
		sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	spanVeth(t, box, peer, dev, peerDev)
	return box, peer, dev
}

// spanVeth joins box and peer with a veth pair, dev on the box's side,
// addressed and up: what spanNetwork builds, and what a test that
// unplugs the pair plugs in again.
func spanVeth(t *testing.T, box, peer, dev, peerDev string) {
	t.Helper()
	sh(t, "ip", "link", "add", dev, "netns", box, "type", "veth", "peer", "name", peerDev, "netns", peer)
	for _, side := range []struct{ ns, dev, addr string }{{box, dev, spanBoxAddr}, {peer, peerDev, spanPeerAddr}} {
		sh(t, "ip", "-n", side.ns, "addr", "add", side.addr+spanPrefix, "dev", side.dev)
		sh(t, "ip", "-n", side.ns, "link", "set", side.dev, "up")
	}
}

// udpIn opens a UDP socket bound in namespace ns, from a locked OS thread
// that is retired afterwards; the socket keeps its namespace.
func udpIn(ns, addr string) (*net.UDPConn, error) {
	type res struct {
		c   *net.UDPConn
		err error
	}
	done := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			done <- res{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- res{err: err}
			return
		}
		ua, err := net.ResolveUDPAddr("udp4", addr)
		if err != nil {
			done <- res{err: err}
			return
		}
		c, err := net.ListenUDP("udp4", ua)
		done <- res{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// sipCall plays one complete call between the peer (caller) and the box
// (callee): INVITE, 180, 200, ACK, BYE, 200.
func sipCall(caller, callee *net.UDPConn, callID string, to *net.UDPAddr, back *net.UDPAddr) error {
	hdr := func(cseq int, method, branch string) string {
		return fmt.Sprintf("Via: SIP/2.0/UDP %s:%d;branch=z9hG4bK%s\r\nFrom: <sip:1001@%s>;tag=a1\r\nTo: <sip:2002@%s>;tag=b2\r\nCall-ID: %s\r\nCSeq: %d %s\r\nUser-Agent: fieldtap-e2e\r\nContent-Length: 0\r\n\r\n",
			spanPeerAddr, spanSIPPort, branch, spanPeerAddr, spanBoxAddr, callID, cseq, method)
	}
	uri := fmt.Sprintf("sip:2002@%s", spanBoxAddr)
	steps := []struct {
		c   *net.UDPConn
		dst *net.UDPAddr
		msg string
	}{
		{caller, to, "INVITE " + uri + " SIP/2.0\r\n" + hdr(1, "INVITE", callID+"i")},
		{callee, back, "SIP/2.0 180 Ringing\r\n" + hdr(1, "INVITE", callID+"i")},
		{callee, back, "SIP/2.0 200 OK\r\n" + hdr(1, "INVITE", callID+"i")},
		{caller, to, "ACK " + uri + " SIP/2.0\r\n" + hdr(1, "ACK", callID+"a")},
		{caller, to, "BYE " + uri + " SIP/2.0\r\n" + hdr(2, "BYE", callID+"b")},
		{callee, back, "SIP/2.0 200 OK\r\n" + hdr(2, "BYE", callID+"b")},
	}
	for _, s := range steps {
		if _, err := s.c.WriteToUDP([]byte(s.msg), s.dst); err != nil {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func callTool(t *testing.T, ctx context.Context, s *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s failed: %+v", name, res.Content)
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestSPANCaptureInNetns runs the real fieldtapd in one namespace with an
// afpacket port on its veth end, plays SIP calls from the other namespace,
// and reads them back over MCP while the capture runs.
func TestSPANCaptureInNetns(t *testing.T) {
	box, peer, dev := spanNetwork(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	s, _ := spanBox(t, ctx, box, fmt.Sprintf("board = \"none\"\n[[port]]\nname = %q\ndriver = \"afpacket\"\ndevice = %q\nfilter = \"\"\"\n%s\"\"\"\n",
		spanCaptureDev, dev, tcpdumpDD(t, udpPort5060)))

	caller, err := udpIn(peer, fmt.Sprintf("%s:%d", spanPeerAddr, spanSIPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	callee, err := udpIn(box, fmt.Sprintf("%s:%d", spanBoxAddr, spanSIPPort))
	if err != nil {
		t.Fatal(err)
	}
	defer callee.Close()
	sink, err := udpIn(box, fmt.Sprintf("%s:%d", spanBoxAddr, spanOtherPort))
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	// Neither port of this one is 5060 (udp port matches either end).
	stranger, err := udpIn(peer, spanPeerAddr+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	to := &net.UDPAddr{IP: net.ParseIP(spanBoxAddr), Port: spanSIPPort}
	back := &net.UDPAddr{IP: net.ParseIP(spanPeerAddr), Port: spanSIPPort}
	other := &net.UDPAddr{IP: net.ParseIP(spanBoxAddr), Port: spanOtherPort}

	// The port opens asynchronously: keep playing calls until they show.
	type listOut struct {
		Items []struct {
			CallID string `json:"call_id"`
			State  string `json:"state"`
		} `json:"items"`
		Page struct {
			TotalMatched int `json:"total_matched"`
		} `json:"page"`
		Source struct {
			Live bool `json:"live"`
		} `json:"source"`
	}
	deadline := time.Now().Add(giveUp)
	round := 0
	var got listOut
	for {
		for i := range spanCalls {
			if err := sipCall(caller, callee, fmt.Sprintf("e2e-%d-%d", round, i), to, back); err != nil {
				t.Fatal(err)
			}
		}
		// SIP to another port: the config's BPF filter keeps it out.
		stranger.WriteToUDP([]byte("OPTIONS sip:x SIP/2.0\r\nCall-ID: filtered-out\r\nCSeq: 1 OPTIONS\r\nFrom: <sip:a@b>\r\nTo: <sip:c@d>\r\nVia: SIP/2.0/UDP x;branch=z9hG4bKf\r\nContent-Length: 0\r\n\r\n"), other)
		time.Sleep(200 * time.Millisecond)
		callTool(t, ctx, s, "list_dialogs", map[string]any{"filter": fmt.Sprintf("call_id ~ \"^e2e-%d-\" and state == ended", round), "limit": 100}, &got)
		if got.Page.TotalMatched == spanCalls {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v only %d of %d ended calls listed: %+v", giveUp, got.Page.TotalMatched, spanCalls, got)
		}
		round++
	}
	if !got.Source.Live {
		t.Error("source.live is false while the afpacket port runs")
	}
	var filtered listOut
	callTool(t, ctx, s, "list_dialogs", map[string]any{"filter": "call_id == \"filtered-out\""}, &filtered)
	if filtered.Page.TotalMatched != 0 {
		t.Errorf("SIP to port %d passed the BPF filter: %+v", spanOtherPort, filtered)
	}

	env := captureStatus(t, ctx, s)
	var span *portStatus
	for i := range env.Data.Ports {
		if env.Data.Ports[i].Name == spanCaptureDev {
			span = &env.Data.Ports[i]
		}
	}
	if span == nil {
		t.Fatalf("capture_status has no %s: %+v", spanCaptureDev, env.Data.Ports)
	}
	kernel, hasKernel := span.Drops["kernel"]
	freezes, hasFreezes := span.Drops["kernel_queue_freezes"]
	if span.Kind != "ethernet" || !span.Live || span.Source != "afpacket:"+dev || span.Frames == 0 || !hasKernel || !hasFreezes {
		t.Errorf("%s = %+v, want a live ethernet port counting frames with kernel drop counters", spanCaptureDev, *span)
	}
	t.Logf("%s: %d frames, kernel drops %d, queue freezes %d, all drops %v; %d rounds of %d calls",
		spanCaptureDev, span.Frames, kernel, freezes, span.Drops, round+1, spanCalls)
}
