package isotp

import (
	"bytes"
	"os"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// The measured case (issue #33): on a real passenger car with no
// diagnostic session, 0x7BC carries a periodic 8-byte status frame whose
// first byte reads as a single-frame PCI, and uds_services reported 282
// requests on it, 5 of them ClearDiagnosticInformation, with the tester
// and the ECU on the same id. No log in ../shared/testdata has such an id
// (only the Leaf's has 0x7xx ids, a real session), so carLog builds one.
const (
	broadcastID     = 0x7BC
	broadcastFrames = 282
	broadcastEvery  = 100 * time.Millisecond
	// sidClearDTC is ClearDiagnosticInformation.
	sidClearDTC = 0x14
)

// broadcast variants: byte 0 and byte 1 of frame i.
var (
	// measuredBroadcast: byte 0 is 07 (a single frame of 7 bytes), byte 1
	// walks 00..3F (a request's SID), 0x14 at frames 12, 76, 140, 204, 268.
	measuredBroadcast = func(i int) (byte, byte) { return 0x07, byte(i * 7 % 0x40) }
	// bothWaysBroadcast: byte 1 also takes values an answer starts with.
	bothWaysBroadcast = func(i int) (byte, byte) { return 0x07, byte(i * 7 % 0x80) }
	// notPCIBroadcast: byte 0 is a signal that leaves the PCI range.
	notPCIBroadcast = func(i int) (byte, byte) { return byte(0x03 + i%0x50), byte(i * 7 % 0x40) }
)

// carLog is a candump log of a car's bus from start: two ordinary ids
// every 10 ms and the broadcast on 0x7BC every 100 ms, with a rolling
// counter in its last byte.
func carLog(start time.Time, variant func(int) (byte, byte)) []byte {
	var b []byte
	line := func(at time.Time, id uint32, data []byte) { b = wire.AppendCandump(b, at, "can0", id, data) }
	for i := range broadcastFrames {
		at := start.Add(time.Duration(i) * broadcastEvery)
		for j := range 10 {
			t := at.Add(time.Duration(j) * 10 * time.Millisecond)
			line(t, 0x1A0, []byte{byte(j), 0x20, 0, 0, 0x5A, 0, 0, byte(i)})
			line(t.Add(time.Millisecond), 0x280, []byte{0x10, byte(i), 0x7D, 0, 0, 0, 0, 0})
		}
		b0, b1 := variant(i)
		line(at.Add(5*time.Millisecond), broadcastID, []byte{b0, b1, 0x00, 0x3C, 0xFF, 0x00, 0x12, byte(i)})
	}
	return b
}

// records reads a port's stored frames in order.
func records(p *canbus.Port) []canbus.Record {
	var out []canbus.Record
	p.Frames().Range(0, func(_ uint64, r canbus.Record) bool { out = append(out, r); return true })
	return out
}

// TestBroadcastOnADiagnosticIDIsNotUDS: a periodic broadcast on 0x7BC is
// no diagnostic channel, whatever its first bytes look like. Neither a
// window trace nor the live store reports a transaction on it; it is a
// counted rejection with its reason, and its frames are counted.
func TestBroadcastOnADiagnosticIDIsNotUDS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		variant func(int) (byte, byte)
		reason  RejectReason
	}{
		{name: "requests only, as measured", variant: measuredBroadcast, reason: RejectUnpaired},
		{name: "requests and answers", variant: bothWaysBroadcast, reason: RejectBothWays},
		{name: "first byte leaves the PCI range", variant: notPCIBroadcast, reason: RejectNotISOTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := canbustest.LoadBytes(t, carLog(t0, tc.variant), "can0")
			tr, err := TraceFrames("can0", p.Frames(), Window{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Transactions) != 0 || tr.UDS.Requests != 0 || len(tr.Services) != 0 {
				t.Errorf("trace: %d transactions, %d requests, services %+v: want none on a broadcast",
					len(tr.Transactions), tr.UDS.Requests, tr.Services)
			}
			if rs := tr.Rejections; len(rs) != 1 || rs[0].Channel.ID != broadcastID || rs[0].Reason != tc.reason || rs[0].Frames != broadcastFrames {
				t.Errorf("trace rejections %+v, want 0x7BC %s with its %d frames", rs, tc.reason, broadcastFrames)
			}
			if tr.RejectedChannels[tc.reason.String()] != 1 || tr.UDS.Rejected == 0 {
				t.Errorf("rejected channels %v, counters %+v: want the channel and its transactions counted", tr.RejectedChannels, tr.UDS)
			}

			s, _ := New(Limits{})
			if err := s.FeedAll("can0", records(p)); err != nil {
				t.Fatal(err)
			}
			if n := s.Transactions().Len(); n != 0 {
				t.Errorf("store kept %d transactions, want none", n)
			}
			st := s.Status().Ports[0]
			if st.UDS.Requests != 0 || len(st.Rejections) != 1 || st.Rejections[0].Reason != tc.reason || st.RejectedChannels[tc.reason.String()] != 1 {
				t.Errorf("store port %+v", st)
			}
			if got := s.Rejected(); got[tc.reason.String()] != 1 || len(got) != int(numRejects) {
				t.Errorf("Rejected() = %v, want 1 %s and every reason listed", got, tc.reason)
			}
		})
	}
}

