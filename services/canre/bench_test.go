package canre

import (
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// BenchmarkHelpers is each helper over ETC1 of j1939atk_normal.log
// (3 000 frames).
func BenchmarkHelpers(b *testing.B) {
	p, _ := canbustest.Load(b, refdata.File(b, "can", "j1939atk_normal.log"), "can0")
	s, err := Frames(p.Frames(), 0x0CF00203|wire.CANEFF, Window{})
	if err != nil {
		b.Fatal(err)
	}
	ref, err := ReferenceFromSPN(p.Frames(), Window{}, 84, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range []struct {
		name string
		run  func()
	}{
		{name: "counters", run: func() { FindCounters(s) }},
		{name: "checksums", run: func() { FindChecksums(s) }},
		{name: "entropy", run: func() { EntropyOf(s) }},
		{name: "signals", run: func() { FindSignals(s) }},
		{name: "correlate_default_fields", run: func() { Correlate(s, nil, ref) }},
	} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.run()
			}
		})
	}
}
