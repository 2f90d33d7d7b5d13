package hwtest

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	fb "fieldtap/board"
	"fieldtap/services/transmit"
)

// The one-frame send of the transmit check: PGN 0xFF00 from 0xF9.
const (
	txID   = "18FF00F9"
	txData = "4857544553540102" // "HWTEST" 01 02
	// statsToWait is how many STAT lines (about one a second) a
	// refused or unpressed send is watched for: nothing may reach can1
	// or leave can0.
	statsToWait = 2
	// ledSample is how often the host reads the status LED: a blink
	// lasts board.BlinkOn, many samples.
	ledSample = 10 * time.Millisecond
	// killFrames, 20 ms apart, make the plan the kill check interrupts:
	// the most a plan holds, about five seconds on the wire.
	killFrames = 256
)

// txResult is the part of a transmitting tool's envelope the check reads.
type txResult struct {
	OK   bool `json:"ok"`
	Data struct {
		Status string `json:"status"`
		Sent   int    `json:"frames_sent"`
	} `json:"data"`
	Errors []struct{ Code, Message string } `json:"errors"`
}

// buttonWaiting is transmit_status's confirm_button.waiting.
type buttonWaiting struct {
	PlanID string `json:"plan_id"`
	Code   string `json:"code"`
}

// txClient connects with the transmit token as a client that accepts
// every elicitation, recording what the person was asked.
func txClient(t *testing.T, ctx context.Context, endpoint string) (*sdk.ClientSession, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	client := sdk.NewClient(&sdk.Implementation{Name: "fieldtap-hwtest-transmit", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"send": true}}, nil
		},
	})
	hc := &http.Client{Transport: bearer{TxToken, http.DefaultTransport}}
	var cs *sdk.ClientSession
	var err error
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(250 * time.Millisecond) {
		if cs, err = client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("MCP connect with the transmit token: %v", err)
		}
	}
	return cs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// transmitCheck proves the socketcan write path and the confirm button
