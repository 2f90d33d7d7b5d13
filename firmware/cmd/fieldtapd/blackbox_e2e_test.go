package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/wire"
	"fieldtap/mcp"
	"fieldtap/mcp/auth"
	"fieldtap/mcp/front"
)

// TestBlackboxOnTheSimBoard: the real daemon records the sim board; over
// HTTP with a token the blackbox tools list the segment, find its CAN
// frames, seal an evidence bundle, and the bundle's pcapng downloads
// through GET /files with the digest the tool gave. Every answer is
// checked against its advertised output schema.
func TestBlackboxOnTheSimBoard(t *testing.T) {
	dir := t.TempDir()
	const secret = "e2e-blackbox-9d2f6a"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(auth.HashToken("e2e", secret, auth.ScopeRead, auth.ScopeTransmit)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "fieldtapd.toml")
	body := fmt.Sprintf("board = \"sim\"\n[store]\nexport_dir = %q\ncapture_dir = %q\n[recorder]\nenabled = true\ndir = %q\nevidence_dir = %q\n",
		filepath.Join(dir, "exports"), filepath.Join(dir, "captures"), filepath.Join(dir, "rec"), filepath.Join(dir, "evidence"))
	os.Mkdir(filepath.Join(dir, "captures"), 0o700)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg, "--mcp-tokens-file", tokens, "--mcp-output-schemas")
	hc := &http.Client{Transport: bearerTransport{secret}}
	cc := connectHTTP(t, ctx, url, secret, stderr)
	s := cc.s
	defer s.Close()

	// Wait (generously) until the recorder has written CAN frames.
	var newest time.Time
	var err error
	for deadline := time.Now().Add(giveUp); ; time.Sleep(200 * time.Millisecond) {
		env, _ := cc.call("capture_status", nil)
		rec := env["data"].(map[string]any)["recorder"].(map[string]any)
		if rec["state"] != "recording" {
			t.Fatalf("recorder %v\n%s", rec, stderr.String())
		}
		if n, _ := rec["status"].(map[string]any)["newest_frame"].(string); n != "" {
			if newest, err = time.Parse(time.RFC3339Nano, n); err != nil {
				t.Fatal(err)
			}
			if found := cc.find(newest); found > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder never wrote a CAN frame\n%s", stderr.String())
		}
	}

	env, _ := cc.call("list_captures", map[string]any{"port": "can0"})
	rows := env["items"].([]any)
	if len(rows) == 0 || rows[0].(map[string]any)["frames"].(float64) == 0 {
		t.Fatalf("list_captures: %v", env)
	}

	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "build_evidence_package", Arguments: map[string]any{
		"at": newest.Add(-2 * time.Second).Format(time.RFC3339Nano), "before_s": 2, "after_s": 1, "trigger": `{"test":"e2e"}`}})
	if err != nil || res.IsError {
		t.Fatalf("build_evidence_package: %v %v", err, res)
	}
	var links int
	for _, c := range res.Content {
		if l, isLink := c.(*sdk.ResourceLink); isLink && strings.HasPrefix(l.URI, mcp.FilesURIPrefix+"evidence/") {
			links++
		}
	}
	var bundle map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &bundle); err != nil {
		t.Fatal(err)
	}
	cc.validate("build_evidence_package", res.Content[0].(*sdk.TextContent).Text)
	data := bundle["data"].(map[string]any)
	files := data["files"].([]any)
	if links != len(files) || len(files) == 0 {
		t.Errorf("%d resource links for %d files", links, len(files))
	}
	for _, f := range files {
		f := f.(map[string]any)
		name := f["name"].(string)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, front.Path)+mcp.FilesPath+name, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sum := sha256.Sum256(b)
		if resp.StatusCode != http.StatusOK || hex.EncodeToString(sum[:]) != f["sha256"] || resp.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
			t.Errorf("GET %s: %s, %d bytes, sha256 %x; the tool said %v", name, resp.Status, len(b), sum, f["sha256"])
		}
		// The same bytes as the resource its link names.
		rr, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.FilesURIPrefix + name})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %v %+v", name, err, rr)
		}
		body := rr.Contents[0].Blob
		if body == nil {
			body = []byte(rr.Contents[0].Text)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != f["sha256"] {
			t.Errorf("resources/read %s: %d bytes, sha256 %x; the tool said %v", name, len(body), sum, f["sha256"])
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, front.Path)+mcp.FilesPath+files[0].(map[string]any)["name"].(string), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without a token: %s", resp.Status)
	}

	// A candump log copied into the capture directory opens as file1,
	// read whole into the CAN store; a second open has no port left.
	var log []byte
	t0 := time.Unix(1_800_000_000, 0)
	for i := range 25 {
		log = wire.AppendCandump(log, t0.Add(time.Duration(i)*10*time.Millisecond), "can0", 0x18FEF100|wire.CANEFF, []byte{1, 2, byte(i)})
	}
	if err := os.WriteFile(filepath.Join(dir, "captures", "truck.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	// list_files names it with the detector's kind and its frames' span.
	env, _ = cc.call("list_files", map[string]any{"area": "captures"})
	if items, _ := env["items"].([]any); len(items) != 1 {
		t.Errorf("list_files captures: %v", env)
	} else if row := items[0].(map[string]any); row["name"] != "truck.log" || row["kind"] != "candump" || row["bytes"] != float64(len(log)) ||
		row["first_frame"] != t0.UTC().Format(time.RFC3339) || row["last_frame"] != t0.Add(240*time.Millisecond).UTC().Format(time.RFC3339Nano) {
		t.Errorf("list_files row %v", row)
	}
	// find_in_captures searches a capture file of any kind --source reads:
	// a Vector ASC log of 30 frames, every third one EEC1.
	start := wire.ASCStart(t0)
	asc := wire.AppendASCHeader(nil, start)
	for i := range 30 {
		id := uint32(0x18FEF100) | wire.CANEFF
		if i%3 == 0 {
			id = 0x0CF00400 | wire.CANEFF
		}
		asc = wire.AppendASC(asc, start, t0.Add(time.Duration(i)*10*time.Millisecond), id, 0, []byte{0xF0, byte(i)})
	}
	if err := os.WriteFile(filepath.Join(dir, "captures", "truck.asc"), wire.AppendASCEnd(asc), 0o644); err != nil {
		t.Fatal(err)
	}
	env, blocks := cc.call("find_in_captures", map[string]any{"file": "captures/truck.asc", "can_id": "0CF00400",
		"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "until": t0.Add(time.Second).Format(time.RFC3339Nano)})
	hits, _ := env["data"].(map[string]any)["hits"].([]any)
	if len(hits) != 10 {
		t.Fatalf("find_in_captures in truck.asc: %s", blocks[0])
	}
	for i, h := range hits {
		h := h.(map[string]any)
		if h["segment"] != "captures/truck.asc" || h["offset"] != float64(3*i) || h["time"] != t0.Add(time.Duration(3*i)*10*time.Millisecond).UTC().Format(time.RFC3339Nano) {
			t.Errorf("hit %d: %v", i, h)
		}
	}
	if scan := env["data"].(map[string]any)["scan"].(map[string]any); scan["frames"] != float64(30) || scan["matched"] != float64(10) {
		t.Errorf("scan %v", scan)
	}
	env, _ = cc.call("find_in_captures", map[string]any{"file": "captures/truck.log", "contains": "010217",
		"since": t0.Add(-time.Second).Format(time.RFC3339Nano), "until": t0.Add(time.Second).Format(time.RFC3339Nano)})
	if hits, _ := env["data"].(map[string]any)["hits"].([]any); len(hits) != 1 || hits[0].(map[string]any)["offset"] != float64(0x17) {
		t.Errorf("find_in_captures contains 010217 in truck.log: %v", env)
	}
	env, _ = cc.call("find_in_captures", map[string]any{"file": "exports/none.log", "since": t0.Format(time.RFC3339), "until": t0.Add(time.Second).Format(time.RFC3339)})
	if env["ok"] != false {
		t.Errorf("a file outside captures was searched: %v", env)
	}
	env, blocks = cc.call("open_capture", map[string]any{"name": "truck.log", "wait_s": 30})
	opened, _ := env["data"].(map[string]any)["opened"].(map[string]any)
	if env["data"].(map[string]any)["loaded"] != true || opened["name"] != "file1" || opened["frames"] != float64(25) {
		t.Fatalf("open_capture: %s", blocks[0])
	}
	env, _ = cc.call("can_frames", map[string]any{"port": "file1", "limit": 100})
	if items, _ := env["items"].([]any); len(items) != 25 {
		t.Errorf("can_frames on file1: %d frames, want 25", len(items))
	}
	env, blocks = cc.call("open_capture", map[string]any{"name": "truck.log"})
	if env["ok"] != false || !strings.Contains(blocks[0], "store.opened_captures") {
		t.Errorf("second open_capture: %s", blocks[0])
	}
}

// find runs find_in_captures for can0's frames in the second before
// newest and returns the hits.
func (cc *contractClient) find(newest time.Time) int {
	env, _ := cc.call("find_in_captures", map[string]any{"since": newest.Add(-time.Second).Format(time.RFC3339Nano),
		"until": newest.Add(time.Millisecond).Format(time.RFC3339Nano), "port": "can0", "can_id": "00000000", "mask": "0"}) // every 29-bit frame
	if env["ok"] != true {
		cc.t.Fatalf("find_in_captures: %v", env)
	}
	return len(env["data"].(map[string]any)["hits"].([]any))
}
