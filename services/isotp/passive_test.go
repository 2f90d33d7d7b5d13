package isotp

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one frame of a scripted exchange: ms after t0, id, hex data.
type step struct {
	ms   int
	id   uint32
	data string
}

func ext(id uint32) uint32 { return id | wire.CANEFF }

type observed struct {
	pdus       []PDU
	incomplete []Incomplete
	counters   Counters
	rejections []Rejection
}

func observe(t *testing.T, o Options, steps []step, flushMs int) observed {
	t.Helper()
	ob, err := NewObserver(o)
	if err != nil {
		t.Fatal(err)
	}
	var got observed
	ob.OnPDU = func(p *PDU) {
		c := *p
		c.Data = bytes.Clone(p.Data)
		got.pdus = append(got.pdus, c)
	}
	ob.OnIncomplete = func(in Incomplete) { got.incomplete = append(got.incomplete, in) }
	for i, s := range steps {
		b, err := hex.DecodeString(strings.ReplaceAll(s.data, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		ob.Feed(uint64(i), t0.Add(time.Duration(s.ms)*time.Millisecond), s.id, b)
	}
	ob.Flush(t0.Add(time.Duration(flushMs) * time.Millisecond))
	got.counters = ob.Counters()
	got.rejections = ob.Rejections()
	return got
}

func TestObserver(t *testing.T) {
	vin := "62F190" + hex.EncodeToString([]byte("1FUJGLDR8TF000042"))
	tests := []struct {
		name    string
		opts    Options
		steps   []step
		flush   int
		pdus    []string // hex payloads, in order
		reasons []Reason
		check   func(t *testing.T, got observed)
	}{
		{
			name: "single frames both ways",
			steps: []step{
				{0, 0x7E0, "0322F190AAAAAAAA"},
				{5, 0x7E8, "037F2278AAAAAAAA"},
			},
			pdus: []string{"22F190", "7F2278"},
		},
		{
			name: "multi-frame answer after flow control",
			steps: []step{
				{0, 0x7E0, "0322F190AAAAAAAA"},
				{10, 0x7E8, "1014" + vin[:12]},
				{11, 0x7E0, "300000AAAAAAAAAA"},
				{12, 0x7E8, "21" + vin[12:26]},
				{13, 0x7E8, "22" + vin[26:40]},
			},
			pdus: []string{"22F190", strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				if p := got.pdus[1]; p.Frames != 3 || p.FirstSeq != 1 || p.LastSeq != 4 || p.Notes != (Notes{}) {
					t.Errorf("answer PDU %+v", p)
				}
			},
		},
		{
			name: "block size and STmin honoured, then broken",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E0, "30010A"}, // one frame per block, 10 ms apart
				{2, 0x7E8, "21" + vin[12:26]},
				{3, 0x7E8, "22" + vin[26:40]}, // beyond the block: no new flow control yet
			},
			pdus: []string{strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				if n := got.pdus[0].Notes; n.BlockExceeded != 1 || n.BeforeFlowControl != 0 {
					t.Errorf("notes %+v, want one frame beyond the block", n)
				}
			},
		},
		{
			name: "consecutive frames before any flow control",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E8, "21" + vin[12:26]},
				{2, 0x7E8, "22" + vin[26:40]},
			},
			pdus: []string{strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				if n := got.counters.Notes; n.BeforeFlowControl != 2 {
					t.Errorf("notes %+v, want 2 frames before flow control", n)
				}
				if got.counters.UnmatchedFC != 0 {
					t.Errorf("unmatched flow control %d", got.counters.UnmatchedFC)
				}
			},
		},
		{
			name: "STmin violation counted",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E0, "300014"}, // 20 ms between frames
				{22, 0x7E8, "21" + vin[12:26]},
				{25, 0x7E8, "22" + vin[26:40]},
			},
			pdus: []string{strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				if got.pdus[0].Notes.STmin != 1 {
					t.Errorf("notes %+v, want one STmin violation", got.pdus[0].Notes)
				}
			},
		},
		{
			name: "out of order consecutive frame ends the transfer",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E0, "300000"},
				{2, 0x7E8, "22" + vin[26:40]},
				{3, 0x7E8, "21" + vin[12:26]}, // orphan now
			},
			reasons: []Reason{ReasonSequence},
			check: func(t *testing.T, got observed) {
				in := got.incomplete[0]
				if in.Expected != 1 || in.Got != 2 || in.Announced != 20 || in.Received != 6 {
					t.Errorf("incomplete %+v", in)
				}
				if got.counters.OrphanCF != 1 {
					t.Errorf("orphan CFs %d, want 1", got.counters.OrphanCF)
				}
			},
		},
		{
			name: "receiver overflow aborts",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E0, "320000"},
			},
			reasons: []Reason{ReasonOverflow},
		},
		{
			name: "wait keeps the sender waiting, then no flow control comes",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{500, 0x7E0, "310000"},
				{3000, 0x7E0, "0322F190"}, // a sweep after N_Bs + grace
			},
			pdus:    []string{"22F190"},
			reasons: []Reason{ReasonFCTimeout},
			check: func(t *testing.T, got observed) {
				if want := t0.Add(500*time.Millisecond + TimeoutNBs + observerGrace); !got.incomplete[0].End.Equal(want) {
					t.Errorf("timed out at %v, want %v", got.incomplete[0].End, want)
				}
			},
		},
		{
			name: "consecutive frames stop",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E0, "300000"},
				{2, 0x7E8, "21" + vin[12:26]},
				{4000, 0x7E0, "023E00"},
			},
			pdus:    []string{"3E00"},
			reasons: []Reason{ReasonCFTimeout},
		},
		{
			name: "new first frame supersedes",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
				{1, 0x7E8, "037F2278"},
			},
			pdus:    []string{"7F2278"},
			reasons: []Reason{ReasonSuperseded},
		},
		{
			name: "open when the window ends",
			steps: []step{
				{0, 0x7E8, "1014" + vin[:12]},
			},
			flush:   10,
			reasons: []Reason{ReasonOpenAtEnd},
		},
		{
			name: "normal fixed addressing pairs flow control by address",
			steps: []step{
				{0, ext(0x18DA00F9), "0322F190"},
				{5, ext(0x18DAF900), "1014" + vin[:12]},
				{6, ext(0x18DA00F9), "300000"},
				{7, ext(0x18DAF900), "21" + vin[12:26]},
				{8, ext(0x18DAF900), "22" + vin[26:40]},
			},
			pdus: []string{"22F190", strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				c := got.pdus[1].Channel
				if c.Addressing != AddrNormalFixed || c.Source != 0x00 || c.Target != 0xF9 || c.Functional {
					t.Errorf("channel %+v", c)
				}
				if got.pdus[1].Notes != (Notes{}) {
					t.Errorf("notes %+v", got.pdus[1].Notes)
				}
			},
		},
		{
			name: "extended addressing reads the target byte first",
			opts: Options{IDs: []uint32{0x6F1, 0x612}, Extended: []uint32{0x6F1, 0x612}},
			steps: []step{
				{0, 0x6F1, "120322F190"},
				{5, 0x612, "F11014" + vin[:10]},
				{6, 0x6F1, "12300000"},
				{7, 0x612, "F121" + vin[10:22]},
				{8, 0x612, "F122" + vin[22:34]},
				{9, 0x612, "F123" + vin[34:40]},
			},
			pdus: []string{"22F190", strings.ToUpper(vin)},
			check: func(t *testing.T, got observed) {
				if c := got.pdus[1].Channel; c.Addressing != AddrExtended || c.Target != 0xF1 {
					t.Errorf("channel %+v", c)
				}
			},
		},
		{
			name: "ids outside the selection are not read",
			steps: []step{
				{0, 0x123, "0322F190"},
				{1, ext(0x18FEF100), "0322F190"},
			},
			check: func(t *testing.T, got observed) {
				if got.counters.Frames != 0 {
					t.Errorf("read %d frames", got.counters.Frames)
				}
			},
		},
		{
			name:  "not ISO-TP in the diagnostic range is counted, and its channel no longer read",
			steps: []step{{0, 0x7E8, "08FFFFFF"}, {1, 0x7E8, "40"}, {2, 0x7E8, ""}, {3, 0x7E8, "023E00"}, {4, 0x7E9, "40"}},
			check: func(t *testing.T, got observed) {
				if c := got.counters; c.BadPCI != 2 || c.RejectedFrames != 3 || c.Frames != 5 || c.Single != 0 {
					t.Errorf("counters %+v: want 2 bad PCI (7E8, 7E9), 3 frames of rejected 7E8 unread", c)
				}
				if rs := got.rejections; len(rs) != 2 || rs[0].Channel.ID != 0x7E8 || rs[0].Reason != RejectNotISOTP || rs[0].Frames != 4 ||
					!rs[0].Since.Equal(t0) || rs[1].Channel.ID != 0x7E9 {
					t.Errorf("rejections %+v", rs)
				}
			},
		},
		{
			name:  "flow control with nobody waiting",
			steps: []step{{0, 0x7E0, "300000"}},
			check: func(t *testing.T, got observed) {
				if got.counters.UnmatchedFC != 1 {
					t.Errorf("unmatched FC %d, want 1", got.counters.UnmatchedFC)
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
			got := observe(t, tc.opts, tc.steps, flush)
			var pdus []string
			for _, p := range got.pdus {
				pdus = append(pdus, strings.ToUpper(hex.EncodeToString(p.Data)))
			}
			if strings.Join(pdus, ",") != strings.Join(tc.pdus, ",") {
				t.Errorf("PDUs %v, want %v", pdus, tc.pdus)
			}
			var reasons []Reason
			for _, in := range got.incomplete {
				reasons = append(reasons, in.Reason)
			}
			if len(reasons) != len(tc.reasons) || (len(reasons) > 0 && reasons[0] != tc.reasons[0]) {
				t.Fatalf("incomplete %v, want %v", reasons, tc.reasons)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{name: "too many channels", o: Options{MaxChannels: MaxChannels + 1}},
		{name: "11-bit id out of range", o: Options{IDs: []uint32{0x800}}},
		{name: "remote flag", o: Options{IDs: []uint32{0x7E0 | wire.CANRTR}}},
		{name: "extended not selected", o: Options{IDs: []uint32{0x7E0}, Extended: []uint32{0x7E8}}},
		{name: "too many ids", o: Options{IDs: make([]uint32, MaxSelected+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewObserver(tc.o); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestChannelsBounded(t *testing.T) {
	got := observe(t, Options{MaxChannels: 2}, []step{
		{0, 0x700, "023E00"}, {1, 0x701, "023E00"}, {2, 0x702, "023E00"}, {3, 0x703, "023E00"},
	}, 3)
	if len(got.pdus) != 2 || got.counters.ChannelOverflow != 2 {
		t.Errorf("%d PDUs, overflow %d: want 2 and 2", len(got.pdus), got.counters.ChannelOverflow)
	}
}

// FuzzObserver feeds arbitrary frames on a few ids through the tracer and
// checks that what comes out is consistent with what went in.
func FuzzObserver(f *testing.F) {
	f.Add([]byte{0x10, 0x14, 0x62, 0xF1, 0x90, 0x31, 0x46, 0x55, 0xFF, 0x30, 0x00, 0x00, 0xFF, 0x21, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0x03, 0x22, 0xF1, 0x90, 0xFE, 0x03, 0x7F, 0x22, 0x78, 0xFE, 0x03, 0x62, 0xF1, 0x90})
	// A broadcast-like run: every id's first byte reads as a single frame,
	// the second as a request or an answer (issue #33's 0x7BC).
	f.Add([]byte{0x07, 0x14, 0, 0x3C, 0xFF, 0x07, 0x54, 0, 0x3C, 0xFF, 0x07, 0x14, 0xFF, 0x07, 0x21, 0xFF, 0x07, 0x14, 0, 0x3C, 0xFF, 0x07, 0x54})
	// A request answered, then the tester's id sends a frame no ISO-TP
	// sender writes, then requests again.
	f.Add([]byte{0x02, 0x3E, 0x00, 0xFF, 0x02, 0x7E, 0x00, 0xFF, 0xFF, 0xFF, 0x45, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x3E, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := NewTracer(Options{IDs: []uint32{0x7E0, 0x7E8, ext(0x18DA00F9), 0x6F1}, Extended: []uint32{0x6F1}})
		if err != nil {
			t.Fatal(err)
		}
		var released []Transaction
		tr.OnTransaction = func(tx *Transaction) {
			if len(tx.Responses) > MaxResponses || (tx.Request == nil) != (tx.Status == StatusUnmatched) {
				t.Fatalf("transaction %+v", tx)
			}
			// A tester and its ECU are never one channel.
			for _, a := range tx.Responses {
				if tx.Request != nil && a.CANID == tx.Request.CANID && eqAddr(a.Target, tx.Request.Target) {
					t.Fatalf("an answer on the request's own channel: %+v", tx)
				}
			}
			released = append(released, *tx)
		}
		tr.Observer().OnPDU = func(p *PDU) {
			if len(p.Data) > MaxPayload {
				t.Fatalf("PDU of %d bytes", len(p.Data))
			}
			tr.pdu(p)
		}
		ids := []uint32{0x7E0, 0x7E8, ext(0x18DA00F9), 0x6F1}
		// 0xFF ends a frame (the next goes on the next id, 10 ms later);
		// 0xFE also lets 2 s pass, past every timeout.
		at, which, seq, start := t0, 0, uint64(0), 0
		for i, c := range b {
			if c != 0xFF && c != 0xFE && i < len(b)-1 {
				continue
			}
			end := i
			if c != 0xFF && c != 0xFE {
				end = len(b)
			}
			tr.Feed(seq, at, ids[which%len(ids)], b[start:min(end, start+8)])
			which, seq, start = which+1, seq+1, i+1
			at = at.Add(10 * time.Millisecond)
			if c == 0xFE {
				at = at.Add(2 * time.Second)
			}
		}
		tr.Flush(at)
		if n := tr.Outstanding(); n != 0 {
			t.Fatalf("%d requests outstanding after Flush", n)
		}
		if n := tr.Held(); n != 0 {
			t.Fatalf("%d transactions held after Flush", n)
		}
		requests := 0
		for _, tx := range released {
			requests += b2i(tx.Request != nil)
		}
		if c := tr.Counters(); c.Requests != uint64(requests) {
			t.Fatalf("counted %d requests, released %d", c.Requests, requests)
		}
		// An unpaired channel never reported a transaction: it was never
		// diagnostic.
		for _, r := range tr.Rejections() {
			for _, tx := range released {
				m := tx.Request
				if m == nil {
					m = &tx.Responses[0].Message
				}
				if r.Reason == RejectUnpaired && m.CANID == wire.FormatCANID(r.Channel.ID) && (r.Channel.Addressing != AddrExtended || eqAddr(m.Target, ptr(int(r.Channel.Target)))) {
					t.Fatalf("unpaired channel %+v reported %+v", r, tx)
				}
			}
		}
	})
}

func eqAddr(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func ptr(v int) *int { return &v }

// TestIgnoresOnlyWhatAddressingRefuses: the feeder's quick test refuses
// exactly what addressing refuses when no option selects ids, and nothing
// when one does.
func TestIgnoresOnlyWhatAddressingRefuses(t *testing.T) {
	var ids []uint32
	for id := uint32(0); id <= wire.CANSFFMask; id++ {
		ids = append(ids, id)
	}
	for pf := uint32(0); pf <= 0xFF; pf++ {
		for _, rest := range []uint32{0x18000000, 0x0C00F100, 0x1C0033F9} {
			ids = append(ids, rest|pf<<16|wire.CANEFF)
		}
	}
	for _, o := range []Options{{}, {IDs: []uint32{0x7E0, 0x18DA00F1 | wire.CANEFF}}, {Extended: []uint32{0x6F1}}} {
		ob, err := NewObserver(o)
		if err != nil {
			t.Fatal(err)
		}
		selective := len(o.IDs) > 0 || len(o.Extended) > 0
		ignored := 0
		for _, id := range ids {
			_, ok := ob.addressing(id)
			switch ig := ob.ignores(id); {
			case ig && ok:
				t.Fatalf("options %+v: id %#x ignored, but addressing reads it", o, id)
			case !ig && !ok && !selective:
				t.Fatalf("options %+v: id %#x not ignored, but addressing refuses it", o, id)
			case ig:
				ignored++
			}
		}
		if selective != (ignored == 0) {
			t.Errorf("options %+v: %d of %d ids ignored", o, ignored, len(ids))
		}
	}
}
