package rtp

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"fieldtap/services/sip"
)

// TestDialogTableIsFIFO: the dialog table keeps, finds and evicts what
// a fifo does, through growth, wrapping and probe runs shifted back.
func TestDialogTableIsFIFO(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 5000} {
		r := rand.New(rand.NewPCG(2, uint64(limit)))
		want, got := newFIFO[string, *dialogMedia](limit), newDialogTable(limit, 0)
		for range 50 * limit {
			// Call-IDs from a space a few times the limit, so some are
			// found and some come back after their eviction.
			id := "call-" + itoa(r.IntN(3*limit+1)) + "@host"
			wd, wok := want.get(id)
			gd, h, gok := got.lookup([]byte(id))
			if wd != gd || wok != gok {
				t.Fatalf("limit %d: lookup(%s) = %p %v, fifo %p %v", limit, id, gd, gok, wd, wok)
			}
			if wok {
				continue
			}
			d := &dialogMedia{callID: id}
			want.add(id, d)
			got.add(h, d)
			if want.len() != got.len() || want.evicted != got.evicted {
				t.Fatalf("limit %d: add(%s) left %d (%d evicted), fifo %d (%d evicted)", limit, id, got.len(), got.evicted, want.len(), want.evicted)
			}
		}
		var wids, gids []string
		want.each(func(id string, _ *dialogMedia) { wids = append(wids, id) })
		got.each(func(d *dialogMedia) { gids = append(gids, d.callID) })
		if strings.Join(wids, " ") != strings.Join(gids, " ") {
			t.Fatalf("limit %d: each visits %v, fifo %v", limit, gids, wids)
		}
	}
}

// maximalSDP is a body of about 16 KiB (sdp.MaxBody) that the parse keeps
// as much of as it can: sections of 32 dynamic formats, each with a long
// rtpmap name and a long fmtp, and four a=crypto keys a section.
func maximalSDP(host string, port, seed int) string {
	var b strings.Builder
	b.WriteString("v=0\r\no=- " + itoa(seed) + " 1 IN IP4 " + host + "\r\ns=-\r\nc=IN IP4 " + host + "\r\nt=0 0\r\n")
	for m := 0; b.Len() < 16<<10; m++ {
		b.WriteString("m=audio " + itoa(port+2*m) + " RTP/SAVP")
		for pt := range 32 {
			b.WriteString(" " + itoa(96+pt))
		}
		b.WriteString("\r\n")
		for pt := range 32 {
			b.WriteString("a=rtpmap:" + itoa(96+pt) + " " + strings.Repeat("x", 40) + itoa(seed) + "/8000\r\n")
			b.WriteString("a=fmtp:" + itoa(96+pt) + " " + strings.Repeat("f", 120) + "\r\n")
		}
		for k := range 4 {
			b.WriteString("a=crypto:" + itoa(k+1) + " AES_CM_128_HMAC_SHA1_80 inline:" + strings.Repeat("K", 40) + "\r\n")
		}
	}
	return b.String()[:16<<10]
}

// TestMediaWithinItsShares signals more calls than the analyser's shares
// hold and checks that what the dialogs and endpoints are charged holds
// the heap they grew, within each table's share, every dialog kept or
// counted evicted: calls of a phone's offer and answer, and calls whose
// offer, answer and four re-INVITEs each carry a body at the SDP parse's
// bounds (the sessions a dialog keeps and the lines its endpoints keep).
// The charge is above the heap by what is charged twice: a line's
// formats and keys to both its endpoints and, while the dialog keeps
// it, to its session, most of a maximal body's bytes.
func TestMediaWithinItsShares(t *testing.T) {
	cases := []struct {
		name   string
		calls  int
		least  float64 // the heap's least share of the charge
		bodies func(i int) []sip.Parsed
	}{
		{"phone", 12000, 0.5, func(i int) []sip.Parsed {
			id := "a84b4c76e66710" + itoa(1_000_000+i) + "@pc33.example.com" // ~40 bytes, as phones write them
			return []sip.Parsed{sdpMessage(t, id, i, false, 10000+2*(i%20000)), sdpMessage(t, id, i, true, 10000+2*(i%20000))}
		}},
		{"maximal", 60, 0.3, func(i int) []sip.Parsed {
			id := "max-" + itoa(i) + "@example.com"
			var ms []sip.Parsed
			for v := range 6 {
				host := "192.0.2." + itoa(1+v%2)
				ms = append(ms, sipWithBody(t, id, v%2 == 1, maximalSDP(host, 10000+40*(i*6+v)%50000, i*6+v)))
			}
			return ms
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{MaxBytes: 4 << 20}
			o.fill()
			var msgs []sip.Parsed
			var metas []sip.Meta
			for i := range tc.calls {
				for j, m := range tc.bodies(i) {
					msgs = append(msgs, m)
					metas = append(metas, sip.Meta{Time: time.Unix(int64(1000+i), int64(j)), Src: netip.MustParseAddrPort("192.0.2.1:5060")})
				}
			}
			runtime.GC()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			a := NewAnalyser(o)
			for i := range msgs {
				a.SIPMessage(metas[i], &msgs[i])
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(msgs)
			runtime.KeepAlive(metas)
			u := a.Usage()
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			t.Logf("%d calls: %d dialogs kept (%d evicted), %d endpoints (%d evicted): heap grew %.0f bytes, charged %d (dialogs %d of %d, endpoints %d of %d)",
				tc.calls, u.Dialogs, a.st.DialogsEvicted, u.Endpoints, a.st.EndpointsEvicted, heap, u.Bytes, a.dialogs.bytes, o.dialogShare, a.endpoints.bytes, o.endpointShare)
			if heap > float64(u.Bytes) || heap < tc.least*float64(u.Bytes) {
				t.Errorf("heap grew %.0f bytes, charged %d: not within %.1f–1.0 of the charge", heap, u.Bytes, tc.least)
			}
			if a.dialogs.bytes > o.dialogShare || a.endpoints.bytes > o.endpointShare {
				t.Errorf("dialogs charged %d of %d, endpoints %d of %d: past a share", a.dialogs.bytes, o.dialogShare, a.endpoints.bytes, o.endpointShare)
			}
			if a.st.DialogsEvicted == 0 || u.Dialogs+int(a.st.DialogsEvicted) != tc.calls {
				t.Errorf("%d kept and %d evicted of %d dialogs: the share never filled, or a dialog went uncounted", u.Dialogs, a.st.DialogsEvicted, tc.calls)
			}
			// The store's items are streams: its evictions are theirs
			// (the coverage block says "evicted N of M RTP streams").
			if u.Evicted != a.st.StreamsEvicted {
				t.Errorf("Usage.Evicted %d, streams evicted %d: dialogs or endpoints counted as streams", u.Evicted, a.st.StreamsEvicted)
			}
			runtime.KeepAlive(a)
		})
	}
}
