package main

// SIGTERM with a call in flight, on the real binary: the call gets the
// shutdown drain, is then cancelled and recorded so, and the process
// exits 0.

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/audit"
)

// waitFor polls buf until it holds s.
func waitFor(t *testing.T, buf *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in:\n%s", s, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// neverMet is an await_condition filter no generated call matches, so the
// call runs until its 60 s deadline unless it is cancelled.
var neverMet = map[string]any{"filter": `from_user == "nobody-ever-calls"`, "timeout_seconds": 60}

func TestSIGTERMWithACallInFlight(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
			args := []string{"--log-level", "debug", "--mcp-audit-file", auditPath}
			ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
			defer cancel()
			var cmd *exec.Cmd
			var stderr *lockedBuffer
			called := make(chan error, 1)
			if transport == "http" {
				var url string
				cmd, url, stderr = startHTTP(t, args...)
				s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
				if err != nil {
					t.Fatalf("connect: %v\n%s", err, stderr.String())
				}
				defer s.Close()
				go func() {
					_, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "await_condition", Arguments: neverMet})
					called <- err
				}()
			} else {
				// By hand, not with the SDK's CommandTransport: it reaps
				// the process itself, and the exit status is the point.
				cmd = exec.Command(binary, append([]string{"--mcp-transport", "stdio"}, args...)...)
				stderr = &lockedBuffer{}
				cmd.Stderr = stderr
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill() })
				defer stdin.Close()
				call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "await_condition", "arguments": neverMet}})
				io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n"+
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+string(call)+"\n")
				go func() { _, err := io.Copy(io.Discard, stdout); called <- err }()
			}
			waitFor(t, stderr, "tool=await_condition")
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("exit after SIGTERM with a call in flight: %v\n%s", err, stderr.String())
				}
			case <-time.After(giveUp):
				t.Fatalf("fieldtapd did not stop after SIGTERM:\n%s", stderr.String())
			}
			select {
			case <-called:
			case <-time.After(giveUp):
				t.Fatal("the call in flight never ended")
			}
			recs := readAuditFile(t, auditPath)
			var rec *audit.Record
			for i := range recs {
				if recs[i].Tool == "await_condition" {
					rec = &recs[i]
				}
			}
			if rec == nil || rec.Outcome != audit.OutcomeCancelled {
				t.Errorf("audit %+v: want the call in flight recorded %s", recs, audit.OutcomeCancelled)
			}
			if !strings.Contains(stderr.String(), "ports stopped") {
				t.Errorf("the shutdown did not reach the ports:\n%s", stderr.String())
			}
		})
	}
}
