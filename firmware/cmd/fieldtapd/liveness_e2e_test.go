//go:build linux

package main

// Port liveness: a live port whose device goes away and comes back is
// noticed, shown as gone, restarted by the supervisor, counted, and
// captures again; its states are logged as they change.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stateLine is one "port state" log line: the port and the state it
// entered.
var stateLine = regexp.MustCompile(`msg="port state" port=(\S+) state=(\w+)`)

// statesLogged lists the states port entered, in the order fieldtapd
// logged them.
func statesLogged(stderr string, port string) []string {
	var out []string
	for _, m := range stateLine.FindAllStringSubmatch(stderr, -1) {
		if m[1] == port {
			out = append(out, m[2])
		}
	}
	return out
}

// inOrder reports whether want occur in got in that order, other
// entries allowed between them.
func inOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// sendUDP sends a datagram from ns to addr every few milliseconds until
// ctx ends, opening a new socket when a send fails (the address it was
// bound to went with its interface).
func sendUDP(ctx context.Context, ns, from string, to *net.UDPAddr) {
	go func() {
		var c *net.UDPConn
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		for n := 0; ctx.Err() == nil; n++ {
			if c == nil {
				var err error
				if c, err = udpIn(ns, from); err != nil {
					c = nil
					time.Sleep(50 * time.Millisecond)
					continue
				}
			}
			if _, err := c.WriteToUDP([]byte(fmt.Sprintf("liveness %d", n)), to); err != nil {
				c.Close()
				c = nil
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// TestSPANInterfaceRemovedAndBackIsRestarted deletes the veth pair under
// a live afpacket port (a USB NIC unplugged) and makes it again (plugged
// back in, with a new interface index). The port must say gone, be
// restarted and counted, and count frames sent after the new pair is up;
// its states must have gone from gone through restarting to capturing.
func TestSPANInterfaceRemovedAndBackIsRestarted(t *testing.T) {
	box, peer, dev := spanNetwork(t)
	peerDev := fmt.Sprintf("ftp%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 4*giveUp)
	defer cancel()
	s, stderr := spanBox(t, ctx, box, fmt.Sprintf("board = \"none\"\n[[port]]\nname = %q\ndriver = \"afpacket\"\ndevice = %q\n", spanCaptureDev, dev))
	to := &net.UDPAddr{IP: net.ParseIP(spanBoxAddr), Port: spanOtherPort}
	sending, stopSending := context.WithCancel(ctx)
	defer stopSending()
	sendUDP(sending, peer, spanPeerAddr+":0", to)

	first := waitPorts(t, ctx, s, func(p portStatus) bool { return p.Frames > 0 && p.State == "capturing" }, spanCaptureDev)[spanCaptureDev]
	if first.StateSince == nil || first.Restarts != 0 {
		t.Fatalf("%s before the unplug: %+v, want capturing since a time, no restart", spanCaptureDev, first)
	}

	unplugged := time.Now()
	sh(t, "ip", "-n", box, "link", "del", dev)
	// Gone, and the attempt that held the old socket ended (its error
	// recorded; the restart is counted when the next attempt starts).
	gone := waitPorts(t, ctx, s, func(p portStatus) bool { return p.State == "gone" && p.LastError != "" }, spanCaptureDev)[spanCaptureDev]
	noticed := time.Since(unplugged)
	if !strings.Contains(gone.LastError, dev) || gone.StateSince == nil {
		t.Errorf("%s while its interface is gone: %+v, want the last error naming %s and a since", spanCaptureDev, gone, dev)
	}

	plugged := time.Now()
	spanVeth(t, box, peer, dev, peerDev)
	back := waitPorts(t, ctx, s, func(p portStatus) bool {
		return p.State == "capturing" && p.Frames > gone.Frames+10
	}, spanCaptureDev)[spanCaptureDev]
	resumed := time.Since(plugged)
	if back.Restarts == 0 || !back.Live || back.StateSince == nil || !back.StateSince.After(*gone.StateSince) {
		t.Errorf("%s after the interface came back: %+v, want live, a restart counted, capturing since after it was gone (%v)", spanCaptureDev, back, gone.StateSince)
	}
	states := statesLogged(stderr.String(), spanCaptureDev)
	if !inOrder(states, []string{"gone", "restarting", "capturing"}) {
		t.Errorf("states logged for %s: %v, want gone, then restarting, then capturing", spanCaptureDev, states)
	}
	t.Logf("%s: gone shown %.2f s after the unplug, capturing again %.2f s after the plug; %d restarts, last error %q; states %v",
		spanCaptureDev, noticed.Seconds(), resumed.Seconds(), back.Restarts, back.LastError, states)
}

// TestSerialPortsGoneAndBackShowTheirState unplugs an slcan pty and a
// J1708 pty while both capture: both ports must say gone while their
// device node is missing, count a restart, and after new ptys are plugged
// in behind the same names go through restarting back to capturing,
// counting frames again.
func TestSerialPortsGoneAndBackShowTheirState(t *testing.T) {
	dir := t.TempDir()
	plugs := map[string]*ptyPlug{
		"bus1": {t: t, link: filepath.Join(dir, "j1708-tty")},
		"can1": {t: t, link: filepath.Join(dir, "slcan-tty")},
	}
	feeds := map[string]func(context.Context, *os.File){"bus1": feedJ1708, "can1": feedSlcan}
	for name, p := range plugs {
		p.plug(feeds[name])
	}
	// Unplugging twice is harmless: the cleanup takes whatever is in.
	t.Cleanup(func() {
		for _, p := range plugs {
			p.unplug()
		}
	})
	cfg := filepath.Join(dir, "fieldtapd.toml")
	body := "board = \"none\"\n" +
		"[[port]]\nname = \"bus1\"\ndriver = \"j1708\"\ndevice = \"" + plugs["bus1"].link + "\"\n" +
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = \"" + plugs["can1"].link + "\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	defer func() {
		if t.Failed() {
			t.Logf("fieldtapd stderr:\n%s", stderr.String())
		}
	}()
	names := []string{"bus1", "can1"}
	waitPorts(t, ctx, s, func(p portStatus) bool { return p.Frames > 0 && p.State == "capturing" }, names...)

	for _, p := range plugs {
		p.unplug()
	}
	gone := waitPorts(t, ctx, s, func(p portStatus) bool { return p.State == "gone" && p.Restarts > 0 }, names...)
	for name, p := range plugs {
		p.plug(feeds[name])
	}
	back := waitPorts(t, ctx, s, func(p portStatus) bool {
		return p.State == "capturing" && p.Frames > gone[p.Name].Frames
	}, names...)
	for _, name := range names {
		states := statesLogged(stderr.String(), name)
		if !inOrder(states, []string{"gone", "restarting", "capturing"}) {
			t.Errorf("states logged for %s: %v, want gone, then restarting, then capturing", name, states)
		}
		if p := back[name]; p.Restarts < gone[name].Restarts || !strings.Contains(p.LastError, plugs[name].link) {
			t.Errorf("%s after the plug: %+v, want its restarts kept and the last error naming %s", name, p, plugs[name].link)
		}
		t.Logf("%s: states %v, %d restarts, last error %q", name, slices.Compact(states), back[name].Restarts, back[name].LastError)
	}
}
