//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/tools/freeport"
)

// startKamailioTracer runs Debian's Kamailio on loopback as a proxy that
// mirrors every SIP message it receives and sends to a hep port by
// siptrace (HEP3 over hepProto, udp or tcp; capture id 2001): OPTIONS
// answered statelessly, INVITE relayed statefully to callee. It returns
// Kamailio's UDP port.
func startKamailioTracer(t *testing.T, hepListen, hepProto string, callee int) int {
	t.Helper()
	bin, err := exec.LookPath("kamailio")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/kamailio"); err != nil {
			t.Skip("kamailio not installed (Debian package kamailio; .ci/run installs it)")
		}
		bin = "/usr/sbin/kamailio"
	}
	mods, _ := filepath.Glob("/usr/lib/*/kamailio/modules/siptrace.so")
	if len(mods) == 0 {
		t.Skip("kamailio's siptrace.so is missing (Debian package kamailio)")
	}
	port := freeport.Pick(t, "udp+tcp") // it listens on both
	dir := t.TempDir()
	cfg := fmt.Sprintf(`#!KAMAILIO
debug=2
log_stderror=yes
fork=yes
children=1
auto_aliases=no
listen=udp:127.0.0.1:%d
listen=tcp:127.0.0.1:%d
mpath="%s"
loadmodule "sl.so"
loadmodule "tm.so"
loadmodule "siptrace.so"
modparam("siptrace", "duplicate_uri", "sip:%s;transport=%s")
modparam("siptrace", "hep_mode_on", 1)
modparam("siptrace", "hep_version", 3)
modparam("siptrace", "hep_capture_id", 2001)
modparam("siptrace", "trace_to_database", 0)
modparam("siptrace", "trace_on", 1)
modparam("siptrace", "trace_mode", 1)
request_route {
	if (method == "OPTIONS") { sl_send_reply("200", "OK"); exit; }
	if (method == "INVITE") { t_relay_to_udp("127.0.0.1", "%d"); exit; }
	if (method == "ACK") { t_check_trans(); exit; }
	sl_send_reply("405", "Method Not Allowed");
}
`, port, port, filepath.Dir(mods[0]), hepListen, hepProto, callee)
	runKamailio(t, bin, dir, cfg)
	return port
}

// wireMsg is one SIP message as an endpoint of the test sent or got it.
type wireMsg struct {
	CallID   string // not in String: the box's messages are listed by call
	Src, Dst string
	Method   string // the request's, or the CSeq method of a response
	Status   int    // 0 for a request
}

func (m wireMsg) String() string { return fmt.Sprintf("%s>%s %s %d", m.Src, m.Dst, m.Method, m.Status) }

var (
	cseqRe   = regexp.MustCompile(`(?m)^CSeq:\s*\d+\s+(\S+)`)
	callIDRe = regexp.MustCompile(`(?m)^Call-ID:\s*(\S+)`)
)

func wireMsgOf(src, dst string, b []byte) wireMsg {
	m := wireMsg{Src: src, Dst: dst}
	if c := callIDRe.FindSubmatch(b); c != nil {
		m.CallID = string(c[1])
	}
	line, _, _ := strings.Cut(string(b), "\r\n")
	if rest, ok := strings.CutPrefix(line, "SIP/2.0 "); ok {
		m.Status, _ = strconv.Atoi(rest[:3])
		if c := cseqRe.FindStringSubmatch(string(b)); c != nil {
			m.Method = c[1]
		}
	} else {
		m.Method, _, _ = strings.Cut(line, " ")
	}
	return m
}

// sipEnd is a UDP endpoint of the test that logs what it sends and gets.
type sipEnd struct {
	c   *net.UDPConn
	mu  sync.Mutex
	log []wireMsg
	in  chan []byte
}

func newSIPEnd(t *testing.T) *sipEnd {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	e := &sipEnd{c: c, in: make(chan []byte, 16)}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				close(e.in)
				return
			}
			b := bytes.Clone(buf[:n])
			e.note(wireMsgOf(from.String(), e.addr(), b))
			e.in <- b
		}
	}()
	return e
}

func (e *sipEnd) addr() string { return e.c.LocalAddr().String() }

func (e *sipEnd) note(m wireMsg) {
	e.mu.Lock()
	e.log = append(e.log, m)
	e.mu.Unlock()
}

func (e *sipEnd) send(t *testing.T, to int, msg string) {
	t.Helper()
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: to}
	if _, err := e.c.WriteToUDP([]byte(msg), dst); err != nil {
		t.Fatal(err)
	}
	e.note(wireMsgOf(e.addr(), dst.String(), []byte(msg)))
}

// recv waits for the next message whose start line starts with prefix,
// skipping others (a provisional response).
func (e *sipEnd) recv(t *testing.T, prefix string) []byte {
	t.Helper()
	timeout := time.After(giveUp)
	for {
		select {
		case b, ok := <-e.in:
			if !ok {
				t.Fatal("socket closed")
			}
			if bytes.HasPrefix(b, []byte(prefix)) {
				return b
			}
		case <-timeout:
			t.Fatalf("no %q in %v", prefix, giveUp)
		}
	}
}

var (
	viaRe = regexp.MustCompile(`(?m)^Via:.*\r\n`)
	toRe  = regexp.MustCompile(`(?m)^To:.*\r\n`)
)

// TestHEPFromKamailio: SIP passes through Debian's Kamailio, whose
// siptrace sends a HEP3 copy of every message it receives and sends to
// a fieldtapd hep port, over UDP and over TCP. The box's dialogs hold
// exactly the messages the test's two endpoints sent and got on the
// wire, with their addresses.
func TestHEPFromKamailio(t *testing.T) {
	for _, proto := range []string{"udp", "tcp"} {
		t.Run("hep over "+proto, func(t *testing.T) { hepFromKamailio(t, proto) })
	}
}