// end to end (docs/hardware-test.md): can0 listen-only at rest; a send
// while the key is off is refused by gate arm; with the key held on over
// qtest, can_send waits for the button with the plan's code blinking on
// the status LED, sends nothing until QMP presses it, then puts exactly
// one frame on the bus, and can0 is listen-only again afterwards.
func transmitCheck(t *testing.T, ctx context.Context, b *board, endpoint string) {
	cs, asked := txClient(t, ctx, endpoint)
	defer cs.Close()
	send := map[string]any{"port": "can0", "frames": []any{map[string]any{"id": txID, "data": txData}}, "dry_run": false, "ack_active": true}
	want := RxLine + " can1 " + txID + "#" + txData

	st := b.console.waitStat(t, "can0_mode", 0, checkGiveUp)
	if st["can0_mode"] != "listen-only" || st["can0_tx"] != "0" {
		t.Fatalf("before any send: can0 %s, tx_packets %s; want listen-only, 0", st["can0_mode"], st["can0_tx"])
	}
	t.Logf("at rest: can0 %s, tx_packets %s", st["can0_mode"], st["can0_tx"])

	t.Run("disarmed: refused by gate arm, nothing on the bus", func(t *testing.T) {
		if arm := captureStatus(t, ctx, cs).arm; arm.On || arm.Input != "gpio" {
			t.Fatalf("capture_status transmit_arm %+v, want off, input gpio", arm)
		}
		rx := len(b.console.grep(RxLine))
		res := callTx(t, ctx, cs, send)
		if res.OK || len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "gate arm") {
			t.Fatalf("disarmed can_send = %+v, want a refusal by gate arm", res)
		}
		t.Logf("can_send: %s", res.Errors[0].Message)
		st := b.console.nextStats(t, statsToWait)
		if got := b.console.grep(RxLine); len(got) != rx || st["can0_tx"] != "0" || st["can0_mode"] != "listen-only" {
			t.Errorf("after a refused send: can1 saw %v, can0 tx_packets %s, mode %s; want nothing, 0, listen-only", got[rx:], st["can0_tx"], st["can0_mode"])
		}
	})

	t.Run("armed over qtest, confirm pressed over QMP: one frame reaches can1, can0 back to listen-only", func(t *testing.T) {
		rx := len(b.console.grep(RxLine))
		b.setArm(t, true)
		defer b.setArm(t, false)
		t.Logf("capture_status transmit_arm while on: %+v", waitArm(t, ctx, cs, true))
		done := callTxAsync(ctx, cs, send)
		w := waitButton(t, ctx, cs)
		code := b.readBlinks(t)
		t.Logf("waiting for the button: plan %s, code %s; the status LED blinks %v", w.PlanID, w.Code, code)
		if transmit.ButtonCodeText(code) != w.Code {
			t.Errorf("the status LED blinks %v, transmit_status says %s", code, w.Code)
		}
		// While it waits, with every other gate open, nothing goes out.
		st := b.console.nextStats(t, statsToWait)
		if got := b.console.grep(RxLine); len(got) != rx || st["can0_tx"] != "0" {
			t.Fatalf("before the press: can1 saw %v, can0 tx_packets %s; want nothing", got[rx:], st["can0_tx"])
		}
		b.pressConfirm(t)
		res := <-done
		t.Logf("can_send: ok %v status %s frames_sent %d errors %+v", res.OK, res.Data.Status, res.Data.Sent, res.Errors)
		if !res.OK || res.Data.Status != "sent" || res.Data.Sent != 1 {
			t.Fatalf("pressed can_send = %+v, want sent, 1 frame", res)
		}
		if q := asked(); len(q) != 1 || !strings.Contains(q[0], txID) || !strings.Contains(q[0], "blinks "+w.Code) {
			t.Errorf("the person was asked %q, want one question showing %s and the blink code %s", q, txID, w.Code)
		}
		got := b.console.waitCount(t, RxLine, rx+1, checkGiveUp)[rx:]
		if len(got) != 1 || !strings.HasSuffix(got[0], want) {
			t.Errorf("can1 received %q, want exactly %q", got, want)
		}
		st = b.console.waitStatWhere(t, "can0 tx_packets 1 and listen-only", 0, checkGiveUp, func(st map[string]string) bool {
			return st["can0_tx"] == "1" && st["can0_mode"] == "listen-only"
		})
		t.Logf("can1: %s; kernel: can0 %s, tx_packets %s", strings.Join(got, " | "), st["can0_mode"], st["can0_tx"])
	})
	t.Logf("capture_status transmit_arm after the key is off: %+v", waitArm(t, ctx, cs, false))
}

var (
	killedField = regexp.MustCompile(`(\w+)=(\S+)`)
	slogTime    = regexp.MustCompile(`time=(\S+)`)
)

