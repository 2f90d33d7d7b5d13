package sip

import (
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
// display names are one allocation (setIdents).
func chargeByReading(sl *slot) int {
	d := sl.d
	n := heapsize.Pointers(int(unsafe.Sizeof(slot{}))) + heapsize.Pointers(int(unsafe.Sizeof(Dialog{})))
	n += heapsize.MapEntry(int(unsafe.Sizeof("") + unsafe.Sizeof(sl)))
	n += heapsize.Bytes(len(d.CallID) + len(d.FromUser) + len(d.ToUser) + len(d.FromDisplay) + len(d.ToDisplay))
	n += heapsize.String(d.FinalReason) + heapsize.String(d.ReasonHeader)
	for _, list := range [...][]string{d.UserAgents, d.ToTags, d.SessionIDs, d.ICIDs} {
		n += heapsize.Pointers(cap(list) * int(unsafe.Sizeof("")))
		for _, s := range list {
			n += heapsize.String(s)
		}
	}
	n += heapsize.Pointers(cap(d.XHeaders) * int(unsafe.Sizeof(XHeader{})))
	for _, x := range d.XHeaders {
		n += heapsize.String(x.Name) + heapsize.String(x.Value)
	}
	n += heapsize.Pointers(cap(d.Methods) * int(unsafe.Sizeof("")))
	n += heapsize.Pointers(cap(d.Participants) * int(unsafe.Sizeof(netip.AddrPort{})))
	n += heapsize.Bytes(8 * (cap(d.msgs) + cap(d.txKeys) + cap(d.txIDs)))
	n += heapsize.Pointers(cap(d.Txns) * int(unsafe.Sizeof(Transaction{})))
	for _, tx := range d.Txns {
		n += heapsize.String(tx.Branch) + heapsize.String(tx.FinalReason)
	}
	return n
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
