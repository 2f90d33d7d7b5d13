package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sandbox"
)

// TestFilesAreResources: a file the box wrote reads back through
// resources/read under the URI its resource link names, binary as base64
// and JSON as text; what the sandbox refuses, or what is too large for one
// read, is a JSON-RPC error naming the file and why.
func TestFilesAreResources(t *testing.T) {
	dir := t.TempDir()
	pcap := []byte{0x0a, 0x0d, 0x0d, 0x0a, 0x00, 0xff, 0x80, '\n'}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "b1"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "b1", "call.pcapng"), pcap, 0o600))
	must(os.WriteFile(filepath.Join(dir, "b1", "manifest.json"), []byte(`{"ok":true}`), 0o600))
	must(os.WriteFile(filepath.Join(dir, "big.pcapng"), make([]byte, sandbox.MaxRead+1), 0o600))
	must(os.WriteFile(filepath.Join(t.TempDir(), "secret"), []byte("x"), 0o600))
	must(os.Symlink("/etc/passwd", filepath.Join(dir, "link.pcapng")))
	files, err := sandbox.New(sandbox.Root{Name: "exports", Dir: dir})
	must(err)
	d := fullDeps(t)
	d.Files = files
	s, err := NewServer(d, Options{})
	must(err)

	var tmpl struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	must(json.Unmarshal(rpc(t, s, "resources/templates/list", map[string]any{}), &tmpl))
	if !strings.Contains(string(mustJSON(t, tmpl)), filesTemplate) {
		t.Errorf("templates %+v do not offer %s", tmpl, filesTemplate)
	}

	var got struct {
		Contents []struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
			Text     string `json:"text"`
			Blob     string `json:"blob"`
		} `json:"contents"`
	}
	must(json.Unmarshal(rpc(t, s, "resources/read", map[string]any{"uri": FilesURIPrefix + "exports/b1/call.pcapng"}), &got))
	if len(got.Contents) != 1 {
		t.Fatalf("contents %+v", got.Contents)
	}
	b, err := base64.StdEncoding.DecodeString(got.Contents[0].Blob)
	if err != nil || !bytes.Equal(b, pcap) || got.Contents[0].MIMEType != "application/vnd.tcpdump.pcap" || got.Contents[0].Text != "" {
		t.Errorf("pcapng read back as %+v (%x, %v), want its bytes base64", got.Contents[0], b, err)
	}
	got.Contents = nil
	must(json.Unmarshal(rpc(t, s, "resources/read", map[string]any{"uri": FilesURIPrefix + "exports/b1/manifest.json"}), &got))
	if got.Contents[0].Text != `{"ok":true}` || got.Contents[0].Blob != "" {
		t.Errorf("manifest read back as %+v, want its text", got.Contents[0])
	}

	for uri, want := range map[string]string{
		FilesURIPrefix + "exports/big.pcapng":        "HTTP GET /files/exports/big.pcapng",
		FilesURIPrefix + "exports/link.pcapng":       "exports/link.pcapng",
		FilesURIPrefix + "exports/../secret":         "refused",
		FilesURIPrefix + "exports/%2e%2e/secret":     "refused",
		FilesURIPrefix + "evidence/b1/manifest.json": "refused",
		FilesURIPrefix + "exports/nothing.pcapng":    "nothing.pcapng",
	} {
		msg := readError(t, s, "resources/read", map[string]any{"uri": uri})
		if !strings.Contains(msg, want) {
			t.Errorf("%s: error %q, want it to name %q", uri, msg, want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readError is the JSON-RPC error message of a call that must fail.
func readError(t *testing.T, s *server.MCPServer, method string, params any) string {
	t.Helper()
	req := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	var resp struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(mustJSON(t, s.HandleMessage(context.Background(), req)), &resp); err != nil || resp.Error == nil {
		t.Fatalf("%s %v: want a JSON-RPC error, got %v", method, params, err)
	}
	return resp.Error.Message
}
