package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/auth"
	"fieldtap/tools/refdata"
)

// TestUploadOverTheCable: over HTTP with a transmit-scope token a real
// pcap goes up in chunks; the client drops its session half way, a new
// session begins again and is told the offset to send from; the finished
// file is listed with its kind and open_capture reads every frame tshark
// counts in it. A read-scope token is refused.
func TestUploadOverTheCable(t *testing.T) {
	src := refdata.File(t, "sip", "sip-rtp-g711.pcap")
	body, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const writer, reader = "e2e-upload-77c1a0", "e2e-upload-read-3b90"
	tokens, cfg := uploadBoxFiles(t, dir, writer, reader)
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg, "--mcp-tokens-file", tokens, "--mcp-output-schemas")
	connect := func(secret string) (*sdk.ClientSession, *contractClient) {
		cc := connectHTTP(t, ctx, url, secret, stderr)
		return cc.s, cc
	}
	sum := sha256.Sum256(body)
	begin := map[string]any{"area": "captures", "name": "call.pcap", "size_bytes": len(body), "sha256": hex.EncodeToString(sum[:])}

	ro, rc := connect(reader)
	env, blocks := rc.call("upload_begin", begin)
	if env["ok"] != false || !strings.Contains(blocks[0], "FORBIDDEN") || !strings.Contains(blocks[0], "transmit scope") {
		t.Errorf("read token: %s", blocks[0])
	}
	ro.Close()

	const chunk = 64 << 10 // several chunks for a 194 KiB file
	send := func(cc *contractClient, id string, off int) float64 {
		env, blocks := cc.call("upload_chunk", map[string]any{"id": id, "offset": off, "payload": base64.StdEncoding.EncodeToString(body[off:min(off+chunk, len(body))])})
		if env["ok"] != true {
			t.Fatalf("chunk at %d: %s", off, blocks[0])
		}
		return env["data"].(map[string]any)["next_offset"].(float64)
	}
	s1, c1 := connect(writer)
	env, blocks = c1.call("upload_begin", begin)
	if env["ok"] != true {
		t.Fatalf("upload_begin: %s", blocks[0])
	}
	id := env["data"].(map[string]any)["id"].(string)
	if next := send(c1, id, 0); next != chunk {
		t.Fatalf("next_offset %v after one chunk", next)
	}
	s1.Close() // the cable drops

	s2, c2 := connect(writer)
	defer s2.Close()
	env, blocks = c2.call("upload_begin", begin)
	data, _ := env["data"].(map[string]any)
	if env["ok"] != true || data["id"] != id || data["resumed"] != true || data["next_offset"] != float64(chunk) {
		t.Fatalf("resume: %s", blocks[0])
	}
	env, blocks = c2.call("upload_chunk", map[string]any{"id": id, "offset": 0, "payload": base64.StdEncoding.EncodeToString(body[:10])})
	if env["ok"] != false || !strings.Contains(blocks[0], "UPLOAD_REFUSED") || !strings.Contains(blocks[0], fmt.Sprintf("stands at %d", chunk)) {
		t.Errorf("wrong offset: %s", blocks[0])
	}
	for off := int(data["next_offset"].(float64)); off < len(body); {
		off = int(send(c2, id, off))
	}
	env, blocks = c2.call("upload_finish", map[string]any{"id": id})
	if d, _ := env["data"].(map[string]any); env["ok"] != true || d["kind"] != "pcap" || d["bytes"] != float64(len(body)) || d["sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("upload_finish: %s", blocks[0])
	}
	env, _ = c2.call("list_files", map[string]any{"area": "captures"})
	if items, _ := env["items"].([]any); len(items) != 1 {
		t.Errorf("list_files captures: %v", env)
	} else if row := items[0].(map[string]any); row["name"] != "call.pcap" || row["kind"] != "pcap" || row["bytes"] != float64(len(body)) {
		t.Errorf("list_files row %v", row)
	}
	env, blocks = c2.call("open_capture", map[string]any{"name": "call.pcap", "wait_s": 30})
	d, _ := env["data"].(map[string]any)
	opened, _ := d["opened"].(map[string]any)
	if env["ok"] != true || d["loaded"] != true {
		t.Fatalf("open_capture: %s", blocks[0])
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark (package tshark) not installed: frame count not checked")
	}
	out, err := exec.Command("tshark", "-r", src, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	if frames := strings.Count(string(out), "\n"); opened["frames"] != float64(frames) {
		t.Errorf("open_capture read %v frames of the uploaded file; tshark counts %d", opened["frames"], frames)
	}
}

// uploadBoxFiles writes, in dir, a token file with a transmit-scope
// token (writer, the upload's write scope) and a read-only one (reader),
// and a sim board configuration whose capture, data and export folders
// are below dir.
func uploadBoxFiles(t *testing.T, dir, writer, reader string) (tokens, cfg string) {
	t.Helper()
	tokens = filepath.Join(dir, "tokens")
	lines := auth.HashToken("up", writer, auth.ScopeRead, auth.ScopeTransmit) + "\n" + auth.HashToken("ro", reader, auth.ScopeRead) + "\n"
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "fieldtapd.toml")
	conf := fmt.Sprintf("board = \"sim\"\n[store]\nexport_dir = %q\ncapture_dir = %q\ndata_dir = %q\n",
		filepath.Join(dir, "exports"), filepath.Join(dir, "captures"), filepath.Join(dir, "data"))
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return tokens, cfg
}
