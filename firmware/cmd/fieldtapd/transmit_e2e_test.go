//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/slcan"
	"fieldtap/drivers/slcan/slcantest"
)

const e2eVIN = "1FUJGLDR5CLBP8834"

// txResult is the part of a transmitting tool's envelope the test reads.
type txResult struct {
	OK       bool     `json:"ok"`
	Warnings []string `json:"warnings"`
	Data     struct {
		Status    string `json:"status"`
		Sent      int    `json:"frames_sent"`
		Uncertain *struct {
			Frame     int     `json:"frame"`
			LateReply *string `json:"late_reply"`
		} `json:"uncertain"`
		Answers []struct {
			From string         `json:"from"`
			PGN  uint32         `json:"pgn"`
			Via  string         `json:"via"`
			Data string         `json:"data"`
			Text string         `json:"text"`
			UDS  map[string]any `json:"uds"`
		} `json:"answers"`
	} `json:"data"`
	Errors []struct{ Code, Message, Hint string } `json:"errors"`
}

// witnessed is a mode command the adapter got, with the arm input then.
type witnessed struct {
	cmd   string
	armed bool
}

// TestTransmitThroughGatekeeperOverSlcan drives the real fieldtapd with
// an slcan port whose simulated CANable has an engine ECU on its bus
// (slcanTransmitBox): a VIN by BAM, a UDS VIN with flow control, a
// disarmed refusal, O only while armed, and every attempt audited.
func TestTransmitThroughGatekeeperOverSlcan(t *testing.T) {
	dir := t.TempDir()
	armFile := filepath.Join(dir, "arm")
	auditFile := filepath.Join(dir, "transmit.jsonl")
	setArm := func(v string) {
		if err := os.WriteFile(armFile, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	ecu := slcantest.NewECU(e2eVIN)
	var wmu sync.Mutex
	var modes []witnessed
	ad, s, stderr, asked := slcanTransmitBox(t, ctx, armFile, auditFile, func(ad *slcantest.Adapter) {
		ad.AttachECU(ecu)
		ad.Witness = func(cmd string) {
			if cmd == "O" || cmd == "L" || cmd == "C" {
				b, _ := os.ReadFile(armFile)
				wmu.Lock()
				modes = append(modes, witnessed{cmd, strings.HasPrefix(string(b), "armed")})
				wmu.Unlock()
			}
		}
	})
	defer s.Close()

	// 1. J1939 Request for the VIN, answered by BAM.
	res := callTx(t, ctx, s, "j1939_request", map[string]any{"port": "can1", "pgn": 65260, "da": 0, "sa": 0xF9, "dry_run": false, "ack_active": true})
	t.Logf("j1939_request: status %s, frames_sent %d, answers %+v", res.Data.Status, res.Data.Sent, res.Data.Answers)
	if !res.OK || res.Data.Status != "sent" || res.Data.Sent != 1 {
		t.Fatalf("j1939_request = %+v\n%s", res, stderr.String())
	}
	if len(*asked) != 1 || !strings.Contains((*asked)[0], "18EA00F9 [3] EC FE 00") {
		t.Errorf("the person was asked %q, want the plan's frame byte for byte", *asked)
	}
	if len(res.Data.Answers) == 0 || res.Data.Answers[0].From != "00" || res.Data.Answers[0].PGN != 65260 ||
		!strings.Contains(res.Data.Answers[0].Via, "BAM") || !strings.Contains(res.Data.Answers[0].Text, e2eVIN) {
		t.Errorf("answers %+v, want the VIN from 00 by BAM", res.Data.Answers)
	}
	rx := ad.Received()
	if len(rx) != 1 || !rx[0].Ext || rx[0].ID != 0x18EA00F9 || string(rx[0].Data) != "\xEC\xFE\x00" || rx[0].Mode != "normal" {
		t.Fatalf("on the wire: %+v, want exactly 18EA00F9 EC FE 00 in normal mode", rx)
	}
	if ad.Mode() != "listen" {
		t.Errorf("adapter mode %q after the plan, want listen", ad.Mode())
	}

	// 2. UDS ReadDataByIdentifier F190 with a multi-frame answer.
	*asked = nil
	res = callTx(t, ctx, s, "uds_request", map[string]any{"port": "can1", "service": "read_did", "did": "F190", "dry_run": false, "ack_active": true})
	t.Logf("uds_request: status %s, frames_sent %d, answers %+v", res.Data.Status, res.Data.Sent, res.Data.Answers)
	if !res.OK || res.Data.Status != "sent" || res.Data.Sent != 2 {
		t.Fatalf("uds_request = %+v (want the request and our flow control sent)\n%s", res, stderr.String())
	}
	if len(res.Data.Answers) != 1 || res.Data.Answers[0].From != "7E8" || !strings.Contains(res.Data.Answers[0].Text, e2eVIN) {
		t.Errorf("answers %+v, want the VIN from 7E8", res.Data.Answers)
	}
	if ecu.FlowControls() != 1 {
		t.Errorf("the ECU saw %d flow controls, want 1", ecu.FlowControls())
	}
	rx = ad.Received()
	if len(rx) != 3 || rx[1].ID != 0x7E0 || rx[1].Data[1] != 0x22 || rx[2].ID != 0x7E0 || rx[2].Data[0] != 0x30 {
		t.Errorf("on the wire: %+v, want the request then flow control on 7E0", rx)
	}

	// 3. Disarmed: refused by the arm gate, nothing more on the wire.
	setArm("off")
	res = callTx(t, ctx, s, "j1939_request", map[string]any{"port": "can1", "pgn": 65260, "da": 0, "dry_run": false, "ack_active": true})
	t.Logf("disarmed j1939_request: ok %v errors %+v", res.OK, res.Errors)
	if res.OK || len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "gate arm") {
		t.Errorf("disarmed request = %+v, want a refusal by gate arm", res)
	}
	if n := len(ad.Received()); n != 3 {
		t.Errorf("%d frames on the wire after a disarmed request, want still 3", n)
	}

	// O only while armed, L after every plan.
	wmu.Lock()
	t.Logf("mode commands: %+v", modes)
	var os_, ls int
	for i, w := range modes {
		switch w.cmd {
		case "O":
			os_++
			if !w.armed {
				t.Errorf("O at %d while disarmed", i)
			}
			if i+2 >= len(modes) || modes[i+1].cmd != "C" || modes[i+2].cmd != "L" {
				t.Errorf("O at %d not followed by C, L: %+v", i, modes[i:])
			}
		case "L":
			ls++
		}
	}
	wmu.Unlock()
	if os_ != 2 || ls != 4 {
		t.Errorf("%d O and %d L, want 2 plans (O each) and 4 L (the start-up listen-only step, the capture session's open, after each plan)", os_, ls)
	}
	if ad.Mode() != "listen" {
		t.Errorf("adapter left in %q", ad.Mode())
	}

	// The audit file holds every attempt, the refused one included.
	events := auditEvents(t, auditFile)
	t.Logf("audit: %v", events)
	want := []string{"started", "planned", "confirmation_asked", "sending", "sent", "planned", "confirmation_asked", "sending", "sent", "planned", "refused:arm"}
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("audit events %v\nwant %v", events, want)
	}
}

