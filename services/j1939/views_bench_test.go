package j1939

import (
	"testing"

	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// BenchmarkWindowViews is each window view over j1939atk_normal.log
// (19 957 frames, 30 s of a research truck).
func BenchmarkWindowViews(b *testing.B) {
	p, _ := canbustest.Load(b, refdata.File(b, "can", "j1939atk_normal.log"), "can0")
	snap := p.Frames()
	views := []struct {
		name string
		run  func()
	}{
		{name: "diagnostics", run: func() { DiagnosticsOf("can0", snap, Window{}, nil) }},
		{name: "topology", run: func() { TopologyOf("can0", snap, Window{}, nil) }},
		{name: "compare", run: func() { Compare(Side{Port: "a", Frames: snap}, Side{Port: "b", Frames: snap}) }},
		{name: "spn_history", run: func() { SPNHistory("can0", snap, HistoryQuery{SPN: 190, Buckets: 100}, nil) }},
	}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*snap.Len()), "ns/frame")
		})
	}
}
