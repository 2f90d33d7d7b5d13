package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"fieldtap/mcp"
)

// TestStdioAnswersEverythingReadBeforeEOF writes many calls and closes
// stdin at once: every call is answered before the server stops.
func TestStdioAnswersEverythingReadBeforeEOF(t *testing.T) {
	srv := testServer(t, mcp.Options{Bundles: []string{"server"}})
	const calls = 40
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}`+"\n", i)
	}
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), srv, strings.NewReader(in.String()), &out, testLog()); err != nil {
		t.Fatal(err)
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if id, ok := m["id"].(float64); ok {
			ids[id] = true
		}
	}
	if len(ids) != calls+1 {
		t.Errorf("%d answers for %d requests", len(ids), calls+1)
	}
}

func TestDrainTellsRequestsFromAnswers(t *testing.T) {
	for _, tc := range []struct {
		line       string
		id, method bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, true, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, true},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, true, false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, false, false},
		{`not json`, false, false},
		{`{"jsonrpc":"2.0","result":{},"id":7}`, true, false},
		{`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"x":[1,2]}}`, true, true},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"method\":\"x\"}"}]}}`, true, false},
		{`{"jsonrpc":"2.0","id":4,"result":`, true, false},
		{`[1]`, false, false},
	} {
		id, method := shapeOf([]byte(tc.line))
		if id != tc.id || method != tc.method {
			t.Errorf("%s: id %v method %v", tc.line, id, method)
		}
	}
}

func TestDrainRefusesAnOverlongLine(t *testing.T) {
	d := newDrain(context.Background(), strings.NewReader(strings.Repeat("x", maxRequestBody+10)+"\n"), &bytes.Buffer{}, stdioDrain)
	if _, err := d.Read(make([]byte, 64)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v, want the line refused", err)
	}
}

// TestDrainEndsTheInputOnShutdown: once ctx ends, no new request is read
// and Read ends the input as soon as the requests already read are
// answered (a client that keeps stdin open cannot hold the shutdown).
func TestDrainEndsTheInputOnShutdown(t *testing.T) {
	for _, answered := range []bool{true, false} {
		t.Run(fmt.Sprintf("answered=%v", answered), func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			ctx, cancel := context.WithCancel(context.Background())
			var out bytes.Buffer
			d := newDrain(ctx, pr, &out, stdioDrain)
			d.shutdown = time.Hour // only the answer can end the wait early
			if !answered {
				d.shutdown = 10 * time.Millisecond
			}
			go io.WriteString(pw, `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`+"\n")
			if _, err := d.Read(make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
			cancel()
			go io.WriteString(pw, `{"jsonrpc":"2.0","id":6,"method":"tools/call"}`+"\n") // read after the shutdown began: never handed on
			if answered {
				d.out().Write([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}` + "\n"))
			}
			done := make(chan error, 1)
			go func() { _, err := d.Read(make([]byte, 4096)); done <- err }()
			select {
			case err := <-done:
				if err != io.EOF {
					t.Errorf("Read after shutdown = %v, want EOF", err)
				}
			case <-time.After(giveUpTest):
				t.Fatal("the input did not end after the shutdown")
			}
		})
	}
}
