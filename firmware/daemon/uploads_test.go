package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/firmware/config"
	"fieldtap/services/sandbox"
	"fieldtap/services/upload"
	"fieldtap/tools/refdata"
)

// TestUploadChecksOnRealFiles: each reference file uploaded whole into
// its area is kept with the kind the --source detector (captures) or the
// DBC and key log parsers (data) give it, or refused naming what was
// seen; a kept capture is listed by the catalog with the same kind and
// no partial is ever listed.
func TestUploadChecksOnRealFiles(t *testing.T) {
	caps, data := t.TempDir(), t.TempDir()
	cfg := config.Default()
	cfg.Store.CaptureDir, cfg.Store.DataDir = caps, data
	tb, err := newUploads(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keyLog := "# written by a PBX\nCLIENT_RANDOM " + strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 48) + "\n"
	for _, tc := range []struct {
		area, name string
		src        []string // reference file; nil: body
		body       string
		kind       string // "": refused with want
		want       string
	}{
		{area: "captures", name: "call.pcap", src: []string{"sip", "sip-rtp-g711.pcap"}, kind: "pcap"},
		{area: "captures", name: "call.pcapng", src: []string{"sip", "gen-sipp-hold-resume-rfc2833-udp.pcapng"}, kind: "pcapng"},
		{area: "captures", name: "truck.log", src: []string{"can", "canarchy_sample.candump"}, kind: "candump"},
		{area: "captures", name: "bus.j1708", src: []string{"j1708", "canarchy_j1708_sample.j1708"}, kind: "j1708"},
		{area: "captures", name: "sample.dbc", src: []string{"can", "canarchy_sample.dbc"}, want: "the captures area takes pcap, pcapng, candump -l or J1708 logs"},
		{area: "data", name: "j1939.dbc", src: []string{"can", "cantools_j1939.dbc"}, kind: "dbc"},
		{area: "data", name: "bad.dbc", src: []string{"can", "canarchy_invalid.dbc"}, want: "not a DBC"},
		{area: "data", name: "call.pcap", src: []string{"sip", "sip-rtp-g711.pcap"}, want: "not a DBC"},
		{area: "data", name: "pbx.keylog", body: keyLog, kind: "tls_keylog"},
		{area: "data", name: "pbx.keys", body: "# nothing yet\n", want: "no CLIENT_RANDOM"},
	} {
		t.Run(tc.area+"/"+tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			if tc.src != nil {
				if body, err = os.ReadFile(refdata.File(t, tc.src...)); err != nil {
					t.Fatal(err)
				}
			}
			d, err := sendWhole(tb, tc.area, tc.name, body)
			if tc.kind == "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want a refusal naming %q", err, tc.want)
				}
				return
			}
			if err != nil || d.Kind != tc.kind {
				t.Fatalf("kept as %q (%v), want %s", d.Kind, err, tc.kind)
			}
		})
	}
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: caps})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := newFileCatalog(cfg, files)
	if err != nil {
		t.Fatal(err)
	}
	// A partial in progress is in the directory but in no listing.
	if _, err := tb.Begin("captures", "later.pcap", 10, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	entries, _, err := cat.List(capturesRoot)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		fk, err := cat.Describe(e.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"call.pcap": "pcap", "call.pcapng": "pcapng", "truck.log": "candump", "bus.j1708": "j1708"}[filepath.Base(e.Name)]
		if fk.Kind != want {
			t.Errorf("%s listed as %q, uploaded as %q", e.Name, fk.Kind, want)
		}
	}
	if got := strings.Join(names, ","); got != "captures/bus.j1708,captures/call.pcap,captures/call.pcapng,captures/truck.log" {
		t.Errorf("listed %s", got)
	}
	if parts, _ := filepath.Glob(filepath.Join(caps, ".upload-*.part")); len(parts) != 1 {
		t.Errorf("%d partials on disk, want the one in progress", len(parts))
	}
}

// sendWhole uploads body in MaxChunk pieces and finishes it.
func sendWhole(tb *upload.Table, area, name string, body []byte) (upload.Done, error) {
	sum := sha256.Sum256(body)
	b, err := tb.Begin(area, name, int64(len(body)), hex.EncodeToString(sum[:]))
	if err != nil {
		return upload.Done{}, err
	}
	for off := 0; off < len(body); off += upload.MaxChunk {
		if _, err := tb.Chunk(b.ID, int64(off), body[off:min(off+upload.MaxChunk, len(body))]); err != nil {
			return upload.Done{}, err
		}
	}
	return tb.Finish(b.ID)
}