// killCheck is the crash: with the key on, a 256-frame can_send confirmed
// by button is under way when `guest killon` SIGKILLs every fieldtapd at
// its 5th frame on the bus, with can0 in normal mode. The init script's
// respawn loop starts fieldtapd again; its first act puts can0 back in
// listen-only, no more frames leave can0, and transmit_status on the new
// daemon says which plan the previous run left mid-send.
func killCheck(t *testing.T, ctx context.Context, b *board, endpoint string) {
	cs, _ := txClient(t, ctx, endpoint)
	defer cs.Close()
	frames := make([]any, killFrames)
	for i := range frames {
		frames[i] = map[string]any{"id": KillID, "data": "4B494C4C", "delay_ms": 20}
	}
	b.setArm(t, true)
	defer b.setArm(t, false)
	waitArm(t, ctx, cs, true)
	starts := len(b.console.grep("fieldtapd starting"))
	mark := b.console.size()
	resets := len(b.console.grep("put back in listen-only at start-up"))
	sent := callTxAsync(ctx, cs, map[string]any{"port": "can0", "frames": frames, "dry_run": false, "ack_active": true})
	defer func() {
		if !t.Failed() {
			return
		}
		select {
		case r := <-sent: // refused or ended early: say why
			t.Logf("can_send answered %+v", r)
		default:
			t.Log("can_send had not answered")
		}
	}()
	w := waitButton(t, ctx, cs)
	b.pressConfirm(t)
	killed := b.console.waitCount(t, KilledLine, 1, checkGiveUp)[0]
	at := map[string]string{}
	for _, m := range killedField.FindAllStringSubmatch(killed, -1) {
		at[m[1]] = m[2]
	}
	t.Logf("plan %s: %s", w.PlanID, killed)
	if at["can0_mode"] != "normal" {
		t.Errorf("at the kill can0 was %s; the check wants the plan under way (normal)", at["can0_mode"])
	}
	back := b.console.waitCount(t, ListenOnlyLine, 1, checkGiveUp)[0]
	t.Logf("%s", back)
	b.console.waitCount(t, "fieldtapd starting", starts+1, checkGiveUp)
	step := b.console.waitCount(t, "put back in listen-only at start-up", resets+1, checkGiveUp)
	restarted := b.console.size()
	t.Logf("restarted daemon: %s", strings.Join(step[resets:], " | "))
	// The guest's clock on both sides: the kill, the restarted
	// processes' first log line, the listen-only step.
	killedAt, _ := time.Parse(time.RFC3339Nano, at["at"])
	for _, l := range b.console.since(mark, "fieldtapd starting", "listen-only at start-up", "ended (status") {
		if m := slogTime.FindStringSubmatch(l); m != nil && !killedAt.IsZero() {
			if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
				t.Logf("after the kill +%v: %s", ts.Sub(killedAt).Round(time.Millisecond), l)
				continue
			}
		}
		t.Logf("after the kill: %s", l)
	}
	// The latest STAT line may still be one from before the plan ran
	// (listen-only, its frames not yet counted): only lines printed once
	// the restarted daemon reset the port count.
	st := b.console.waitStatWhere(t, "can0 listen-only after the restart", restarted, checkGiveUp, func(st map[string]string) bool { return st["can0_mode"] == "listen-only" })
	txd, _ := strconv.Atoi(st["can0_tx"])
	later := b.console.nextStats(t, statsToWait)
	if later["can0_tx"] != st["can0_tx"] || later["can0_mode"] != "listen-only" || txd >= 1+killFrames {
		t.Errorf("after the restart can0 tx_packets %s then %s, mode %s; want no more frames, listen-only", st["can0_tx"], later["can0_tx"], later["can0_mode"])
	}
	t.Logf("can0 sent %d frames of the 256-frame plan (and 1 earlier) before the kill; listen-only since", txd-1)

	cs2, _ := txClient(t, ctx, endpoint)
	defer cs2.Close()
	res, err := cs2.CallTool(ctx, &sdk.CallToolParams{Name: "transmit_status", Arguments: map[string]any{}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("transmit_status after the restart: %v", err)
	}
	var ts struct {
		Data struct {
			PreviousRun *struct {
				Interrupted []struct {
					PlanID string `json:"plan_id"`
					Port   string `json:"port"`
				} `json:"interrupted"`
				PortsReset []struct{ Port, Mode, Error string } `json:"ports_reset"`
			} `json:"previous_run"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &ts)
	pr := ts.Data.PreviousRun
	if pr == nil || len(pr.Interrupted) != 1 || pr.Interrupted[0].PlanID != w.PlanID || pr.Interrupted[0].Port != "can0" {
		t.Fatalf("transmit_status previous_run %+v, want plan %s on can0 interrupted", pr, w.PlanID)
	}
	t.Logf("transmit_status previous_run: %+v", *pr)
}

func callTx(t *testing.T, ctx context.Context, cs *sdk.ClientSession, args map[string]any) txResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "can_send", Arguments: args})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("can_send: %v %+v", err, res)
	}
	var r txResult
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// callTxAsync runs can_send in the background; a failed call (the daemon
// killed under it) reads as not ok.
func callTxAsync(ctx context.Context, cs *sdk.ClientSession, args map[string]any) chan txResult {
	done := make(chan txResult, 1)
	go func() {
		var r txResult
		if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "can_send", Arguments: args}); err == nil && len(res.Content) > 0 {
			json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &r)
		}
		done <- r
	}()
	return done
}

// waitButton polls transmit_status until a plan waits for the button.
func waitButton(t *testing.T, ctx context.Context, cs *sdk.ClientSession) buttonWaiting {
	t.Helper()
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(50 * time.Millisecond) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "transmit_status", Arguments: map[string]any{}})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("transmit_status: %v", err)
		}
		var st struct {
			Data struct {
				Button struct {
					Waiting *buttonWaiting `json:"waiting"`
				} `json:"confirm_button"`
			} `json:"data"`
		}
		json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &st)
		if w := st.Data.Button.Waiting; w != nil && w.PlanID != "" {
			return *w
		}
		if time.Now().After(deadline) {
			t.Fatal("transmit_status never showed a plan waiting for the button")
		}
	}
}

// readBlinks samples the status LED over qtest until it has seen one
// whole code (fb.BlinkSteps), and decodes it.
func (b *board) readBlinks(t *testing.T) []int {
	t.Helper()
	prof, err := fb.Load("qemu-virt")
	if err != nil {
		t.Fatal(err)
	}
	statusLED, err := fb.ParseLine(prof.GPIO.StatusLED)
	if err != nil {
		t.Fatal(err)
	}
	var runs []ledRun
	last := time.Now()
	for deadline := last.Add(checkGiveUp); time.Now().Before(deadline); time.Sleep(ledSample) {
		on, err := b.qt(t).readLine(statusLED.String())
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if n := len(runs); n > 0 && runs[n-1].on == on {
			runs[n-1].d += now.Sub(last)
		} else {
			runs = append(runs, ledRun{on: on, d: now.Sub(last)})
		}
		last = now
		if code, ok := decodeBlinks(runs); ok {
			return code
		}
	}
	t.Fatalf("no whole blink code on the status LED within %v: %d runs", checkGiveUp, len(runs))
	return nil
}

// waitArm polls capture_status until transmit_arm.on is on.
func waitArm(t *testing.T, ctx context.Context, cs *sdk.ClientSession, on bool) armStatus {
	t.Helper()
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(50 * time.Millisecond) {
		arm := captureStatus(t, ctx, cs).arm
		if arm.On == on {
			return arm
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture_status transmit_arm %+v, want on=%v", arm, on)
		}
	}
}

// boardUp reads one bring-up part from capture_status and fails unless
// it is up.
func boardUp(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string) boardPart {
	t.Helper()
	st := captureStatus(t, ctx, cs)
	p := st.part(name)
	if p == nil || p.Outcome != "up" {
		t.Fatalf("capture_status board part %s = %+v, want up; board %+v", name, p, st.board)
	}
	t.Logf("capture_status board: %s %s: %s", p.Part, p.Outcome, p.Detail)
	return *p
}

// statFields parses a STAT line.
func statFields(line string) map[string]string {
	m := map[string]string{}
	for _, f := range statField.FindAllStringSubmatch(line, -1) {
		m[f[1]] = f[2]
	}
	return m
}

// nextStats waits for n more STAT lines and returns the last one's fields.
func (c *console) nextStats(t *testing.T, n int) map[string]string {
	t.Helper()
	have := len(c.grep(StatLine))
	lines := c.waitCount(t, StatLine, have+n, checkGiveUp)
	return statFields(lines[len(lines)-1])
}

// waitStatWhere waits for a STAT line printed from console line mark on
// whose fields satisfy ok: an older line can satisfy it too and say
// nothing of what happened since.
func (c *console) waitStatWhere(t *testing.T, what string, mark int, d time.Duration, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	var last map[string]string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if stats := c.since(mark, StatLine); len(stats) > 0 {
			if last = statFields(stats[len(stats)-1]); ok(last) {
				return last
			}
		}
	}
	t.Fatalf("no STAT line with %s: last %v", what, last)
	return nil
}
