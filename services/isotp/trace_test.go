package isotp

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

func trace(t *testing.T, steps []step, flushMs int) ([]Transaction, TraceCounters) {
	t.Helper()
	tr, err := NewTracer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txs []Transaction
	tr.OnTransaction = func(tx *Transaction) { txs = append(txs, *tx) }
	for i, s := range steps {
		b, err := hex.DecodeString(strings.ReplaceAll(s.data, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		tr.Feed(uint64(i), t0.Add(time.Duration(s.ms)*time.Millisecond), s.id, b)
	}
	tr.Flush(t0.Add(time.Duration(flushMs) * time.Millisecond))
	return txs, tr.Counters()
}

func TestTracer(t *testing.T) {
	vin := "62F190" + hex.EncodeToString([]byte("1FUJGLDR8TF000042"))
	tests := []struct {
		name   string
		steps  []step
		flush  int
		status []string
		check  func(t *testing.T, txs []Transaction, c TraceCounters)
	}{
		{
			name: "VIN read after response pending",
			steps: []step{
				{0, 0x7E0, "0322F190"},
				{40, 0x7E8, "037F2278"},
				{1040, 0x7E8, "1014" + vin[:12]},
				{1041, 0x7E0, "300000"},
				{1042, 0x7E8, "21" + vin[12:26]},
				{1043, 0x7E8, "22" + vin[26:40]},
			},
			status: []string{StatusPositive},
			check: func(t *testing.T, txs []Transaction, c TraceCounters) {
				tx := txs[0]
				if tx.Service != "ReadDataByIdentifier" || tx.DID != "0xF190" || tx.DIDName != "VIN" || tx.Pending != 1 ||
					len(tx.Responses) != 2 || *tx.ResponseMs != 1040 || tx.Text != "1FUJGLDR8TF000042" {
					t.Errorf("transaction %+v", tx)
				}
				if !tx.Responses[0].Pending || *tx.Responses[0].AfterMs != 40 {
					t.Errorf("first answer %+v", tx.Responses[0])
				}
				if c.PendingAnswers != 1 || c.Positive != 1 {
					t.Errorf("counters %+v", c)
				}
			},
		},
		{
			name: "negative answer named",
			steps: []step{
				{0, 0x7E0, "0322F186"},
				{12, 0x7E8, "037F2231"},
			},
			status: []string{StatusNegative},
			check: func(t *testing.T, txs []Transaction, _ TraceCounters) {
				if tx := txs[0]; tx.NRC != "0x31" || tx.NRCName != "requestOutOfRange" || tx.DIDName != "activeDiagnosticSession" || *tx.ResponseMs != 12 {
					t.Errorf("transaction %+v", tx)
				}
			},
		},
		{
			name: "session control sub-function and timings",
			steps: []step{
				{0, 0x7E0, "021003"},
				{3, 0x7E8, "0650030032 01F4"},
			},
			status: []string{StatusPositive},
			check: func(t *testing.T, txs []Transaction, _ TraceCounters) {
				tx := txs[0]
				if tx.SubFunction == nil || *tx.SubFunction != 3 || tx.SubFunctionName != "extendedDiagnosticSession" || tx.Session == nil || *tx.Session != 3 {
					t.Errorf("transaction %+v", tx)
				}
			},
		},
		{
			name: "tester present with suppress bit gets no answer, as asked",
			steps: []step{
				{0, 0x7E0, "023E80"},
				{2000, 0x7E0, "023E80"},
				{9000, 0x7E0, "023E00"},
				{9001, 0x7E8, "027E00"},
			},
			status: []string{StatusSuppressed, StatusSuppressed, StatusPositive},
			check: func(t *testing.T, txs []Transaction, _ TraceCounters) {
				if !txs[0].SuppressPositive || txs[0].ResponseMs != nil || txs[0].ResponseReason == "" {
					t.Errorf("transaction %+v", txs[0])
				}
			},
		},
		{
			name: "no answer within P2*",
			steps: []step{
				{0, 0x7E0, "0319020F"},
				{6000, 0x7E0, "023E00"},
				{6001, 0x7E8, "027E00"},
			},
			status: []string{StatusNoResponse, StatusPositive},
		},
		{
			name: "a new request ends the unanswered one",
			steps: []step{
				{0, 0x7E0, "0322F190"},
				{100, 0x7E0, "0322F18C"},
				{110, 0x7E8, "0762F18C41424344"},
			},
			status: []string{StatusNoResponse, StatusPositive},
			check: func(t *testing.T, txs []Transaction, _ TraceCounters) {
				if !strings.Contains(txs[0].ResponseReason, "new request") || txs[1].Text != "ABCD" {
					t.Errorf("transactions %+v", txs)
				}
			},
		},
		{
			name: "functional request answered by two ECUs",
			steps: []step{
				{0, 0x7DF, "020100"},
				{5, 0x7E8, "06410098180001"},
				{7, 0x7E9, "06410080000001"},
			},
			status: []string{StatusPositive},
			check: func(t *testing.T, txs []Transaction, _ TraceCounters) {
				tx := txs[0]
				if !tx.Request.Functional || len(tx.Responses) != 2 || *tx.ResponseMs != 5 || tx.Service != "ShowCurrentData" || tx.DID != "0x00" {
					t.Errorf("transaction %+v", tx)
				}
			},
		},
		{
			name: "answer without its request, on an id later paired",
			steps: []step{
				{0, 0x7E8, "0762F18C41424344"},
				{100, 0x7E0, "023E00"},
				{101, 0x7E8, "027E00"},
			},
			status: []string{StatusUnmatched, StatusPositive},
			check: func(t *testing.T, txs []Transaction, c TraceCounters) {
				if txs[0].Request != nil || txs[0].SID != 0x22 || c.Unmatched != 1 || c.Requests != 1 {
					t.Errorf("transaction %+v, counters %+v", txs[0], c)
				}
			},
		},
		{
			name: "still waiting when the window ends",
			steps: []step{
				{0, 0x7E0, "023E00"},
				{1, 0x7E8, "027E00"},
				{2, 0x7E0, "0322F190"},
			},
			flush:  100,
			status: []string{StatusPositive, StatusOpen},
		},
		{
			name: "normal fixed: an answer from another ECU does not pair",
			steps: []step{
				{0, ext(0x18DA00F9), "0322F190"},
				{5, ext(0x18DAF917), "037F2231"}, // SA 0x17 answers a request to 0x00
				{9000, ext(0x18DA00F9), "023E00"},
				{9001, ext(0x18DAF900), "027E00"},
			},
			flush:  9001,
			status: []string{StatusNoResponse, StatusPositive},
			check: func(t *testing.T, txs []Transaction, c TraceCounters) {
				// 0x17's answer paired with nothing, so its id was never
				// shown to be diagnostic.
				if c.Rejected != 1 || c.Unmatched != 0 {
					t.Errorf("counters %+v: want 0x17's answer rejected, not reported", c)
				}
			},
		},
		{
			name: "held until the channel is paired, reported in order",
			steps: []step{
				{0, 0x7E0, "023E80"},
				{2000, 0x7E0, "023E80"},
				{4000, 0x7E0, "0319020F"},
				{4500, 0x7E0, "021003"},
				{4510, 0x7E8, "065003003201F4"},
			},
			status: []string{StatusSuppressed, StatusSuppressed, StatusNoResponse, StatusPositive},
			check: func(t *testing.T, txs []Transaction, c TraceCounters) {
				if c.Requests != 4 || c.Suppressed != 2 || c.NoResponse != 1 || c.Rejected != 0 {
					t.Errorf("counters %+v", c)
				}
			},
		},
		{
			name: "unpaired is not final: an answered exchange makes the channel diagnostic",
			steps: func() []step {
				var s []step
				for i := range maxUnpaired + 2 {
					s = append(s, step{i * 100, 0x7E0, "0319020F"})
				}
				return append(s, step{(maxUnpaired+1)*100 + 5, 0x7E8, "03590200"})
			}(),
			status: []string{StatusPositive},
			check: func(t *testing.T, txs []Transaction, c TraceCounters) {
				if c.Rejected != maxUnpaired+1 || c.Requests != 1 {
					t.Errorf("counters %+v: want the %d unanswered requests dropped", c, maxUnpaired+1)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flush := tc.flush
			if flush == 0 {
				flush = tc.steps[len(tc.steps)-1].ms
			}
			txs, c := trace(t, tc.steps, flush)
			var status []string
			for _, tx := range txs {
				status = append(status, tx.Status)
			}
			if strings.Join(status, ",") != strings.Join(tc.status, ",") {
				t.Fatalf("statuses %v, want %v (%+v)", status, tc.status, txs)
			}
			if tc.check != nil {
				tc.check(t, txs, c)
			}
		})
	}
}

func TestReferenceTables(t *testing.T) {
	seen := map[uint8]bool{}
	for _, s := range Services() {
		if seen[s.SID] || s.Name == "" || s.Standard == "" || s.Response != s.SID+0x40 {
			t.Errorf("service row %+v (duplicate %v)", s, seen[s.SID])
		}
		seen[s.SID] = true
		if got := ServiceName(s.SID); got != s.Name {
			t.Errorf("ServiceName(%#x) = %q, table says %q", s.SID, got, s.Name)
		}
	}
	if ServiceName(0x7F) != "" || SubFunctionName(0x27, 0x05) != "requestSeed (level 5)" || SubFunctionName(0x10, 0x83) != "extendedDiagnosticSession" {
		t.Error("edge names wrong")
	}
	if n := NRCs(); len(n) == 0 || n[0].Code != 0x10 || n[0].Name != NRCName(0x10) {
		t.Errorf("NRCs %v", n[:1])
	}
	if d := DIDs(); len(d) == 0 || d[0].DID != 0xF180 {
		t.Errorf("DIDs %v", d[:1])
	}
}

// TestFunctionalThenPhysical: an OBD scan tool leaves its functional
// request (0x7DF) open for more ECUs while it asks one ECU physically
// (0x7E0) for the same service; the ECU's answer belongs to the physical
// request. An answer on a 29-bit id does not answer an 11-bit request.
func TestFunctionalThenPhysical(t *testing.T) {
	txs, c := trace(t, []step{
		{0, 0x7DF, "02010C"},
		{5, 0x7E8, "04410C1AF8"},
		{100, 0x7E0, "02010D"},
		{105, 0x7E8, "03410D32"},
		{200, 0x18DA10F1 | 1<<31, "02010D"},
		{205, 0x18DAF110 | 1<<31, "03410D32"},
	}, 10_000)
	if len(txs) != 3 || c.Positive != 3 || c.Rejected != 0 {
		t.Fatalf("%d transactions, counters %+v", len(txs), c)
	}
	for _, tx := range txs {
		if len(tx.Responses) != 1 || tx.Request.Data[2:4] != tx.Responses[0].Data[2:4] {
			t.Errorf("request %s on %s answered by %+v", tx.Request.Data, tx.Request.CANID, tx.Responses)
		}
	}
}
