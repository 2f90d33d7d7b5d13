package main

// The small frictions of issue #37 through the real binary: a wait on a
// capture that has ended answers at once, and export_capture links the
// file it wrote as build_evidence_package links its bundle's.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp"
)

// waitAnswer is what await_condition and await_bus answer, as far as a
// wait on an ended capture shows it.
type waitAnswer struct {
	OK   bool `json:"ok"`
	Data struct {
		Met            bool `json:"met"`
		DeadlinePassed bool `json:"deadline_passed"`
		CaptureEnded   bool `json:"capture_ended"`
	} `json:"data"`
	Warnings []string `json:"warnings"`
	Coverage *struct {
		Ports []struct {
			Port  string `json:"port"`
			State string `json:"state"`
		} `json:"ports"`
	} `json:"coverage"`
}

// checkEndedWait: the wait, asked for 60 s, answered unmet because the
// capture ended (not because its deadline passed), said so, and its
// coverage block lists the one port it read as ended.
func checkEndedWait(t *testing.T, tool, body string) {
	t.Helper()
	var a waitAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	if !a.OK || a.Data.Met || a.Data.DeadlinePassed || !a.Data.CaptureEnded {
		t.Errorf("%s on an ended capture: %+v", tool, a.Data)
	}
	if !strings.Contains(strings.Join(a.Warnings, " "), "every port read has ended") {
		t.Errorf("%s: no warning that the capture ended: %q", tool, a.Warnings)
	}
	if a.Coverage == nil || len(a.Coverage.Ports) != 1 || a.Coverage.Ports[0].State != "ended" {
		t.Errorf("%s: coverage %+v, want the one file port, ended", tool, a.Coverage)
	}
}

// TestWaitsAnswerWhenTheFileEnds: fieldtapd reading a pcap and a candump
// log to their end; await_condition for a dialog the pcap does not hold
// and await_bus for a claim conflict the log does not hold, each given
// 60 s, answer capture_ended and not deadline_passed. The test's only
// time bound is its give-up deadline.
func TestWaitsAnswerWhenTheFileEnds(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "invites.pcap")
	writeInviteCapture(t, capture, 20)
	cc := startContract(t, "--board", "none", "--source", capture)
	cc.waitExhausted()
	_, blocks := cc.call("await_condition", map[string]any{"filter": "call_id ~ never-sent", "timeout_seconds": 60})
	checkEndedWait(t, "await_condition", blocks[0])
	// What the capture holds is still met, not "ended".
	env, _ := cc.call("await_condition", map[string]any{"filter": "call_id ~ bench", "min_count": 20, "timeout_seconds": 60})
	if d := env["data"].(map[string]any); d["met"] != true || d["capture_ended"] != false {
		t.Errorf("await_condition for the capture's 20 dialogs: %v", d)
	}

	log := writeFile(t, filepath.Join(dir, "car.log"), broadcastLog())
	cb := startContract(t, "--board", "none", "--source", log)
	cb.waitExhausted()
	_, blocks = cb.call("await_bus", map[string]any{"condition": "claim_conflict", "timeout_seconds": 60})
	checkEndedWait(t, "await_bus", blocks[0])
}

// TestExportCaptureLinksItsFile: export_capture's answer carries a
// resource_link to the pcapng it wrote, whose resources/read gives the
// bytes on disk at the answer's path, and whose description names the
// HTTP download.
func TestExportCaptureLinksItsFile(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "invites.pcap")
	writeInviteCapture(t, capture, 5)
	exports := filepath.Join(dir, "exports")
	cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte("[store]\nexport_dir = \""+exports+"\"\n"))
	cc := startContract(t, "--config", cfg, "--board", "none", "--source", capture)
	cc.waitExhausted()
	res, err := cc.s.CallTool(cc.ctx, &sdk.CallToolParams{Name: "export_capture", Arguments: map[string]any{"filter": "call_id ~ bench"}})
	if err != nil || res.IsError {
		t.Fatalf("export_capture: %v %+v", err, res)
	}
	var env struct {
		Data struct {
			Path   string `json:"path"`
			Bytes  int64  `json:"bytes"`
			Frames int    `json:"frames"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env); err != nil {
		t.Fatal(err)
	}
	if env.Data.Frames != 10 {
		t.Errorf("export_capture wrote %d frames of 5 dialogs' 10", env.Data.Frames)
	}
	onDisk, err := os.ReadFile(env.Data.Path)
	if err != nil {
		t.Fatal(err)
	}
	var links []*sdk.ResourceLink
	for _, c := range res.Content {
		if l, isLink := c.(*sdk.ResourceLink); isLink {
			links = append(links, l)
		}
	}
	name := "exports/" + filepath.Base(env.Data.Path)
	if len(links) != 1 || links[0].URI != mcp.FilesURIPrefix+name || links[0].Size == nil || *links[0].Size != int64(len(onDisk)) ||
		!strings.Contains(links[0].Description, "HTTP GET "+mcp.FilesPath+name) {
		t.Fatalf("links %+v; want one to %s%s of %d bytes", links, mcp.FilesURIPrefix, name, len(onDisk))
	}
	rr, err := cc.s.ReadResource(cc.ctx, &sdk.ReadResourceParams{URI: links[0].URI})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read %s: %v %+v", links[0].URI, err, rr)
	}
	if !bytes.Equal(rr.Contents[0].Blob, onDisk) || int64(len(onDisk)) != env.Data.Bytes {
		t.Errorf("resources/read gave %d bytes, the file holds %d, the answer says %d", len(rr.Contents[0].Blob), len(onDisk), env.Data.Bytes)
	}
}
