package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/services/transmit"
)

// fakeBus records what reached the bus; touched fails the test when a dry
// run gets here.
type fakeBus struct {
	mu      sync.Mutex
	frames  []string
	touched func()
}

func (w *fakeBus) WriteFrame(_ context.Context, id uint32, data []byte) error {
	if w.touched != nil {
		w.touched()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frames = append(w.frames, transmit.Frame{ID: id, Data: data}.IDHex()+"#"+strings.ToUpper(hexOf(data)))
	return nil
}

func (w *fakeBus) sent() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.frames...)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

type onSwitch struct{}

func (onSwitch) Armed() bool { return true }

type nopAudit struct{ n atomic.Int64 }

func (a *nopAudit) Record(context.Context, transmit.Record) error { a.n.Add(1); return nil }

func transmitDeps(t *testing.T, w *fakeBus) Deps {
	svc, err := transmit.New(transmit.Options{
		Ports:        []transmit.Port{{Name: "can0", Medium: transmit.MediumCAN, Bitrate: 250_000, Transmit: true, Writer: w}},
		Arm:          onSwitch{},
		Audit:        &nopAudit{},
		BundleLoaded: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	d := testDeps()
	d.Transmit = svc
	return d
}

// connect runs the real server over a pipe pair and connects the go-sdk
// client; elicit nil means a client without the elicitation capability.
func connect(t *testing.T, d Deps, version string, elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	srv, err := NewServer(d, Options{Bundles: []string{"server", "transmit"}})
	if err != nil {
		t.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ServeStdio(ctx, srv, sr, sw, d.Log) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "transmit-test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: elicit})
	s, err := client.Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		cancel()
		cw.Close()
		sw.Close()
		<-done
	})
	return s
}

func txCall(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &m); err != nil {
		t.Fatal(err)
	}
	return m, res.IsError
}

func answer(action string, send bool) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		if !strings.Contains(req.Params.Message, "18EA00F9 [3] EC FE 00") {
			return &sdk.ElicitResult{Action: "decline"}, nil // the person must see the bytes
		}
		r := &sdk.ElicitResult{Action: action}
		if action == "accept" {
			r.Content = map[string]any{"send": send}
		}
		return r, nil
	}
}

var vinRequest = map[string]any{"port": "can0", "pgn": 65260, "destination": 0, "source_address": 0xF9, "dry_run": false, "ack_active": true}

// TestElicitation runs the confirmation through the go-sdk client, on the
// 2026-07-28 input-request path and the 2025-11-25 server-request bridge.
func TestElicitation(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		for _, tc := range []struct {
			name   string
			elicit func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)
			args   map[string]any
			tool   string
			sent   bool
			refuse string
		}{
			{name: "accept", elicit: answer("accept", true), tool: toolJ1939Request, args: vinRequest, sent: true},
			{name: "accept without send", elicit: answer("accept", false), tool: toolJ1939Request, args: vinRequest, refuse: "gate confirmation"},
			{name: "decline", elicit: answer("decline", false), tool: toolJ1939Request, args: vinRequest, refuse: "gate confirmation"},
			{name: "cancel", elicit: answer("cancel", false), tool: toolJ1939Request, args: vinRequest, refuse: "gate confirmation"},
			{name: "no capability, read class", tool: toolJ1939Request, args: vinRequest, sent: true},
			{name: "no capability, erase class", tool: toolJ1939RequestDM,
				args: map[string]any{"port": "can0", "dm": "DM11", "destination": 0, "dry_run": false, "ack_active": true}, refuse: "gate confirmation"},
		} {
			t.Run(cmpName(version)+"/"+tc.name, func(t *testing.T) {
				w := &fakeBus{}
				s := connect(t, transmitDeps(t, w), version, tc.elicit)
				m, isErr := txCall(t, s, tc.tool, tc.args)
				if tc.sent {
					if isErr || len(w.sent()) != 1 || w.sent()[0] != "18EA00F9#ECFE00" {
						t.Fatalf("answer %v, wire %v", m, w.sent())
					}
					return
				}
				if !isErr || !strings.Contains(errText(m), tc.refuse) || len(w.sent()) != 0 {
					t.Fatalf("answer %v, wire %v; want refused by %s", m, w.sent(), tc.refuse)
				}
			})
		}
	}
}