// TestBroadcastOnADiagnosticIDWasReadAsUDS shows the measured numbers
// come back from the broadcast when every frame of the diagnostic range
// is read as ISO-TP: 282 requests, 5 of them ClearDiagnosticInformation.
// The observer still reads them; the tracer no longer reports them.
func TestBroadcastOnADiagnosticIDWasReadAsUDS(t *testing.T) {
	p, _ := canbustest.LoadBytes(t, carLog(t0, measuredBroadcast), "can0")
	tr, err := NewTracer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	requests, clears := 0, 0
	tr.Observer().OnPDU = func(pdu *PDU) {
		if pdu.Channel.ID == broadcastID && pdu.Data[0]&positiveBit == 0 {
			requests++
			clears += b2i(pdu.Data[0] == sidClearDTC)
		}
		tr.pdu(pdu)
	}
	for i, r := range records(p) {
		tr.Feed(uint64(i), r.Time, r.ID, r.Payload())
	}
	tr.Flush(t0.Add(broadcastFrames * broadcastEvery))
	if requests != 282 || clears != 5 || tr.Counters().Requests != 0 || tr.Counters().Rejected != 282 {
		t.Errorf("%d request PDUs, %d clears, counters %+v: want 282 and 5 read, none reported, 282 rejected", requests, clears, tr.Counters())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// leafTx is what TestLeafSessionBesideABroadcast compares of a
// transaction: everything but the frame numbers, which the added frames
// shift.
type leafTx struct {
	status, service, identifier, from, to, data string
	ms                                          float64
}

func leafTxs(txs []Transaction) []leafTx {
	out := make([]leafTx, 0, len(txs))
	for _, tx := range txs {
		out = append(out, leafTx{tx.Status, tx.Service, tx.DID, tx.Request.CANID, tx.Responses[0].CANID, tx.DataHex, *tx.ResponseMs})
	}
	return out
}

// TestLeafSessionBesideABroadcast: the Leaf's real session (0x79B/0x7BB:
// 26 ReadDataByLocalIdentifier exchanges, FF+CF answers after flow
// control) comes out exactly as on the Leaf's own log when the measured
// broadcast runs on 0x7BC all along, which is rejected.
func TestLeafSessionBesideABroadcast(t *testing.T) {
	path := refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log")
	leaf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := canbustest.LoadBytes(t, leaf, "can0")
	want, err := TraceFrames("can0", alone.Frames(), Window{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := records(alone)[0].Time
	mixed := mergeLogs(t, leaf, carLog(first, measuredBroadcast))
	p, _ := canbustest.LoadBytes(t, mixed, "can0")
	for _, name := range []string{"trace", "store"} {
		var got []Transaction
		var rs []Rejection
		switch name {
		case "trace":
			tr, err := TraceFrames("can0", p.Frames(), Window{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, rs = tr.Transactions, tr.Rejections
		case "store":
			s, _ := New(Limits{})
			s.FeedAll("can0", records(p))
			s.Transactions().Range(0, func(_ uint64, r Record) bool { got = append(got, r.Transaction); return true })
			rs = s.Status().Ports[0].Rejections
		}
		if g, w := leafTxs(got), leafTxs(want.Transactions); !slices.Equal(g, w) || len(w) != 26 {
			t.Errorf("%s: %d transactions differ from the Leaf's own %d:\n%v\n%v", name, len(g), len(w), g, w)
		}
		if len(rs) != 1 || rs[0].Channel.ID != broadcastID || rs[0].Reason != RejectUnpaired {
			t.Errorf("%s: rejections %+v, want 0x7BC unpaired", name, rs)
		}
	}
}

// mergeLogs interleaves two candump logs by time.
func mergeLogs(t *testing.T, a, b []byte) []byte {
	t.Helper()
	type line struct {
		at   time.Time
		text []byte
	}
	var all []line
	for _, log := range [][]byte{a, b} {
		for l := range bytes.Lines(log) {
			var r wire.CandumpRecord
			if err := wire.DecodeCandump(bytes.TrimRight(l, "\n"), &r); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			all = append(all, line{r.Time, l})
		}
	}
	slices.SortStableFunc(all, func(x, y line) int { return x.at.Compare(y.at) })
	var out bytes.Buffer
	for _, l := range all {
		out.Write(l.text)
	}
	return out.Bytes()
}

// TestHeldIsBounded: what a tracer holds for channels not yet paired is
// bounded across channels; a channel whose transaction does not fit is
// rejected as unpaired, and a pairing still releases what another holds.
func TestHeldIsBounded(t *testing.T) {
	tr, err := NewTracer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []Transaction
	tr.OnTransaction = func(tx *Transaction) { got = append(got, *tx) }
	seq, at := uint64(0), t0
	feed := func(id uint32, data ...byte) {
		tr.Feed(seq, at, id, data)
		seq++
		at = at.Add(time.Millisecond)
	}
	channels := maxHeld/maxUnpaired + 1
	for c := range channels {
		for range maxUnpaired + 1 { // the last one ends the one before
			feed(uint32(0x700+c), 0x02, 0x3E, 0x00)
		}
	}
	if tr.Held() != maxHeld || tr.Counters().Rejected != maxUnpaired {
		t.Fatalf("held %d, rejected %d: want %d held and the last channel's %d dropped", tr.Held(), tr.Counters().Rejected, maxHeld, maxUnpaired)
	}
	if rs := tr.Rejections(); len(rs) != 1 || rs[0].Channel.ID != uint32(0x700+channels-1) || rs[0].Reason != RejectUnpaired {
		t.Errorf("rejections %+v", rs)
	}
	feed(0x7E8, 0x02, 0x7E, 0x00) // 0x700's ECU answers its open request, the oldest
	if len(got) != maxUnpaired+1 || tr.Held() != maxHeld-maxUnpaired {
		t.Errorf("%d transactions released, %d still held", len(got), tr.Held())
	}
}
