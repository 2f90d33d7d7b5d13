package sip

// Ground truth: tshark 4.0.17's numbers from
// ../shared/testdata/sip/PROVENANCE.md for every capture there. The reader
// is drivers/pcapfile (a test-only import: the package itself takes plain
// values and never reaches drivers/).

import (
	"maps"
	"path/filepath"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// loadCapture runs one file through an Analyser into a fresh store.
func loadCapture(t testing.TB, path string) (*Store, *Analyser) {
	t.Helper()
	st := newStore(t, Limits{})
	a := NewAnalyser(st, netdecode.Options{})
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	return st, a
}

type truth struct {
	file      string
	dialogs   int
	requests  map[string]uint64
	responses map[string]uint64
	// why explains a definitional difference from tshark, if any.
	why string
	// tlsSessions, when set, is how many TLS sessions must be counted.
	tlsSessions uint64
	fragments   bool // the capture needs IP fragment reassembly
}

var groundTruth = []truth{
	{file: "RTP-Protocol.pcap", dialogs: 1,
		requests:  map[string]uint64{"ACK": 1, "BYE": 1, "INVITE": 1, "PRACK": 1},
		responses: map[string]uint64{"100 INVITE": 1, "180 INVITE": 1, "200 BYE": 1, "200 INVITE": 1, "200 PRACK": 1}},
	{file: "SIP_CALL_RTP_G711.pcap", dialogs: 4,
		requests:  map[string]uint64{"ACK": 1, "INVITE": 2, "REGISTER": 3},
		responses: map[string]uint64{"100 INVITE": 2, "180 INVITE": 2, "200 INVITE": 1, "200 REGISTER": 3}},
	{file: "sip-rtp-g711.pcap", dialogs: 2,
		requests:  map[string]uint64{"ACK": 2, "BYE": 1, "INVITE": 2},
		responses: map[string]uint64{"100 INVITE": 2, "200 BYE": 1, "200 INVITE": 2}},
	{file: "sip-488-Not-Acceptable-Here-codec-null.pcapng", dialogs: 4,
		requests:  map[string]uint64{"ACK": 2, "INVITE": 2, "OPTIONS": 3},
		responses: map[string]uint64{"100 INVITE": 1, "200 OPTIONS": 3, "401 INVITE": 1, "488 INVITE": 1}},
	{file: "DTMFsipinfo.pcap", dialogs: 1,
		requests:  map[string]uint64{"ACK": 5, "CANCEL": 2, "INFO": 4, "INVITE": 5},
		responses: map[string]uint64{"100 INVITE": 5, "200 CANCEL": 2, "200 INFO": 4, "200 INVITE": 5}},
	{file: "SIP-Call-Flow-Over-TCP.pcap", dialogs: 1,
		requests:  map[string]uint64{"ACK": 1, "BYE": 1, "INVITE": 1},
		responses: map[string]uint64{"100 INVITE": 1, "180 INVITE": 1, "200 BYE": 1, "200 INVITE": 1}},
	{file: "branch-scenario-sipp.pcapng", dialogs: 1334,
		requests:  map[string]uint64{"ACK": 104, "BYE": 1135, "INVITE": 1334, "REGISTER": 1334},
		responses: map[string]uint64{"100 INVITE": 110, "180 INVITE": 1259, "200 BYE": 1129, "200 INVITE": 102, "200 REGISTER": 1334, "403 INVITE": 1148}},
	{file: "ipv6frag.pcap", dialogs: 1, fragments: true,
		requests:  map[string]uint64{"ACK": 2, "BYE": 2, "INVITE": 2, "PRACK": 4, "UPDATE": 4},
		responses: map[string]uint64{"100 INVITE": 1, "183 INVITE": 4, "200 BYE": 2, "200 INVITE": 3, "200 PRACK": 4, "200 UPDATE": 4}},
	{file: "websocket-sip.pcapng", dialogs: 3,
		requests:  map[string]uint64{"ACK": 1, "BYE": 1, "INVITE": 1, "MESSAGE": 1, "REGISTER": 1},
		responses: map[string]uint64{"100 INVITE": 1, "180 INVITE": 1, "200 BYE": 1, "200 INVITE": 1, "200 MESSAGE": 1, "200 REGISTER": 1}},
	{file: "gen-sipp-hold-resume-rfc2833-udp.pcapng", dialogs: 1,
		requests:  map[string]uint64{"ACK": 3, "BYE": 1, "INVITE": 3},
		responses: map[string]uint64{"100 INVITE": 1, "180 INVITE": 1, "200 BYE": 1, "200 INVITE": 3}},
	{file: "gen-sipp-hold-resume-tls13-with-keys.pcapng", dialogs: 0, tlsSessions: 1,
		requests: map[string]uint64{}, responses: map[string]uint64{},
		why: "tshark decrypts with the keys embedded in the file (a Decryption Secrets Block) and counts 13 SIP " +
			"messages on 1 Call-ID; this analyser is given no keys (TestTLSKeysReference gives it the file's), so it must see no SIP and count the TLS session as unreadable"},
}

func TestGroundTruth(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	for _, tc := range groundTruth {
		t.Run(tc.file, func(t *testing.T) {
			if tc.why != "" {
				t.Log("differs from tshark by definition: " + tc.why)
			}
			st, a := loadCapture(t, filepath.Join(dir, tc.file))
			snap := st.Snapshot()
			if got := len(snap.Dialogs); got != tc.dialogs {
				t.Errorf("dialogs = %d, want %d distinct Call-IDs", got, tc.dialogs)
			}
			if !maps.Equal(snap.Stats.Requests, tc.requests) {
				t.Errorf("requests = %v, want %v", snap.Stats.Requests, tc.requests)
			}
			if !maps.Equal(snap.Stats.Responses, tc.responses) {
				t.Errorf("responses = %v, want %v", snap.Stats.Responses, tc.responses)
			}
			if len(snap.Stats.Undecodable) != 0 {
				t.Errorf("undecodable = %v, want none", snap.Stats.Undecodable)
			}
			ss, ds := a.Stats()
			if ss.TLSSessions != tc.tlsSessions {
				t.Errorf("TLS sessions = %d, want %d", ss.TLSSessions, tc.tlsSessions)
			}
			// The TLS capture's streams are on 5061: SIP the box could not
			// read, which every SIP answer's coverage must say.
			if (tc.tlsSessions > 0) != (ss.TLSOnSIPS > 0) {
				t.Errorf("TLS streams on the SIPS port = %d with %d TLS sessions", ss.TLSOnSIPS, tc.tlsSessions)
			}
			if tc.fragments && ds.Frag.Reassembled == 0 {
				t.Errorf("no datagram reassembled: %+v", ds.Frag)
			}
			// No reference capture carries Session-ID or
			// P-Charging-Vector, or an X- header naming another
			// Call-ID (tshark lists their headers): no strong link.
			for _, d := range snap.Dialogs {
				for _, o := range snap.Dialogs {
					if ev := CorrelationEvidence(d, o); ev != nil && !ev[0].Heuristic {
						t.Errorf("%s and %s correlated by %+v", d.CallID, o.CallID, ev)
					}
				}
			}
			if ss.DecodePanics != 0 {
				t.Errorf("decoder panicked %d times", ss.DecodePanics)
			}
		})
	}
}