func cmpName(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

func errText(m map[string]any) string {
	b, _ := json.Marshal(m["errors"])
	return string(b)
}

// TestTransmitDryRunByDefault: without dry_run the plan comes back and
// the writer is never reached; transmit_execute then runs that plan.
func TestTransmitDryRunByDefault(t *testing.T) {
	w := &fakeBus{}
	w.touched = func() { t.Error("a dry run reached the writer") }
	d := transmitDeps(t, w)
	s := connect(t, d, "", nil)
	m, isErr := txCall(t, s, toolJ1939Request, map[string]any{"port": "can0", "pgn": 65260, "destination": 0, "source_address": 0xF9})
	if isErr {
		t.Fatal(m)
	}
	plan := m["data"].(map[string]any)["plan"].(map[string]any)
	frames := plan["frames"].([]any)
	f := frames[0].(map[string]any)
	if len(frames) != 1 || f["id"] != "18EA00F9" || f["data"] != "ECFE00" || f["dlc"].(float64) != 3 {
		t.Fatalf("plan frames %v", frames)
	}
	w.touched = nil
	// Without ack_active, execute is refused by that gate.
	m, isErr = txCall(t, s, toolTransmitExecute, map[string]any{"plan_id": plan["plan_id"]})
	if !isErr || !strings.Contains(errText(m), "gate ack_active") {
		t.Fatalf("execute without ack: %v", m)
	}
	m, isErr = txCall(t, s, toolTransmitExecute, map[string]any{"plan_id": plan["plan_id"], "ack_active": true})
	if isErr || len(w.sent()) != 1 {
		t.Fatalf("execute: %v, wire %v", m, w.sent())
	}
	lm, _ := txCall(t, s, toolTransmitPlans, map[string]any{})
	if items := lm["items"].([]any); len(items) != 1 || items[0].(map[string]any)["executed"] != true {
		t.Errorf("transmit_plans %v", lm)
	}
	st, _ := txCall(t, s, toolTransmitStatus, map[string]any{})
	if recent := st["data"].(map[string]any)["recent"].([]any); len(recent) != 2 {
		t.Errorf("transmit_status recent %v", recent)
	}
}

// TestTransmitAnnotations: transmitting tools are never read-only and
// the ones that can plan an erase say destructive.
func TestTransmitAnnotations(t *testing.T) {
	want := map[string]bool{toolJ1939Request: false, toolUDSRequest: false, toolJ1939RequestDM: true, toolCANSend: true,
		toolReplayFrames: true, toolJ1708Send: true, toolTransmitExecute: true}
	for _, st := range transmitTools(testDeps()) {
		a := st.Tool.Annotations
		destructive, transmits := want[st.Tool.Name]
		if !transmits {
			if !*a.ReadOnlyHint {
				t.Errorf("%s should be read-only", st.Tool.Name)
			}
			continue
		}
		if *a.ReadOnlyHint || *a.DestructiveHint != destructive || *a.IdempotentHint {
			t.Errorf("%s hints %+v", st.Tool.Name, a)
		}
		var schema map[string]any
		json.Unmarshal(st.Tool.RawInputSchema, &schema)
		if st.Tool.Name != toolTransmitExecute {
			props, _ := schema["properties"].(map[string]any)
			if _, has := props["dry_run"]; !has {
				t.Errorf("%s has no dry_run argument: %s", st.Tool.Name, st.Tool.RawInputSchema)
			}
		}
	}
}

// TestTransmitWithoutServiceRefuses: a box built without a transmitter
// answers every tool with a refusal, not a panic.
func TestTransmitWithoutServiceRefuses(t *testing.T) {
	m := callTool(t, testDeps(), toolJ1939Request, map[string]any{"port": "can0", "pgn": 65260})
	if m["ok"] != false {
		t.Fatal(m)
	}
}
