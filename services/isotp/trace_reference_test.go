package isotp

import (
	"testing"

	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// TestTraceNissanLeaf checks the trace against an independent count of
// css_uds_nissan_leaf_2F6913DB.log. The numbers below were computed once
// by testdata/uds_count.py (stdlib python3, written apart from this
// package: its own frame parser, reassembly and first-answer pairing):
//
//	python3 services/isotp/testdata/uds_count.py ../shared/testdata/can/css_uds_nissan_leaf_2F6913DB.log
//
// and agree with GROUND_TRUTH.json's ISO-TP section for the file (26 SF
// and 26 FC on 0x79B, 26 FF and 143 CF on 0x7BB, 26 complete PDUs each).
func TestTraceNissanLeaf(t *testing.T) {
	path := refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log")
	p, skipped := canbustest.Load(t, path, "can0")
	if skipped != 0 {
		t.Fatalf("%d lines not read", skipped)
	}
	tr, err := TraceFrames("can0", p.Frames(), Window{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		sf79B, fc79B = 26, 26 // frames_79B_SF, frames_79B_FC
		ff7BB, cf7BB = 26, 143
		pdus         = 52
		requests     = 26 // requests, answered, negative 0, no_response 0, unmatched 0
		pair2101     = 13 // pair_2101_7BB
		pair2104     = 13 // pair_2104_7BB
		len31, len53 = 13, 13
		minUs, maxUs = 1600, 15250 // response_us_min, response_us_max
		sumUs        = 192100      // response_us_sum
	)
	c := tr.Transport.Counters
	if c.Single != sf79B || c.FlowControl != fc79B || c.First != ff7BB || c.Consecutive != cf7BB || c.PDUs != pdus {
		t.Errorf("transport counters %+v: want SF %d FC %d FF %d CF %d PDUs %d", c, sf79B, fc79B, ff7BB, cf7BB, pdus)
	}
	for r, n := range c.Incomplete {
		if n != 0 {
			t.Errorf("%d transfers ended %s, want none", n, Reason(r))
		}
	}
	if c.OrphanCF != 0 || c.UnmatchedFC != 0 || c.BadPCI != 0 || c.Notes != (Notes{}) {
		t.Errorf("anomalies %+v, want none: the ECU waits for every flow control", c)
	}
	u := tr.UDS
	if u.Requests != requests || u.Positive != requests || u.Negative != 0 || u.NoResponse != 0 || u.Unmatched != 0 || u.Open != 0 {
		t.Errorf("UDS counters %+v: want %d requests, all positive", u, requests)
	}
	if len(tr.Transactions) != requests {
		t.Fatalf("%d transactions, want %d", len(tr.Transactions), requests)
	}
	pairs := map[string]int{}
	lengths := map[int]int{}
	var lo, hi, sum float64
	for i, tx := range tr.Transactions {
		if tx.Request == nil || len(tx.Responses) != 1 || tx.ResponseMs == nil {
			t.Fatalf("transaction %d = %+v", i, tx)
		}
		if tx.Service != "ReadDataByLocalIdentifier" || tx.Request.CANID != "79B" || tx.Responses[0].CANID != "7BB" {
			t.Errorf("transaction %d: service %q %s → %s", i, tx.Service, tx.Request.CANID, tx.Responses[0].CANID)
		}
		pairs[tx.DID]++
		lengths[tx.Responses[0].Length]++
		ms := *tx.ResponseMs
		if i == 0 || ms < lo {
			lo = ms
		}
		hi = max(hi, ms)
		sum += ms
	}
	if pairs["0x01"] != pair2101 || pairs["0x04"] != pair2104 {
		t.Errorf("local identifiers %v, want 01×%d 04×%d", pairs, pair2101, pair2104)
	}
	if lengths[31] != len31 || lengths[53] != len53 {
		t.Errorf("answer lengths %v, want 31×%d 53×%d", lengths, len31, len53)
	}
	if lo != minUs/1000.0 || hi != maxUs/1000.0 {
		t.Errorf("response times %.3f..%.3f ms, want %.3f..%.3f", lo, hi, minUs/1000.0, maxUs/1000.0)
	}
	// The sum of 26 values rounded to the microsecond, compared to the
	// microsecond.
	if d := sum*1000 - sumUs; d > 0.5 || d < -0.5 {
		t.Errorf("response times sum to %.3f ms, want %.3f", sum, sumUs/1000.0)
	}
	if len(tr.Services) != 1 || tr.Services[0].SID != 0x21 || tr.Services[0].Requests != requests || tr.Services[0].Positive != requests {
		t.Errorf("services = %+v", tr.Services)
	}
}

// TestTraceSkipsCarTraffic: the rest of the Leaf's bus (ids 0x001–0x010)
// is outside the diagnostic range and never read as ISO-TP.
func TestTraceSkipsCarTraffic(t *testing.T) {
	p, _ := canbustest.Load(t, refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log"), "can0")
	tr, err := TraceFrames("can0", p.Frames(), Window{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const diagFrames = 26 + 26 + 26 + 143
	if tr.Transport.Frames != diagFrames || tr.Frames <= diagFrames {
		t.Errorf("read %d of %d frames as ISO-TP, want %d", tr.Transport.Frames, tr.Frames, diagFrames)
	}
}

// TestNMEA2000IsNotISOTP: the NMEA 2000 log (../shared/testdata/can
// PROVENANCE trap 6) uses J1939 addressing and fast-packet transfers; no
// id is in the 11-bit diagnostic range and none has PF 0xDA/0xDB, so the
// listener reads nothing: no transfer, no channel, nothing rejected.
func TestNMEA2000IsNotISOTP(t *testing.T) {
	p, skipped := canbustest.Load(t, refdata.File(t, "can", "css_nmea2000_94C49784.log"), "can0")
	tr, err := TraceFrames("can0", p.Frames(), Window{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const frames = 9600 // GROUND_TRUTH.json
	if skipped != 0 || tr.Frames != frames || tr.Transport.Frames != 0 || tr.Transport.PDUs != 0 || len(tr.Transactions) != 0 || len(tr.Rejections) != 0 {
		t.Errorf("%d of %d frames read, %d PDUs, %d transactions, rejections %+v: want nothing read", tr.Transport.Frames, tr.Frames, tr.Transport.PDUs, len(tr.Transactions), tr.Rejections)
	}
}
