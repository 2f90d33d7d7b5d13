package sip

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/heapsize"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// chargeByReading is what a dialog is charged, read off every string and
// list it holds: the sum the store kept before it added up the lists'
// strings as they were kept (Dialog.listBytes). Call-ID, users and
// display names are one allocation (setIdents), charged as five strings
// unless the one is larger.
func chargeByReading(sl *slot) int {
	d := sl.d
	n := heapsize.Pointers(int(unsafe.Sizeof(slot{}))) + heapsize.Pointers(int(unsafe.Sizeof(Dialog{})))
	n += heapsize.MapEntry(int(unsafe.Sizeof("") + unsafe.Sizeof(sl)))
	n += max(heapsize.String(d.CallID)+heapsize.String(d.FromUser)+heapsize.String(d.ToUser)+heapsize.String(d.FromDisplay)+heapsize.String(d.ToDisplay),
		heapsize.Bytes(len(d.CallID)+len(d.FromUser)+len(d.ToUser)+len(d.FromDisplay)+len(d.ToDisplay)))
	n += heapsize.String(d.FinalReason) + heapsize.String(d.ReasonHeader)
	for _, list := range [...][]string{d.UserAgents, d.SessionIDs, d.ICIDs} {
		n += heapsize.Pointers(cap(list) * int(unsafe.Sizeof("")))
		for _, s := range list {
			n += heapsize.String(s)
		}
	}
	n += heapArray(d.ToTags, d.tagsIn[:], heapsize.Pointers)
	for _, s := range d.ToTags {
		n += heapsize.String(s)
	}
	n += heapsize.Pointers(cap(d.XHeaders) * int(unsafe.Sizeof(XHeader{})))
	for _, x := range d.XHeaders {
		n += heapsize.String(x.Name) + heapsize.String(x.Value)
	}
	n += heapArray(d.Methods, d.methodsIn[:], heapsize.Pointers)
	n += heapArray(d.Participants, d.partsIn[:], heapsize.Pointers)
	n += heapArray(d.msgs, d.msgsIn[:], heapsize.Bytes) + heapArray(d.txKeys, d.keysIn[:], heapsize.Bytes) + heapArray(d.txIDs, d.idsIn[:], heapsize.Bytes)
	n += heapsize.Pointers(cap(d.Txns) * int(unsafe.Sizeof(Transaction{})))
	for _, tx := range d.Txns {
		n += heapsize.String(tx.Branch) + heapsize.String(tx.FinalReason)
	}
	return n
}

// heapArray is the bytes of list's array by its capacity (size is
// heapsize.Bytes or Pointers), 0 when that array is in the Dialog.
func heapArray[T any](list, in []T, size func(int) int) int {
	if cap(list) == 0 || &list[:1][0] == &in[0] {
		return 0
	}
	var v T
	return size(cap(list) * int(unsafe.Sizeof(v)))
}

// checkCharges holds every kept dialog's charge to chargeByReading.
func checkCharges(t *testing.T, st *Store, where string) {
	t.Helper()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.order.Snapshot().Range(0, func(_ uint64, sl *slot) bool {
		if got, want := dialogBytes(sl), chargeByReading(sl); got != want {
			t.Errorf("%s: dialog %q charged %d bytes, its strings and lists hold %d", where, sl.d.CallID, got, want)
		}
		return true
	})
}

// TestDialogChargeMatchesItsLists: the charge the store adds up message by
// message equals what reading the dialog's lists gives, on the reference
// captures (forks, re-INVITEs, INFO, REGISTER, TCP and WebSocket), on
// calls carrying every correlation key, and with snapshots taken between
// messages (the store then changes copies).
func TestDialogChargeMatchesItsLists(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	for _, tc := range groundTruth {
		t.Run(tc.file, func(t *testing.T) {
			st := newStore(t, Limits{})
			a := NewAnalyser(st, netdecode.Options{})
			i := 0
			refdata.EachRecord(t, filepath.Join(dir, tc.file), func(rec pcapfile.Record) {
				a.Feed(rec.Time, rec.Link, rec.Data)
				if i++; i%3 == 0 {
					st.Snapshot()
				}
			})
			checkCharges(t, st, tc.file)
		})
	}
	t.Run("correlation keys", func(t *testing.T) {
		st := newStore(t, Limits{TransactionsPerDialog: 2})
		t0 := time.Unix(1000, 0)
		for i, raw := range []string{
			legInvite("k", "alice", "bob", "Session-ID: "+uuidA+";remote=0123456789abcdef0123456789abcdef",
				"P-Charging-Vector: icid-value=1234bc9876e", "X-Orig-Call-ID: b", "X-Account: 77", "User-Agent: phone/1"),
			resp(180, "INVITE", "k", 1), resp(486, "INVITE", "k", 1),
			withHeader(req("INVITE", "k", 2), "Server: pbx/2"), withHeader(resp(200, "INVITE", "k", 2), "Reason: Q.850;cause=16"),
			req("BYE", "k", 3), resp(200, "BYE", "k", 3),
		} {
			addRaw(t, st, t0.Add(time.Duration(i)*time.Second), raw)
			if i%2 == 0 {
				st.Snapshot()
			}
			checkCharges(t, st, "correlation keys")
		}
	})
	t.Run("generated calls", func(t *testing.T) {
		st := newStore(t, Limits{})
		fillCalls(t, st, 200)
		checkCharges(t, st, "generated calls")
	})
}

