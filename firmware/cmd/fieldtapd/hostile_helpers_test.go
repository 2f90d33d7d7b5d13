package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"fieldtap/mcp/audit"
)

// readAuditFile parses every line of an audit file; a line that is not
// one whole record fails the test.
func readAuditFile(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 && len(b) == 0 {
			break
		}
		var r audit.Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || dec.More() {
			t.Fatalf("audit line %d is not one whole record (%v): %q", i+1, err, line)
		}
		out = append(out, r)
	}
	return out
}

// stopDaemon sends SIGTERM and waits for a clean exit, so the audit's
// last coalesced records are written.
func stopDaemon(t *testing.T, cmd *exec.Cmd, stderr *lockedBuffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(giveUp):
		t.Fatalf("fieldtapd did not stop after SIGTERM:\n%s", stderr.String())
	}
}

// byName indexes capture_status ports by name.
func byName(env envelope) map[string]portStatus {
	m := map[string]portStatus{}
	for _, p := range env.Data.Ports {
		m[p.Name] = p
	}
	return m
}
