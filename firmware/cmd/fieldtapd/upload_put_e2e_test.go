package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fieldtap/tools/refdata"
)

// TestUploadOverHTTPPut: against the real binary with a token file and
// an audit file, a real pcap goes up over PUT in two Content-Range
// chunks with a HEAD between them; the finished file is listed with its
// kind by list_files and open_capture reads every frame tshark counts in
// it. curl sends a DBC into the data area in one request, and a read
// token is refused 403. The audit file holds each step under the upload
// tools' names with the PUT transport.
func TestUploadOverHTTPPut(t *testing.T) {
	src := refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap")
	body, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const writer, reader = "e2e-put-5d0c2e", "e2e-put-read-81aa"
	tokens, cfg := uploadBoxFiles(t, dir, writer, reader)
	auditFile := filepath.Join(dir, "audit.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg, "--mcp-tokens-file", tokens, "--mcp-audit-file", auditFile, "--mcp-output-schemas")
	base := strings.TrimSuffix(url, "/mcp")
	path := base + "/files/captures/call.pcap"
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])

	do := func(method, url, token string, b []byte, h map[string]string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, url, err, stderr.String())
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}
	half := len(body) / 2
	resp, text := do(http.MethodPut, path, writer, body[:half], map[string]string{
		"Content-Range": fmt.Sprintf("bytes 0-%d/%d", half-1, len(body)), "X-Content-SHA256": digest})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Upload-Offset") != strconv.Itoa(half) {
		t.Fatalf("first chunk: %s %v %s", resp.Status, resp.Header, text)
	}
	resp, _ = do(http.MethodHead, path, writer, nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Upload-Offset") != strconv.Itoa(half) || resp.Header.Get("Upload-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("HEAD between the chunks: %s %v", resp.Status, resp.Header)
	}
	resp, text = do(http.MethodPut, path, writer, body[half:], map[string]string{
		"Content-Range": fmt.Sprintf("bytes %d-%d/%d", half, len(body)-1, len(body))})
	var done map[string]any
	if err := json.Unmarshal([]byte(text), &done); err != nil || resp.StatusCode != http.StatusCreated || done["kind"] != "pcap" || done["sha256"] != digest {
		t.Fatalf("last chunk: %s %s", resp.Status, text)
	}
	resp, _ = do(http.MethodHead, path, reader, nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("HEAD of the stored file: %s %v", resp.Status, resp.Header)
	}

	cc := connectHTTP(t, ctx, url, writer, stderr)
	defer cc.s.Close()
	env, _ := cc.call("list_files", map[string]any{"area": "captures"})
	if items, _ := env["items"].([]any); len(items) != 1 {
		t.Errorf("list_files captures: %v", env)
	} else if row := items[0].(map[string]any); row["name"] != "call.pcap" || row["kind"] != "pcap" || row["bytes"] != float64(len(body)) {
		t.Errorf("list_files row %v", row)
	}
	env, blocks := cc.call("open_capture", map[string]any{"name": "call.pcap", "wait_s": 30})
	d, _ := env["data"].(map[string]any)
	opened, _ := d["opened"].(map[string]any)
	if env["ok"] != true || d["loaded"] != true {
		t.Fatalf("open_capture: %s", blocks[0])
	}

	curled := putWithCurl(t, base, writer, reader, cc)

	var steps []string
	raw, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		var r struct {
			Tool, Outcome string
			Caller        struct{ Transport, Token string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Caller.Transport == "http-put" {
			steps = append(steps, r.Tool+":"+r.Outcome+":"+r.Caller.Token)
		}
	}
	want := "upload_begin:ok:up upload_chunk:ok:up upload_chunk:ok:up upload_finish:ok:up"
	if curled {
		want += " upload_begin:refused:ro upload_begin:ok:up upload_chunk:ok:up upload_finish:ok:up"
	}
	if got := strings.Join(steps, " "); got != want {
		t.Errorf("audit of the PUT steps\n got %s\nwant %s", got, want)
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

// putWithCurl sends a real DBC into the data area with curl, as the
// documented example does, and checks a read token is refused; false
// when curl is not installed.
func putWithCurl(t *testing.T, base, writer, reader string, cc *contractClient) bool {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("curl (package curl) not installed: the curl example is not run")
		return false
	}
	dbc := refdata.File(t, "can", "cantools_j1939.dbc")
	data, err := os.ReadFile(dbc)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	curl := func(token string) (string, string) {
		out, err := exec.Command("curl", "-sS", "-T", dbc, "-H", "Authorization: Bearer "+token, "-H", "X-Content-SHA256: "+hex.EncodeToString(sum[:]),
			"-w", "\n%{http_code}", base+"/files/data/j1939.dbc").Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		i := strings.LastIndexByte(string(out), '\n')
		return string(out[:max(i, 0)]), string(out[i+1:])
	}
	if text, code := curl(reader); code != "403" || !strings.Contains(text, "transmit scope") {
		t.Errorf("curl with a read token: %s %s", code, text)
	}
	text, code := curl(writer)
	if code != "201" || !strings.Contains(text, `"kind":"dbc"`) {
		t.Fatalf("curl: %s %s", code, text)
	}
	// list_files describes files by the --source detector alone, so it
	// lists a DBC as kind other; the upload's answer named it dbc.
	env, _ := cc.call("list_files", map[string]any{"area": "data"})
	if items, _ := env["items"].([]any); len(items) != 1 {
		t.Errorf("list_files data: %v", env)
	} else if row := items[0].(map[string]any); row["name"] != "j1939.dbc" || row["bytes"] != float64(len(data)) {
		t.Errorf("list_files data row %v", row)
	}
	return true
}
