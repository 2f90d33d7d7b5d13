package isotp

import (
	"testing"

	"fieldtap/services/canbus"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// benchRecords loads a reference log's frames.
func benchRecords(b *testing.B, file string) []canbus.Record {
	p, _ := canbustest.Load(b, refdata.File(b, "can", file), "can0")
	var recs []canbus.Record
	p.Frames().Range(0, func(_ uint64, r canbus.Record) bool { recs = append(recs, r); return true })
	return recs
}

// benchFeed times feed giving a reference log's frames to a new store,
// per frame.
func benchFeed(b *testing.B, file string, feed func(*Store, []canbus.Record)) {
	recs := benchRecords(b, file)
	s, _ := New(Limits{})
	b.ReportAllocs()
	frames := 0
	for b.Loop() {
		feed(s, recs)
		frames += len(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

// BenchmarkStoreFeed is what the live UDS store costs per frame in
// feedCAN: on a J1939 bus with no diagnostics (every frame only
// classified) and on the Leaf's bus with its ISO-TP exchanges.
func BenchmarkStoreFeed(b *testing.B) {
	for _, file := range []string{"j1939atk_normal.log", "css_uds_nissan_leaf_2F6913DB.log"} {
		b.Run(file, func(b *testing.B) {
			benchFeed(b, file, func(s *Store, recs []canbus.Record) {
				for i := range recs {
					s.Feed("can0", recs[i].Time, recs[i].ID, recs[i].Payload())
				}
			})
		})
	}
}

// BenchmarkTraceFrames is one uds_trace over the Leaf's whole log.
func BenchmarkTraceFrames(b *testing.B) {
	p, _ := canbustest.Load(b, refdata.File(b, "can", "css_uds_nissan_leaf_2F6913DB.log"), "can0")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TraceFrames("can0", p.Frames(), Window{}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreFeedAll is BenchmarkStoreFeed as feedCAN feeds the
// store: batches of 256.
func BenchmarkStoreFeedAll(b *testing.B) {
	for _, file := range []string{"j1939atk_normal.log", "css_uds_nissan_leaf_2F6913DB.log"} {
		b.Run(file, func(b *testing.B) {
			benchFeed(b, file, func(s *Store, recs []canbus.Record) {
				for i := 0; i < len(recs); i += 256 {
					s.FeedAll("can0", recs[i:min(i+256, len(recs))])
				}
			})
		})
	}
}
