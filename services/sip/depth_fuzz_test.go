package sip

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// FuzzDialogDepth feeds sender bytes through the store and every
// function that reads what they left: transactions, call attempts,
// correlation keys and the Wireshark filter of the Call-ID.
func FuzzDialogDepth(f *testing.F) {
	f.Add(legInvite("a", "alice", "pbx", "Session-ID: "+uuidA+";remote="+uuidNil, "P-Charging-Vector: icid-value=1234bc9876e", "X-Orig-Call-ID: b"))
	f.Add(resp(401, "INVITE", "a\"b\\c", 1))
	f.Add(req("REGISTER", "x", 1))
	f.Fuzz(func(t *testing.T, raw string) {
		var m Parsed
		if m.Parse([]byte(raw)) != nil || m.Validate() != nil {
			return
		}
		st, _ := New(Limits{MessagesPerDialog: 8})
		meta := Meta{Time: time.Unix(0, 0), Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: TransportUDP}
		st.Add(meta, &m, []byte(raw))
		other := storeOf(t, legInvite("b", "bob", "pbx", "Session-ID: "+uuidA)).Dialogs[0]
		for _, d := range st.Snapshot().Dialogs {
			d.Attempts()
			TriageCall(d)
			CorrelationEvidence(d, other)
			for _, u := range d.SessionIDs {
				if !isUUID([]byte(u)) {
					t.Errorf("kept Session-ID %q is not a UUID", u)
				}
			}
			if f, err := WiresharkFilter(d.CallID, nil); err == nil && strings.ContainsFunc(f.All, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Errorf("filter %q holds a control character", f.All)
			}
		}
	})
}