// slcanTransmitBox runs the real fieldtapd (sim board for its arm file,
// armed, plus an slcan [[port]] can1 with transmit = true on a pty whose
// far end is a simulated CANable, which setup may dress before it
// serves) and connects over stdio with the go-sdk client, which accepts
// every elicitation. Stdio, because over HTTP the service demands a
// token with the transmit scope (services/transmit/execute.go,
// GateScope). It returns once the adapter has been opened twice: the
// start-up listen-only step, then the capture session a plan switches
// to O.
func slcanTransmitBox(t *testing.T, ctx context.Context, armFile, auditFile string, setup func(*slcantest.Adapter)) (*slcantest.Adapter, *sdk.ClientSession, *lockedBuffer, *[]string) {
	t.Helper()
	if err := os.WriteFile(armFile, []byte("armed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ad, device := servedCANable(t, setup)

	cfg := filepath.Join(filepath.Dir(auditFile), "fieldtapd.toml")
	body := `board = "sim"
[transmit]
arm_file = "` + armFile + `"
audit_file = "` + auditFile + `"
[[port]]
name = "can1"
driver = "slcan"
device = "` + device + `"
bitrate = 250000
transmit = true
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, stderr, asked := connectConfirming(t, ctx, cfg, "server,can,j1939,transmit")
	for deadline := time.Now().Add(giveUp); countCmd(ad.Commands(), "L") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.Close()
			t.Fatalf("adapter never opened twice (start-up step, capture session); commands %q\n%s", ad.Commands(), stderr.String())
		}
	}
	if cmds := ad.Commands(); len(cmds) < 3 || cmds[0] != "C" || cmds[2] != "L" {
		t.Errorf("the adapter's first commands %q, want the start-up C, S, L before anything else", cmds)
	}
	return ad, s, stderr, asked
}

// TestSlcanLateAckIsUncertain is issue #33's DM11: the adapter puts the
// frame on the bus but acknowledges it only after the box stopped waiting
// (300 ms by default). The answer is uncertain, not refused: frame 1 may
// have gone out, and the adapter acknowledged it later. The transmit audit
// ends the run with one record (uncertain, late_reply ack), the port is
// back in listen-only, and capture_status counts tx_no_ack and
// tx_late_ack.
func TestSlcanLateAckIsUncertain(t *testing.T) {
	dir := t.TempDir()
	armFile, auditFile := filepath.Join(dir, "arm"), filepath.Join(dir, "transmit.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	ad, s, stderr, asked := slcanTransmitBox(t, ctx, armFile, auditFile, func(*slcantest.Adapter) {})
	defer s.Close()
	release := ad.HoldNextTransmitReply()
	type called struct {
		r   *sdk.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "j1939_request_dm",
			Arguments: map[string]any{"port": "can1", "dm": "DM11", "da": 0, "dry_run": false, "ack_active": true}})
		done <- called{r, err}
	}()
	// The adapter answers once the box has stopped waiting for it, as the
	// measured one did: the box counts the silence, then the ack comes.
	for deadline := time.Now().Add(giveUp); portErrorCounts(t, ctx, s, "can1")[slcan.ReasonTxNoAck] == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the box never gave up waiting for the DM11's acknowledgement\n%s", stderr.String())
		}
	}
	release()
	var c called
	select {
	case c = <-done:
	case <-time.After(giveUp):
		t.Fatalf("j1939_request_dm never answered\n%s", stderr.String())
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	var res txResult
	if err := json.Unmarshal([]byte(c.r.Content[0].(*sdk.TextContent).Text), &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("j1939_request_dm DM11: ok %v status %s uncertain %+v warnings %q errors %+v", res.OK, res.Data.Status, res.Data.Uncertain, res.Warnings, res.Errors)
	u := res.Data.Uncertain
	if !res.OK || c.r.IsError || res.Data.Status != "uncertain" || res.Data.Sent != 0 || u == nil || u.Frame != 1 || u.LateReply == nil || *u.LateReply != "ack" {
		t.Fatalf("answer %+v, want uncertain: frame 1 may have gone out, acknowledged late\n%s", res, stderr.String())
	}
	if w := strings.Join(res.Warnings, " "); !strings.Contains(w, "frame 1 of 1 may have gone out") || !strings.Contains(w, "most likely went out") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if len(*asked) != 1 || !strings.Contains((*asked)[0], "D3 FE 00") {
		t.Errorf("the person was asked %q, want the DM11 byte for byte", *asked)
	}
	rx := ad.Received()
	if len(rx) != 1 || rx[0].ID != 0x18EA00F9 || string(rx[0].Data) != "\xD3\xFE\x00" || rx[0].Mode != "normal" {
		t.Errorf("on the wire: %+v, want the DM11 once, in normal mode", rx)
	}
	if ad.Mode() != "listen" {
		t.Errorf("adapter left in %q", ad.Mode())
	}
	if e := portErrorCounts(t, ctx, s, "can1"); e[slcan.ReasonTxNoAck] != 1 || e[slcan.ReasonTxLateAck] != 1 {
		t.Errorf("can1 errors %v, want one tx_no_ack and one tx_late_ack", e)
	}
	events := auditEvents(t, auditFile)
	if want := "started planned confirmation_asked sending uncertain"; strings.Join(events, " ") != want {
		t.Errorf("audit events %v, want %s: one record ends the run", events, want)
	}
	if b, _ := os.ReadFile(auditFile); !strings.Contains(string(b), `"late_reply":"ack"`) {
		t.Errorf("the uncertain record does not carry the late acknowledgement:\n%s", b)
	}
}

// portErrorCounts is one port's error counters from capture_status, by reason.
func portErrorCounts(t *testing.T, ctx context.Context, s *sdk.ClientSession, port string) map[string]uint64 {
	t.Helper()
	for _, p := range captureStatus(t, ctx, s).Data.Ports {
		if p.Name == port {
			return p.Errors
		}
	}
	t.Fatalf("capture_status has no port %s", port)
	return nil
}

func countCmd(cmds []string, cmd string) int {
	n := 0
	for _, c := range cmds {
		if c == cmd {
			n++
		}
	}
	return n
}

func callTx(t *testing.T, ctx context.Context, s *sdk.ClientSession, name string, args map[string]any) txResult {
	t.Helper()
	r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out txResult
	if len(r.Content) == 0 {
		t.Fatalf("%s: empty result", name)
	}
	if err := json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// auditEvents reads the transmit audit file as "event" or "event:gate".
func auditEvents(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Event, Gate string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		e := r.Event
		if r.Gate != "" {
			e += ":" + r.Gate
		}
		evs = append(evs, e)
	}
	return evs
}
