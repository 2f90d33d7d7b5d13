package sipvcon

import (
	"bytes"
	"encoding/json"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/services/siplint"
	"fieldtap/tools/refdata"
)

// schemaID is the vendored schema's $id (testdata/vcon/PROVENANCE.md).
const schemaID = "https://ietf.org/vcon/schemas/unsigned-vcon.json"

// validate checks doc against the IETF vCon WG's schema with formats
// (uuid, date-time) asserted.
func validate(t *testing.T, doc []byte) {
	t.Helper()
	if err := check(t, doc); err != nil {
		t.Errorf("the vCon does not validate against the vCon schema: %v", err)
	}
}

func check(t *testing.T, doc []byte) error {
	t.Helper()
	raw, err := readSchema()
	if err != nil {
		t.Fatal(err)
	}
	c := santhosh.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaID, raw); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaID)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := santhosh.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// The validator is not vacuous: a bad uuid, a local time without an
// offset and an unknown dialog type are each refused.
func TestSchemaRefusesBadVCons(t *testing.T) {
	for _, doc := range []string{
		`{"uuid": "not-a-uuid", "created_at": "2026-12-01T12:00:00Z"}`,
		`{"uuid": "01234567-89ab-8fff-8123-456789abcdef", "created_at": "2026-12-01 12:00:00"}`,
		`{"uuid": "01234567-89ab-8fff-8123-456789abcdef", "created_at": "2026-12-01T12:00:00Z", "dialog": [{"type": "call", "start": "2026-12-01T12:00:00Z"}]}`,
	} {
		if check(t, []byte(doc)) == nil {
			t.Errorf("%s validated", doc)
		}
	}
}

func readSchema() (any, error) {
	b, err := testdataFS.ReadFile("testdata/vcon/unsigned-vcon.schema.json")
	if err != nil {
		return nil, err
	}
	return santhosh.UnmarshalJSON(bytes.NewReader(b))
}

func load(t *testing.T, file string) *sip.Snapshot {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), file), func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	return st.Snapshot()
}

var uuidV8 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// sip-rtp-g711.pcap's call 1-1966@10.0.2.20 (tshark 4.0.17: 6 SIP
// messages, INVITE to BYE/200, SIPp 10.0.2.20 calling FreeSWITCH
// 10.0.2.15) as a vCon: one "text" dialog with its 6 messages, caller,
// callee and the box as parties, one analysis, the pcapng attached.
func TestBuildReferenceCall(t *testing.T) {
	sn := load(t, "sip-rtp-g711.pcap")
	d := sn.Lookup("1-1966@10.0.2.20")
	if d == nil {
		t.Fatal("no dialog 1-1966@10.0.2.20")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v, n := Build(Input{Snapshot: sn, Calls: []Call{{D: d, Lint: siplint.Lint(sn, d, nil)}}, Now: now, Host: "fieldtap.example", RandA: 0xabc,
		Pcapng: []byte("not really pcapng"), PcapngName: "sip-x.pcapng"})
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, doc)
	if !uuidV8.MatchString(v.UUID) || v.CreatedAt != "2026-12-01T12:00:00Z" {
		t.Errorf("uuid %s created_at %s", v.UUID, v.CreatedAt)
	}
	if len(v.Dialog) != 1 || v.Dialog[0].Type != "text" || len(v.Dialog[0].Body) != 6 || n.MessagesEvicted != 0 {
		t.Fatalf("dialog %+v counts %+v", v.Dialog, n)
	}
	// SIPp called: the BYE came from FreeSWITCH, From and To swapped.
	if len(v.Parties) != 3 || v.Parties[2].Type != "recorder" || v.Parties[v.Dialog[0].Parties[0]].SIP != "sip:sipp@10.0.2.20:5060" ||
		v.Parties[v.Dialog[0].Parties[1]].SIP != "sip:test@10.0.2.15:5060" {
		t.Errorf("parties %+v", v.Parties)
	}
	if len(v.Analysis) != 1 || v.Analysis[0].Vendor != Vendor || len(v.Attachments) != 1 || v.Attachments[0].MediaType != MediaTypePcapng || v.Attachments[0].Party != 2 {
		t.Errorf("analysis %+v attachments %+v", v.Analysis, v.Attachments)
	}
}

// branch-scenario-sipp.pcapng: the first Call-ID's INVITE got 403
// (1,148 of the 1,334 did, tshark 4.0.17): an "incomplete" dialog with
// disposition "failed", its messages as an attachment.
func TestBuildFailedCalls(t *testing.T) {
	sn := load(t, "branch-scenario-sipp.pcapng")
	var calls []Call
	for _, d := range sn.Dialogs {
		if d.FinalCode == 403 && len(calls) < 3 {
			calls = append(calls, Call{D: d, Lint: siplint.Lint(sn, d, nil)})
		}
	}
	v, _ := Build(Input{Snapshot: sn, Calls: calls, Now: time.Now(), Host: "h", RandA: 1})
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, doc)
	if len(v.Dialog) != 3 || v.Dialog[0].Type != "incomplete" || v.Dialog[0].Disposition != "failed" || v.Dialog[0].Body != nil || len(v.Attachments) != 3 {
		t.Errorf("dialogs %+v attachments %d", v.Dialog, len(v.Attachments))
	}
}

// UUIDv8 follows the draft: v7's timestamp, version 8, variant 10, the
// SHA-1 of the host name in rand_b.
func TestUUIDv8(t *testing.T) {
	at := time.UnixMilli(0x0123456789ab)
	u := UUIDv8(at, "fieldtap.example", 0xfff)
	if !uuidV8.MatchString(u) || u[:13] != "01234567-89ab" || u[14:18] != "8fff" {
		t.Errorf("uuid %s", u)
	}
	if UUIDv8(at, "other.example", 0xfff)[19:] == u[19:] {
		t.Error("rand_b does not follow the host name")
	}
}

// TestBuildMasksKeys: a message's SDES key is masked in the vCon's text.
func TestBuildMasksKeys(t *testing.T) {
	const key = "PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR"
	body := "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + key + "\r\n"
	msg := "INVITE sip:b@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKk\r\nFrom: <sip:a@example.com>;tag=1\r\nTo: <sip:b@example.com>\r\n" +
		"Call-ID: keyed\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
	udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(msg)); err != nil {
		t.Fatal(err)
	}
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	a.Feed(time.Unix(1000, 0), wire.LinkEthernet, buf.Bytes())
	sn := st.Snapshot()
	d := sn.Lookup("keyed")
	if d == nil {
		t.Fatal("the INVITE made no dialog")
	}
	v, _ := Build(Input{Snapshot: sn, Calls: []Call{{D: d}}, Now: time.Unix(2000, 0), Host: "fieldtap.example"})
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(doc, []byte(key)) || !bytes.Contains(doc, []byte("inline:REDACTED")) {
		t.Errorf("the vCon shows the SDES key, or no masked key: %s", doc)
	}
}
