package main

// End-to-end tests of the MCP access rules on the real binary: bundles,
// bearer tokens, the audit file, and the loopback-only default.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestNonLoopbackListenNeedsTokens(t *testing.T) {
	out, err := exec.Command(binary, "--mcp-transport", "http", "--mcp-listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "mcp.tokens_file") {
		t.Fatalf("binding 0.0.0.0 without tokens: err=%v\n%s", err, out)
	}
}

func TestBundlesFlagLimitsTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--mcp-bundles", "server")
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"capture_status", "describe_response_shape", "server_capabilities"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestTokensAndAuditFile(t *testing.T) {
	dir := t.TempDir()
	const secret = "e2e-secret-4f1c9a7d2b"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(auth.HashToken("e2e runner", secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--mcp-tokens-file", tokens, "--mcp-audit-file", auditPath)

	if _, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Fatal("a client without a token connected")
	}
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{secret}}}, nil)
	if err != nil {
		t.Fatalf("connect with token: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	captureStatus(t, ctx, s)

	b, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var rec audit.Record
	if err := json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &rec); err != nil {
		t.Fatalf("audit %q: %v", b, err)
	}
	if rec.Tool != "capture_status" || rec.Outcome != audit.OutcomeOK || rec.Caller.Token != "e2e%20runner" || rec.Caller.Transport != "http" || rec.Caller.Peer != "127.0.0.1" {
		t.Errorf("audit record = %+v", rec)
	}
	if st, _ := os.Stat(auditPath); st.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode %v", st.Mode().Perm())
	}
}

func TestUnopenableAuditFileStopsStartup(t *testing.T) {
	out, err := exec.Command(binary, "--mcp-transport", "http", "--mcp-listen", "127.0.0.1:0",
		"--mcp-audit-file", filepath.Join(t.TempDir(), "missing", "dir", "audit.jsonl")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "audit") {
		t.Fatalf("err=%v\n%s", err, out)
	}
}