func hepFromKamailio(t *testing.T, hepProto string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	listen := hepListen(t)
	caller, callee := newSIPEnd(t), newSIPEnd(t)
	kport := startKamailioTracer(t, listen, hepProto, callee.c.LocalAddr().(*net.UDPAddr).Port)
	b := startHEPBox(t, ctx, fmt.Sprintf("board = \"none\"\n[[port]]\nname = \"hep0\"\ndriver = \"hep\"\nlisten = %q\ncapture_ids = [2001]\n", listen))
	hepWait(t, b, "opened the hep port", func() bool {
		p := byName(captureStatus(t, ctx, b.s))["hep0"]
		return p.State == "capturing" || p.State == "silent"
	})

	me, k := caller.addr(), fmt.Sprintf("127.0.0.1:%d", kport)
	// A probe, sent until Kamailio answers (it starts listening on its
	// own time), then the OPTIONS it answers itself.
	probe := "OPTIONS sip:ping@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-%s\r\nFrom: <sip:a@%s>;tag=o1\r\nTo: <sip:ping@%s>\r\n" +
		"Call-ID: %s\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
	for i, answered := 0, false; !answered; i++ {
		caller.send(t, kport, fmt.Sprintf(probe, k, me, "probe"+strconv.Itoa(i), me, k, "hep-probe@test"))
		select {
		case b := <-caller.in:
			answered = bytes.HasPrefix(b, []byte("SIP/2.0 200"))
		case <-time.After(time.Second):
		case <-ctx.Done():
			t.Fatalf("kamailio on 127.0.0.1:%d answered none of %d OPTIONS probes in %s (its log follows)", kport, i+1, 3*giveUp)
		}
	}
	caller.send(t, kport, fmt.Sprintf(probe, k, me, "opt", me, k, "hep-options@test"))
	caller.recv(t, "SIP/2.0 200")
	// INVITE relayed to the callee, who is busy; the caller ACKs the 486.
	inv := fmt.Sprintf("INVITE sip:bob@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-inv\r\nFrom: <sip:a@%s>;tag=i1\r\nTo: <sip:bob@%s>\r\n"+
		"Call-ID: hep-invite@test\r\nCSeq: 1 INVITE\r\nContact: <sip:a@%s>\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", k, me, me, k, me)
	caller.send(t, kport, inv)
	got := callee.recv(t, "INVITE ")
	vias := strings.Join(viaRe.FindAllString(string(got), -1), "")
	to := strings.TrimSuffix(toRe.FindString(string(got)), "\r\n") + ";tag=busy1\r\n"
	callee.send(t, kport, "SIP/2.0 486 Busy Here\r\n"+vias+fmt.Sprintf("From: <sip:a@%s>;tag=i1\r\n", me)+to+
		"Call-ID: hep-invite@test\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n")
	busy := caller.recv(t, "SIP/2.0 486")
	caller.send(t, kport, fmt.Sprintf("ACK sip:bob@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-inv\r\nFrom: <sip:a@%s>;tag=i1\r\n%s"+
		"Call-ID: hep-invite@test\r\nCSeq: 1 ACK\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", k, me, me, toRe.FindString(string(busy))))
	callee.recv(t, "ACK ")

	caller.mu.Lock()
	callee.mu.Lock()
	var want []string
	for _, m := range append(slices.Clone(caller.log), callee.log...) {
		if m.CallID != "hep-probe@test" {
			want = append(want, m.String())
		}
	}
	callee.mu.Unlock()
	caller.mu.Unlock()
	slices.Sort(want)

	var seen []string
	hepWait(t, b, fmt.Sprintf("held the %d messages on the wire", len(want)), func() bool {
		seen = boxMessages(t, ctx, b, "hep-options@test", "hep-invite@test")
		return len(seen) >= len(want)
	})
	if !slices.Equal(seen, want) {
		t.Errorf("the box's messages differ from the wire's:\nbox  %q\nwire %q", seen, want)
	}
	var dialogs answer
	callTool(t, ctx, b.s, "list_dialogs", map[string]any{}, &dialogs)
	states := map[string]string{}
	for _, d := range dialogs.Items {
		states[d["call_id"].(string)] = fmt.Sprint(d["state"], " ", d["final_code"])
	}
	if states["hep-invite@test"] != "failed 486" || states["hep-options@test"] != "completed 200" {
		t.Errorf("dialogs %v, want the OPTIONS completed 200 and the INVITE failed 486", states)
	}
	t.Logf("%d messages on the wire, all in the box: %q; dialogs %v", len(want), want, states)
}

// boxMessages are the messages of the box's dialogs, as wireMsg strings,
// sorted.
func boxMessages(t *testing.T, ctx context.Context, b hepBox, callIDs ...string) []string {
	t.Helper()
	var out []string
	for _, id := range callIDs {
		var d struct {
			OK   bool `json:"ok"`
			Data struct {
				Messages []struct {
					Src, Dst   string
					Method     string `json:"method"`
					StatusCode int    `json:"status_code"`
				} `json:"messages"`
			} `json:"data"`
		}
		res, err := b.s.CallTool(ctx, &sdk.CallToolParams{Name: "get_dialog", Arguments: map[string]any{"call_id": id}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			continue // not there yet
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &d); err != nil {
			t.Fatal(err)
		}
		for _, m := range d.Data.Messages {
			out = append(out, wireMsg{Src: m.Src, Dst: m.Dst, Method: m.Method, Status: m.StatusCode}.String())
		}
	}
	slices.Sort(out)
	return out
}
