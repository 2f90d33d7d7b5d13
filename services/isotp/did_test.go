package isotp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// TestIdentifyLayouts reads the identifier of every service layout Identify
// knows (ISO 14229-1: 0x22 10.2, 0x2E 10.7, 0x31 13.2, 0x19 11.3, 0x14 11.2),
// from built requests and answers.
func TestIdentifyLayouts(t *testing.T) {
	many := []byte{SIDReadDataByID}
	for i := range MaxDIDs + 3 {
		many = append(many, 0xF1, byte(0x80+i))
	}
	for _, tc := range []struct {
		name string
		pdu  []byte
		kind string
		want []string
		drop int
	}{
		{"read one DID", ReadDataByID(0xF190), KindDID, []string{"0xF190"}, 0},
		{"read three DIDs", []byte{0x22, 0xF1, 0x90, 0xF1, 0x8C, 0x01, 0x00}, KindDID, []string{"0xF190", "0xF18C", "0x0100"}, 0},
		{"read with a stray last byte", []byte{0x22, 0xF1, 0x90, 0xF1}, KindDID, []string{"0xF190"}, 0},
		{"read past MaxDIDs", many, KindDID, nil, 3},
		{"read without a DID", []byte{0x22, 0xF1}, "", nil, 0},
		{"read answer: its first DID", []byte{0x62, 0xF1, 0x90, 'W', 'V', 'W'}, KindDID, []string{"0xF190"}, 0},
		{"write", []byte{0x2E, 0xF1, 0x98, 0x01, 0x02}, KindDID, []string{"0xF198"}, 0},
		{"write answer", []byte{0x6E, 0xF1, 0x98}, KindDID, []string{"0xF198"}, 0},
		{"read scaling", []byte{0x24, 0x01, 0x02}, KindDID, []string{"0x0102"}, 0},
		{"io control answer", []byte{0x6F, 0x49, 0x01, 0x03}, KindDID, []string{"0x4901"}, 0},
		{"routine start", []byte{0x31, 0x01, 0xFF, 0x00, 0xAA}, KindRoutine, []string{"0xFF00"}, 0},
		{"routine results answer", []byte{0x71, 0x03, 0x02, 0x03, 0x00}, KindRoutine, []string{"0x0203"}, 0},
		{"routine without an id", []byte{0x31, 0x01, 0xFF}, "", nil, 0},
		{"DTCs by mask", ReadDTC(DTCByMask, 0xFF), KindReportType, []string{"0x02"}, 0},
		{"report type with suppress bit", []byte{0x19, 0x81, 0x08}, KindReportType, []string{"0x01"}, 0},
		{"DTC answer", []byte{0x59, 0x0A, 0xFF}, KindReportType, []string{"0x0A"}, 0},
		{"clear all DTCs", []byte{0x14, 0xFF, 0xFF, 0xFF}, KindDTCGroup, []string{"0xFFFFFF"}, 0},
		{"clear powertrain group", []byte{0x14, 0x00, 0x00, 0x00}, KindDTCGroup, []string{"0x000000"}, 0},
		{"KWP2000 clear, 2-byte group", []byte{0x14, 0xFF, 0x00}, "", nil, 0},
		{"clear answer carries none", []byte{0x54}, "", nil, 0},
		{"local identifier", []byte{0x21, 0x01}, KindLocal, []string{"0x01"}, 0},
		{"local identifier answer", []byte{0x61, 0x04, 0x02, 0x00}, KindLocal, []string{"0x04"}, 0},
		{"OBD-II PID", []byte{0x01, 0x0C}, KindPID, []string{"0x0C"}, 0},
		{"OBD-II VIN answer", []byte{0x49, 0x02, 0x01, 'W'}, KindPID, []string{"0x02"}, 0},
		{"negative answer", []byte{0x7F, 0x22, 0x31}, "", nil, 0},
		{"session control has none", SessionControl(3), "", nil, 0},
		{"SID alone", []byte{0x22}, "", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := Identify(tc.pdu)
			var got []string
			for _, v := range id.Values {
				got = append(got, id.Hex(v))
			}
			if tc.name == "read past MaxDIDs" {
				tc.want = got[:0:0]
				for i := range MaxDIDs {
					tc.want = append(tc.want, fmt.Sprintf("0xF1%02X", 0x80+i))
				}
			}
			if id.Kind != tc.kind || !slices.Equal(got, tc.want) || id.Dropped != tc.drop {
				t.Errorf("Identify(% X) = %s %v dropped %d, want %s %v dropped %d", tc.pdu, id.Kind, got, id.Dropped, tc.kind, tc.want, tc.drop)
			}
		})
	}
}

