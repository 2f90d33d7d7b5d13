package canbus

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// BenchmarkAddAll is the consumer's case: batches of a J1939 bus's
// frames (70 ids, 8 bytes, 2 000 a second) into a port whose ring is full.
func BenchmarkAddAll(b *testing.B) {
	s, _ := New(Limits{Items: 10_000})
	p, _ := s.Port("can0", 0)
	recs := make([]Record, 256)
	at := time.Unix(1_700_000_000, 0).UTC()
	fill := func() {
		for i := range recs {
			at = at.Add(500 * time.Microsecond)
			r := &recs[i]
			r.Time, r.ID, r.Len = at, uint32(0x18FE0000+i%70)|wire.CANEFF, 8
			r.Data[i%8]++
		}
	}
	for range 100 {
		fill()
		p.AddAll(recs)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		fill()
		b.StartTimer()
		p.AddAll(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/frame")
}
