package hwtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The frame the box sends on can0: a proprietary-B PGN (0xFF00) from the
// off-board tool address 0xF9, which no analyser acts on.
const (
	txID   = "18FF00F9"
	txData = "4857544553540102" // "HWTEST" 01 02
	// statsToWait is how many STAT lines (about one a second) a
	// refused send is watched for: nothing may reach can1 or leave can0.
	statsToWait = 2
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

// transmitCheck proves the socketcan write path end to end (docs/can-drivers.md):
// can0 listen-only at rest; a send while the arm input is off is refused
// by the arm gate and nothing reaches can1; with the key held on over QMP,
// can_send (dry_run false, ack_active true, confirmed through elicitation)
// puts exactly one frame on the bus, can1 receives it, and can0 is back in
// listen-only afterwards.
func transmitCheck(t *testing.T, ctx context.Context, b *board, endpoint string) {
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
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("MCP connect with the transmit token: %v", err)
	}
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

	t.Run("armed over QMP: one frame reaches can1, can0 back to listen-only", func(t *testing.T) {
		rx := len(b.console.grep(RxLine))
		release := b.holdArm(t)
		arm := waitArm(t, ctx, cs, true)
		t.Logf("capture_status transmit_arm while held: %+v", arm)
		res := callTx(t, ctx, cs, send)
		presses, qerr := release()
		if qerr != nil {
			t.Errorf("holding the key: %v", qerr)
		}
		t.Logf("can_send: ok %v status %s frames_sent %d errors %+v (key pressed %d times)", res.OK, res.Data.Status, res.Data.Sent, res.Errors, presses)
		if !res.OK || res.Data.Status != "sent" || res.Data.Sent != 1 {
			t.Fatalf("armed can_send = %+v, want sent, 1 frame", res)
		}
		mu.Lock()
		if len(asked) != 1 || !strings.Contains(asked[0], txID) {
			t.Errorf("the person was asked %q, want one question showing %s", asked, txID)
		}
		mu.Unlock()
		got := b.console.waitCount(t, RxLine, rx+1, checkGiveUp)[rx:]
		if len(got) != 1 || !strings.HasSuffix(got[0], want) {
			t.Errorf("can1 received %q, want exactly %q", got, want)
		}
		st := b.console.waitStatWhere(t, "can0 tx_packets 1 and listen-only", checkGiveUp, func(st map[string]string) bool {
			return st["can0_tx"] == "1" && st["can0_mode"] == "listen-only"
		})
		t.Logf("can1: %s; kernel: can0 %s, tx_packets %s", strings.Join(got, " | "), st["can0_mode"], st["can0_tx"])
		t.Logf("capture_status transmit_arm after release: %+v", waitArm(t, ctx, cs, false))
	})
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

// waitStatWhere waits for a STAT line whose fields satisfy ok.
func (c *console) waitStatWhere(t *testing.T, what string, d time.Duration, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	var last map[string]string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if stats := c.grep(StatLine); len(stats) > 0 {
			if last = statFields(stats[len(stats)-1]); ok(last) {
				return last
			}
		}
	}
	t.Fatalf("no STAT line with %s: last %v", what, last)
	return nil
}
