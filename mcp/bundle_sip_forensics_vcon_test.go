package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// vconSchemaPath is the IETF vCon WG's schema, vendored as test data
// (its PROVENANCE.md names the repository, commit and licence).
const vconSchemaPath = "../services/sipvcon/testdata/vcon/unsigned-vcon.schema.json"

// checkVCon validates a written vCon file against the schema with the
// independent validator, formats (uuid, date-time) asserted.
func checkVCon(t *testing.T, path string) map[string]any {
	t.Helper()
	schema, err := os.ReadFile(vconSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := santhosh.NewCompiler()
	c.AssertFormat()
	const id = "https://ietf.org/vcon/schemas/unsigned-vcon.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := santhosh.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not validate against the vCon schema: %v", path, err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// exportDeps loads a reference capture as a live port would: the SIP and
// RTP analysers, and every frame in a frame ring an exporter reads.
func exportDeps(t *testing.T, file string) Deps {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	media := rtp.NewAnalyser(rtp.Options{})
	an.SetMediaHook(media)
	fs, err := framestore.New(ring.Limits{Items: 10_000, Bytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ex := sip.NewExporter(t.TempDir(), netdecode.Options{})
	ex.AddPort("span0", fs)
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), file), func(rec pcapfile.Record) {
		if _, err := fs.Append(framestore.Record{Time: rec.Time, Link: rec.Link, Data: rec.Data, OrigLen: len(rec.Data)}); err != nil {
			t.Fatal(err)
		}
		an.Feed(rec.Time, rec.Link, rec.Data)
	})
	d := testDeps()
	d.SIP, d.Media, d.MediaInterval, d.SIPExport = st, media, rtp.DefaultInterval, ex
	return d
}

var vconUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// sip-rtp-g711.pcap's call 1-1966@10.0.2.20 as a vCon: one "text"
// dialog of its 6 SIP messages and the pcapng attached, holding the 431
// frames tshark 4.0.17 counts for the call (6 SIP, 425 PCMU RTP). Then
// both calls of the file by a filter: two dialogs, 10 messages.
func TestExportVConOnReference(t *testing.T) {
	h := newHarness(t, exportDeps(t, "sip-rtp-g711.pcap"))
	out := data(h.ok("export_vcon", map[string]any{"call_id": "1-1966@10.0.2.20"}))
	if out["dialogs"] != 1.0 || out["messages"] != 6.0 || out["pcapng_attached"] != true || !vconUUID.MatchString(out["uuid"].(string)) {
		t.Fatalf("answer %v", out)
	}
	v := checkVCon(t, out["path"].(string))
	if _, err := time.Parse(time.RFC3339, v["created_at"].(string)); err != nil || v["uuid"] != out["uuid"] {
		t.Errorf("created_at %v uuid %v", v["created_at"], v["uuid"])
	}
	dl := v["dialog"].([]any)[0].(map[string]any)
	if dl["type"] != "text" || len(dl["body"].([]any)) != 6 || len(v["parties"].([]any)) != 3 || len(v["analysis"].([]any)) != 1 {
		t.Errorf("dialog %v parties %v", dl["type"], v["parties"])
	}
	att := v["attachments"].([]any)[0].(map[string]any)
	pcap, err := base64.RawURLEncoding.DecodeString(att["body"].(string))
	if err != nil || att["mediatype"] != "application/x-pcapng" {
		t.Fatalf("attachment %v: %v", att["mediatype"], err)
	}
	r, err := pcapgo.NewNgReader(bytes.NewReader(pcap), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	frames := 0
	for {
		if _, _, err := r.ReadPacketData(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		frames++
	}
	if frames != 431 {
		t.Errorf("the attached pcapng holds %d frames, want 431", frames)
	}

	out = data(h.ok("export_vcon", map[string]any{"filter": "first_method == INVITE", "no_pcapng": true}))
	if out["dialogs"] != 2.0 || out["messages"] != 10.0 || out["pcapng_attached"] != false {
		t.Fatalf("filter answer %v", out)
	}
	v = checkVCon(t, out["path"].(string))
	if len(v["dialog"].([]any)) != 2 || len(v["attachments"].([]any)) != 0 {
		t.Errorf("filter vCon: %d dialogs, %d attachments", len(v["dialog"].([]any)), len(v["attachments"].([]any)))
	}
	h.fails("export_vcon", map[string]any{}, CodeInvalidArgument)
	h.fails("export_vcon", map[string]any{"call_id": "nope"}, CodeNotFound)
	h.fails("export_vcon", map[string]any{"filter": "first_method == BYE"}, CodeNotFound)
}

// branch-scenario-sipp.pcapng: refused calls (403) are "incomplete"
// dialogs with disposition "failed", their messages an attachment; the
// vCon of ten of them validates.
func TestExportVConOfFailedCalls(t *testing.T) {
	h := newHarness(t, exportDeps(t, "branch-scenario-sipp.pcapng"))
	env := h.ok("export_vcon", map[string]any{"filter": "final_code == 403", "max_dialogs": 10, "no_pcapng": true})
	out := data(env)
	if out["dialogs"] != 10.0 || out["dialogs_matched"] != 1148.0 {
		t.Fatalf("answer %v", out)
	}
	v := checkVCon(t, out["path"].(string))
	for _, d := range v["dialog"].([]any) {
		if d := d.(map[string]any); d["type"] != "incomplete" || d["disposition"] != "failed" || d["body"] != nil {
			t.Errorf("dialog %v", d)
		}
	}
	if len(v["attachments"].([]any)) != 10 || len(env["warnings"].([]any)) != 1 {
		t.Errorf("%d attachments, warnings %v", len(v["attachments"].([]any)), env["warnings"])
	}
}
