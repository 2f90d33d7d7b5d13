package j1939

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
	"fieldtap/tools/refdata"
)

func readLines(t testing.TB, name string) [][]byte {
	// The CAN folder counts as present when its GROUND_TRUTH.json is.
	dir := filepath.Dir(refdata.File(t, "can", "GROUND_TRUTH.json"))
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// logRecords is a reference log's frames as the daemon's consumer hands
// them to a Feeder.
func logRecords(t testing.TB, name string) []canbus.Record {
	var recs []canbus.Record
	for _, l := range readLines(t, name) {
		var r wire.CandumpRecord
		if wire.DecodeCandump(l, &r) == nil {
			c := canbus.Record{Time: r.Time, ID: r.ID}
			c.Len = uint8(copy(c.Data[:], r.Payload()))
			recs = append(recs, c)
		}
	}
	return recs
}

func feedStore(t testing.TB, s *Store, lines [][]byte) {
	var r wire.CandumpRecord
	for _, l := range lines {
		if wire.DecodeCandump(l, &r) != nil {
			continue
		}
		s.Feed(string(r.Interface), r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
	}
}

func TestStoreOnKenworth(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	feedStore(t, s, readLines(t, "cytr_candump_on_a_Kenworth.log"))
	sum := s.Summary()
	if len(sum) != 1 || sum[0].Frames != 103 || len(sum[0].SourceAddresses) != 5 || sum[0].Requests != 2 || sum[0].TP.BAM != 1 {
		t.Fatalf("summary = %+v", sum)
	}
	var f49 *Fault
	faults := s.Faults()
	for i := range faults {
		if faults[i].SA == 49 {
			f49 = &faults[i]
		}
	}
	if f49 == nil || len(f49.DTCs) != 1 || f49.DTCs[0] != (DTC{SPN: 168, FMI: 17, OC: 126}) || f49.Lamps.MIL != LampNotAvailable || f49.Lamps.AmberWarn != LampOff {
		t.Errorf("SA49 fault = %+v", f49)
	}
	inv := s.Inventory()
	var claimed int
	for _, r := range inv {
		if r.Name != nil {
			claimed++
			if r.SA != 0 || r.Name.IdentityNumber != 590594 || r.Name.ManufacturerCode != 13 {
				t.Errorf("claim = %+v", r.Name)
			}
		}
	}
	if claimed != 1 {
		t.Errorf("claimed ECUs = %d, want 1", claimed)
	}
	if open := s.OpenSessions(); len(open) != 1 || open[0].PGN != 65251 {
		t.Errorf("open sessions = %+v (the snippet ends inside a BAM)", open)
	}
	req := s.Requests()
	if len(req) != 1 || req[0].Total != 2 || len(req[0].Requested) != 2 {
		t.Errorf("requests = %+v", req)
	}
}

func TestStoreVINAndSPNs(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	feedStore(t, s, readLines(t, "cytr_KWTruck.txt"))
	vin := s.LatestPGN(PGNVIN)
	if len(vin) != 1 || string(vin[0].Raw) != "2NKHHM6X2EM406412*" || vin[0].Via != "tp-BAM" {
		t.Errorf("VIN = %+v", vin)
	}
	eec1 := s.LatestPGN(PGNEEC1)
	if len(eec1) == 0 || len(eec1[0].Values) == 0 {
		t.Fatalf("EEC1 = %+v", eec1)
	}
	if s.Samples().Len() == 0 {
		t.Error("no SPN samples")
	}
}

// BenchmarkLogToJ1939 is candump text to decoded J1939 messages on one
// core: line parsing, id split, TP reassembly, the message callback.
func BenchmarkLogToJ1939(b *testing.B) {
	lines := readLines(b, "j1939atk_normal.log")
	d := NewDecoder()
	var n int
	d.OnMessage = func(m *Message) { n += len(m.Data) }
	var r wire.CandumpRecord
	b.ReportAllocs()
	b.ResetTimer()
	frames := 0
	for b.Loop() {
		for _, l := range lines {
			if wire.DecodeCandump(l, &r) != nil {
				continue
			}
			d.Feed(r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
			frames++
		}
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkStoreFeed is the analyser cost per frame (store, tables, SPN
// series), the basis of the saturated-bus CPU estimate.
func BenchmarkStoreFeed(b *testing.B) {
	lines := readLines(b, "j1939atk_normal.log")
	var recs []wire.CandumpRecord
	for _, l := range lines {
		var r wire.CandumpRecord
		if wire.DecodeCandump(l, &r) == nil {
			r.Interface = []byte("can0")
			recs = append(recs, r)
		}
	}
	s, err := New(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	frames := 0
	for b.Loop() {
		for i := range recs {
			r := &recs[i]
			s.Feed("can0", r.Time, r.ID&wire.CANEFFMask, true, r.Payload())
			frames++
		}
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkFeedAll is the consumer's case: the log's frames in batches
// of 256 through a port's Feeder.
func BenchmarkFeedAll(b *testing.B) {
	recs := logRecords(b, "j1939atk_normal.log")
	s, err := New(Limits{})
	if err != nil {
		b.Fatal(err)
	}
	f, _ := s.Feeder("can0")
	b.ReportAllocs()
	frames := 0
	for b.Loop() {
		for i := 0; i < len(recs); i += 256 {
			f.FeedAll(recs[i:min(i+256, len(recs))])
		}
		frames += len(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

// TestSeenPGNsListsEveryPortsPGNsWithinTheBound: SeenPGNs is the union
// of every port's PGN table, ascending, and a port past MaxPGNs adds no
// more.
func TestSeenPGNsListsEveryPortsPGNsWithinTheBound(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1, 0)
	feed := func(port string, pgn uint32) {
		if err := s.Feed(port, at, 0x18000000|pgn<<8|0x21, true, []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
			t.Fatal(err)
		}
	}
	feed("can0", 65262)
	feed("can0", 61444)
	feed("can1", 65262)
	feed("can1", 65226)
	if got, want := s.SeenPGNs(), []uint32{61444, 65226, 65262}; !slices.Equal(got, want) {
		t.Fatalf("SeenPGNs %v, want %v", got, want)
	}
	for i := range MaxPGNs + 5 {
		feed("can2", 0xF000+uint32(i))
	}
	if got := len(s.SeenPGNs()); got != MaxPGNs+2 { // can2's table is full; 65226 and 65262 come from the others
		t.Errorf("SeenPGNs holds %d PGNs, want %d", got, MaxPGNs+2)
	}
}

func TestFeedAllIsFeedEach(t *testing.T) {
	var recs []canbus.Record
	var r wire.CandumpRecord
	for _, l := range readLines(t, "cytr_candump_on_a_Kenworth.log") {
		if wire.DecodeCandump(l, &r) == nil {
			recs = append(recs, canbus.Record{Time: r.Time, ID: r.ID, Len: r.Len, Data: [8]byte(r.Data[:8])})
		}
	}
	// A remote and an error frame: FeedAll skips them as the daemon did.
	recs = append(recs, canbus.Record{Time: r.Time, ID: 0x18EA0000 | wire.CANEFF | wire.CANRTR}, canbus.Record{Time: r.Time, ID: wire.CANERR | 4, Len: 8})
	each, _ := New(Limits{})
	all, _ := New(Limits{})
	fe, _ := each.Feeder("can0")
	fa, _ := all.Feeder("can0")
	for i := range recs {
		if id := recs[i].ID; id&(wire.CANRTR|wire.CANERR) == 0 {
			fe.Feed(recs[i].Time, id&wire.CANEFFMask, id&wire.CANEFF != 0, recs[i].Payload())
		}
	}
	for i := 0; i < len(recs); i += 7 {
		fa.FeedAll(recs[i:min(i+7, len(recs))])
	}
	if e, a := each.Summary(), all.Summary(); !reflect.DeepEqual(e, a) {
		t.Errorf("summary: Feed %+v, FeedAll %+v", e, a)
	}
	if e, a := each.Faults(), all.Faults(); !reflect.DeepEqual(e, a) {
		t.Errorf("faults: Feed %+v, FeedAll %+v", e, a)
	}
	if e, a := each.SampleStats(), all.SampleStats(); e != a {
		t.Errorf("samples: Feed %+v, FeedAll %+v", e, a)
	}
}

// TestFeedAllSamplesAsFeed: samples gathered over a batch reach the ring
// as one frame at a time puts them there, evictions included.
func TestFeedAllSamplesAsFeed(t *testing.T) {
	recs := logRecords(t, "j1939atk_normal.log")
	l := Limits{Samples: ring.Limits{Items: 3000}}
	one, _ := New(l)
	all, _ := New(l)
	for _, r := range recs {
		one.Feed("can0", r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
	}
	f, _ := all.Feeder("can0")
	for i := 0; i < len(recs); i += 2000 { // over pendingSamples a batch
		f.FeedAll(recs[i:min(i+2000, len(recs))])
	}
	if o, a := one.SampleStats(), all.SampleStats(); o != a || o.Evicted == 0 {
		t.Fatalf("sample ring: Feed %+v, FeedAll %+v (want evictions)", o, a)
	}
	so, sa := one.Samples(), all.Samples()
	so.Range(0, func(seq uint64, v Sample) bool {
		if w, _ := sa.Get(seq); w != v {
			t.Fatalf("sample %d: Feed %+v, FeedAll %+v", seq, v, w)
		}
		return true
	})
}
