package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"fieldtap/mcp"
)

// readAuditFile parses every line of an audit file; a line that is not
// one whole record fails the test.
func readAuditFile(t *testing.T, path string) []mcp.AuditRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []mcp.AuditRecord
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 && len(b) == 0 {
			break
		}
		var r mcp.AuditRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || dec.More() {
			t.Fatalf("audit line %d is not one whole record (%v): %q", i+1, err, line)
		}
		out = append(out, r)
	}
	return out
}
