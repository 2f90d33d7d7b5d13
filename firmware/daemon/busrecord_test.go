package daemon

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/transmit"
)

// A plan's bus check reads the stores the sim truck's traffic filled:
// frames per source address agree with the id table, address claims name
// their ECU, and the last answers of a J1939 PGN and of a workshop UDS
// request are found.
func TestBusRecordReadsTheStores(t *testing.T) {
	an := feedSimTruck(t)
	rec := busRecord{can: an.can, j1939: an.j1939, uds: an.uds}
	never := func(time.Time) bool { return false }
	since, until := time.Unix(0, 0), time.Unix(2e9, 0)

	want := map[uint8]uint64{}
	for _, s := range an.can.Lookup("can0").IDs() {
		if s.Extended {
			want[uint8(s.ID)] += s.Count
		}
	}
	if len(want) == 0 {
		t.Fatal("the sim truck sent no 29-bit frames")
	}
	for sa, n := range want {
		got, last := rec.Seen("can0", since, until, func(id uint32) bool { return id&wire.CANEFF != 0 && uint8(id) == sa }, never)
		if uint64(got) != n || last.IsZero() {
			t.Errorf("SA %02X: %d frames (last %v), the id table counts %d", sa, got, last, n)
		}
	}
	if n, _ := rec.Seen("can0", since, until, func(uint32) bool { return true }, func(time.Time) bool { return true }); n != 0 {
		t.Errorf("%d frames counted that skip rejects", n)
	}

	claimed := 0
	names := an.j1939.NameOf("can0")
	for sa := 0; sa < 256; sa++ {
		who := rec.Claimant("can0", uint8(sa))
		if (names(uint8(sa)) != nil) != (who != "") {
			t.Errorf("SA %02X: claimant %q, NAME %+v", sa, who, names(uint8(sa)))
		}
		if who != "" {
			claimed++
		}
	}
	if claimed == 0 {
		t.Error("no address claim on the sim truck's bus")
	}

	at, what, ok := rec.LastAnswer("can0", &transmit.Expect{Kind: transmit.ExpectJ1939, PGN: j1939.PGNEEC1, From: 0x00}, until)
	if !ok || at.IsZero() || !strings.Contains(what, "PGN 61444 from SA 0x00") {
		t.Errorf("EEC1 from the engine: %v %q %v", at, what, ok)
	}
	if _, _, ok := rec.LastAnswer("can0", &transmit.Expect{Kind: transmit.ExpectJ1939, PGN: j1939.PGNEEC1, From: 0x00}, time.Unix(0, 0)); ok {
		t.Error("an answer found before the record starts")
	}

	// The workshop session's last answered request, asked again.
	var tx *isotp.Record
	snap := an.uds.Transactions()
	snap.Range(snap.FirstSeq(), func(_ uint64, r isotp.Record) bool {
		if r.Request != nil && len(r.Responses) > 0 && r.DID != "" {
			tx = &r
		}
		return true
	})
	if tx == nil {
		t.Fatal("no answered UDS request with an identifier in the workshop session")
	}
	reqID, respID := parseID(t, tx.Request.CANID), parseID(t, tx.Responses[len(tx.Responses)-1].CANID)
	payload := hexOf(t, tx.Request.Data)
	at, what, ok = rec.LastAnswer("can0", &transmit.Expect{Kind: transmit.ExpectUDS, RequestID: reqID, ResponseID: respID, Request: payload}, until)
	if !ok || !at.Equal(tx.Responses[len(tx.Responses)-1].Time) || what == "" {
		t.Errorf("UDS %s %s: %v %q %v, want the answer at %v", tx.Request.CANID, tx.Request.Data, at, what, ok, tx.Responses[len(tx.Responses)-1].Time)
	}
	other := append([]byte{payload[0] ^ 0x40}, payload[1:]...)
	if _, _, ok := rec.LastAnswer("can0", &transmit.Expect{Kind: transmit.ExpectUDS, RequestID: reqID, ResponseID: respID, Request: other}, until); ok {
		t.Error("an answer to another service was taken for this request's")
	}
}

// parseID reads an id as wire.FormatCANID writes it: 8 digits are 29-bit.
func parseID(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 8 {
		v |= uint64(wire.CANEFF)
	}
	return uint32(v)
}

func hexOf(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