// TestTraceCarriesDIDs runs a tester's session through the tracer:
// a multi-DID read, a routine, a DTC clear, and an answer whose request
// was not seen, which takes its DID from the answer.
func TestTraceCarriesDIDs(t *testing.T) {
	tr, err := NewTracer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []Transaction
	tr.OnTransaction = func(tx *Transaction) { got = append(got, *tx) }
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	seq := uint64(0)
	send := func(id uint32, data ...byte) {
		at = at.Add(5 * time.Millisecond)
		tr.Feed(seq, at, id, append([]byte{byte(len(data))}, data...))
		seq++
	}
	send(0x7E8, 0x62, 0xF1, 0x8C, 0x41) // its request came before the trace
	send(0x7E0, 0x22, 0xF1, 0x90, 0xF1, 0x8C)
	send(0x7E8, 0x7F, 0x22, 0x31)
	send(0x7E0, 0x31, 0x01, 0xFF, 0x00)
	send(0x7E8, 0x71, 0x01, 0xFF, 0x00)
	send(0x7E0, 0x14, 0xFF, 0xFF, 0xFF)
	send(0x7E8, 0x54)
	tr.Flush(at.Add(10 * time.Second))
	want := []struct{ did, kind, name string }{{"0xF18C", KindDID, "ECUSerialNumber"}, {"0xF190", KindDID, "VIN"}, {"0xFF00", KindRoutine, ""}, {"0xFFFFFF", KindDTCGroup, ""}}
	if len(got) != len(want) {
		t.Fatalf("%d transactions, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if tx := got[i]; tx.DID != w.did || tx.DIDKind != w.kind || tx.DIDName != w.name {
			t.Errorf("transaction %d (%s): did %s %s %q, want %s %s %q", i, tx.Service, tx.DID, tx.DIDKind, tx.DIDName, w.did, w.kind, w.name)
		}
	}
	if got[0].Status != StatusUnmatched || !slices.Equal(got[1].DIDs, []string{"0xF190", "0xF18C"}) || got[2].DIDs != nil {
		t.Errorf("unmatched %s, multi-DID %v, routine %v", got[0].Status, got[1].DIDs, got[2].DIDs)
	}
}

// TestIdentifyNissanLeafGroundTruth checks the identifiers of every PDU of
// css_uds_nissan_leaf_2F6913DB.log, requests (0x79B) and answers (0x7BB),
// against GROUND_TRUTH.json's ISO-TP section (../shared/testdata/can,
// computed apart from fieldtap): its first-three-bytes histogram per id
// gives the SID and the local identifier of every complete PDU.
func TestIdentifyNissanLeafGroundTruth(t *testing.T) {
	const file = "css_uds_nissan_leaf_2F6913DB.log"
	log := refdata.File(t, "can", file)
	raw, err := os.ReadFile(refdata.File(t, "can", "GROUND_TRUTH.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gt struct {
		ISOTP []struct {
			File  string `json:"file"`
			PerID map[string]struct {
				Complete int      `json:"pdus_complete"`
				Top      [][2]any `json:"pdu_prefix3_top"`
			} `json:"per_id"`
		} `json:"isotp_logs"`
	}
	if err := json.Unmarshal(raw, &gt); err != nil {
		t.Fatal(err)
	}
	want := map[uint32]map[string]int{} // id → "SID/identifier" → PDUs
	for _, l := range gt.ISOTP {
		if l.File != file {
			continue
		}
		for idHex, s := range l.PerID {
			id, _ := strconv.ParseUint(idHex[2:], 16, 32)
			want[uint32(id)] = map[string]int{}
			n := 0
			for _, e := range s.Top {
				p, c := e[0].(string), int(e[1].(float64))
				want[uint32(id)][fmt.Sprintf("0x%s/0x%s", p[:2], p[2:4])] += c
				n += c
			}
			if n != s.Complete {
				t.Fatalf("%s: the histogram covers %d of %d PDUs", idHex, n, s.Complete)
			}
		}
	}
	if len(want) != 2 {
		t.Fatalf("GROUND_TRUTH.json has %d ids for %s, want 0x79B and 0x7BB", len(want), file)
	}
	fh, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	got := map[uint32]map[string]int{}
	rs := map[uint32]*Reassembler{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var rec wire.CandumpRecord
		if wire.DecodeCandump(sc.Bytes(), &rec) != nil || want[rec.ID] == nil {
			continue
		}
		if rs[rec.ID] == nil {
			rs[rec.ID], got[rec.ID] = &Reassembler{}, map[string]int{}
		}
		res, err := rs[rec.ID].Feed(rec.Payload())
		if err != nil || res.Payload == nil {
			continue
		}
		id := Identify(res.Payload)
		if id.Kind != KindLocal || len(id.Values) != 1 {
			t.Errorf("%X: % X read as %s %v", rec.ID, res.Payload, id.Kind, id.Values)
			continue
		}
		got[rec.ID][Hex8(res.Payload[0])+"/"+id.Hex(id.Values[0])]++
	}
	for id, w := range want {
		if fmt.Sprint(got[id]) != fmt.Sprint(w) {
			t.Errorf("0x%X: identifiers %v, GROUND_TRUTH.json %v", id, got[id], w)
		}
	}
}
