package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/services/sandbox"
	"fieldtap/services/upload"
)

// TestUploadToolsResumeAndLand: a file sent in chunks, begun again half
// way (a client that reconnected), lands where list_files lists it, and
// the refusals carry UPLOAD_REFUSED naming the offset the box holds.
func TestUploadToolsResumeAndLand(t *testing.T) {
	caps := t.TempDir()
	table, err := upload.New([]upload.Area{{Name: "captures", Dir: caps, Check: func(_, path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte("(1")) {
			return "", errors.New("no candump line")
		}
		return "candump", nil
	}}}, upload.Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Root{Name: "captures", Dir: caps})
	if err != nil {
		t.Fatal(err)
	}
	d := fullDeps(t)
	d.BlackBox.Uploads = table
	d.BlackBox.Files = dirCatalog{sb: sb}
	s := testServer(t, d, uploadBegin, uploadChunk, uploadFinish, listFiles)

	data := bytes.Repeat([]byte("(1608041700.316550) can0 18FECA00#0011223344556677\n"), 100)
	sum := sha256.Sum256(data)
	begin := map[string]any{"area": "captures", "name": "truck.log", "size_bytes": len(data), "sha256": hex.EncodeToString(sum[:])}
	call := func(tool string, args map[string]any) (callResult, map[string]any) {
		r, env := callTool(t, s, tool, args)
		data, _ := env["data"].(map[string]any)
		return r, data
	}
	r, env := call("upload_begin", begin)
	if r.IsError || env["next_offset"] != 0.0 || env["resumed"] != false {
		t.Fatalf("begin: %v", r.Content[0].Text)
	}
	id := env["id"].(string)
	chunk := func(off int, b []byte) (bool, string, map[string]any) {
		r, env := call("upload_chunk", map[string]any{"id": id, "offset": off, "payload": base64.StdEncoding.EncodeToString(b)})
		return r.IsError, r.Content[0].Text, env
	}
	if bad, text, _ := chunk(0, data[:2000]); bad {
		t.Fatal(text)
	}
	listed := func() string {
		_, env := callTool(t, s, "list_files", map[string]any{})
		var names []string
		for _, it := range env["items"].([]any) {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		return strings.Join(names, ",")
	}
	if got := listed(); got != "" {
		t.Fatalf("partial listed: %q", got)
	}
	r, env = call("upload_begin", begin)
	if r.IsError || env["id"] != id || env["next_offset"] != 2000.0 || env["resumed"] != true {
		t.Fatalf("resume: %v", r.Content[0].Text)
	}
	if bad, text, _ := chunk(1000, data[1000:]); !bad || !strings.Contains(text, "UPLOAD_REFUSED") || !strings.Contains(text, "stands at 2000") {
		t.Fatalf("wrong offset: %s", text)
	}
	if bad, text, env := chunk(2000, data[2000:]); bad || env["next_offset"] != float64(len(data)) {
		t.Fatalf("last chunk: %s", text)
	}
	r, env = call("upload_finish", map[string]any{"id": id})
	if r.IsError || env["kind"] != "candump" || env["name"] != "truck.log" || env["bytes"] != float64(len(data)) {
		t.Fatalf("finish: %v", r.Content[0].Text)
	}
	if got := listed(); got != "truck.log" {
		t.Fatalf("listed %q, want truck.log", got)
	}
	if got, _ := os.ReadFile(filepath.Join(caps, "truck.log")); !bytes.Equal(got, data) {
		t.Fatal("stored bytes differ from the sent ones")
	}
	r, _ = callTool(t, s, "upload_begin", begin)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "never replace") {
		t.Fatalf("second upload of the name: %v", r.Content[0].Text)
	}
}

func TestUploadToolsOffSayUnavailable(t *testing.T) {
	s := testServer(t, fullDeps(t), uploadFinish)
	r, _ := callTool(t, s, "upload_finish", map[string]any{"id": "0123456789abcdef"})
	if !r.IsError || !strings.Contains(r.Content[0].Text, "UNAVAILABLE") {
		t.Fatalf("uploads off: %v", r.Content[0].Text)
	}
}