// chargeAppended is what a dialog was charged before the ingest changes of
// issue #39: five identity strings of their own, every list grown by
// append from nil to its length, the strings the lists hold read off
// them. The charge decides how many dialogs a budget keeps, so the
// changes must not raise it.
func chargeAppended(d *Dialog) int {
	// The Dialog of then, in its size class, not today's, whose arrays
	// for the lists are what the lists' charges below stand for.
	const dialogThen = 896
	n := heapsize.Pointers(int(unsafe.Sizeof(slot{}))) + dialogThen
	n += heapsize.MapEntry(int(unsafe.Sizeof("") + unsafe.Sizeof(&slot{})))
	for _, s := range [...]string{d.CallID, d.FromUser, d.ToUser, d.FromDisplay, d.ToDisplay, d.FinalReason, d.ReasonHeader} {
		n += heapsize.String(s)
	}
	ptr := int(unsafe.Sizeof(""))
	for _, list := range [...][]string{d.UserAgents, d.ToTags, d.SessionIDs, d.ICIDs} {
		n += heapsize.Appended(len(list), ptr, true)
		for _, s := range list {
			n += heapsize.String(s)
		}
	}
	n += heapsize.Appended(len(d.XHeaders), int(unsafe.Sizeof(XHeader{})), true)
	for _, x := range d.XHeaders {
		n += heapsize.String(x.Name) + heapsize.String(x.Value)
	}
	n += heapsize.Appended(len(d.Methods), ptr, true)
	n += heapsize.Appended(len(d.Participants), int(unsafe.Sizeof(netip.AddrPort{})), true)
	// The three uint64 lists were charged as one sum of capacities.
	caps := 0
	for _, l := range [...]int{len(d.msgs), len(d.txKeys), len(d.txIDs)} {
		caps += heapsize.Appended(l, 8, false) / 8
	}
	n += heapsize.Bytes(8 * caps)
	n += heapsize.Appended(len(d.Txns), int(unsafe.Sizeof(Transaction{})), true)
	for _, tx := range d.Txns {
		n += heapsize.String(tx.Branch) + heapsize.String(tx.FinalReason)
	}
	return n
}

// TestShortCallChargedAsBefore: a short failed INVITE dialog (INVITE and
// a final answer, BenchmarkToolCallEndToEnd's 100,000 of them, or with a
// 100 and an ACK) and an answered call are charged what they were before
// the ingest changes (chargeAppended), not more: sizing a dialog's lists
// for a whole call at its second message charged an INVITE and its 487
// 424 bytes more (1,447 to 1,871), so a budget that held 100,000 such
// dialogs evicted a fifth of them.
func TestShortCallChargedAsBefore(t *testing.T) {
	hdr := "Via: SIP/2.0/UDP 10.2.0.1:5060;branch=z9hG4bKb12345\r\nFrom: <sip:1345@10.2.0.1>;tag=a\r\nTo: <sip:2000@10.2.0.2>%s\r\n" +
		"Call-ID: bench-12345@10.2.0.1\r\nCSeq: %d %s\r\nContent-Length: 0\r\n\r\n"
	invite := "INVITE sip:2000@10.2.0.2 SIP/2.0\r\n" + fmt.Sprintf(hdr, "", 1, "INVITE")
	answer := func(code int) string {
		return fmt.Sprintf("SIP/2.0 %d X\r\n", code) + fmt.Sprintf(hdr, ";tag=b", 1, "INVITE")
	}
	cases := map[string][]string{
		"INVITE 487": {invite, answer(487)},
		"INVITE 200": {invite, answer(200)},
		"INVITE 100 404 ACK": {invite, answer(100), answer(404),
			"ACK sip:2000@10.2.0.2 SIP/2.0\r\n" + fmt.Sprintf(hdr, ";tag=b", 1, "ACK")},
		"INVITE 100 180 200 ACK BYE 200": ladder(12345),
	}
	for _, code := range []int{486, 404, 503, 480, 603} {
		cases[fmt.Sprintf("INVITE %d", code)] = []string{invite, answer(code)}
	}
	for name, msgs := range cases {
		st := newStore(t, Limits{})
		var m Parsed
		src, dst := netip.MustParseAddrPort("10.2.0.1:5060"), netip.MustParseAddrPort("10.2.0.2:5060")
		for i, raw := range msgs {
			if err := m.Parse([]byte(raw)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			st.Add(Meta{Time: time.Unix(1000, int64(i)), Src: src, Dst: dst, Transport: TransportUDP}, &m, []byte(raw))
		}
		st.mu.Lock()
		st.order.Snapshot().Range(0, func(_ uint64, sl *slot) bool {
			got, before := dialogBytes(sl), chargeAppended(sl.d)
			t.Logf("%s: charged %d bytes, before the changes %d", name, got, before)
			if got > before {
				t.Errorf("%s: charged %d bytes, %d more than before the ingest changes (%d)", name, got, got-before, before)
			}
			return true
		})
		st.mu.Unlock()
	}
}
