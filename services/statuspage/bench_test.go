package statuspage

import (
	"io"
	"testing"
	"time"

	"fieldtap/services/ports"
)

// BenchmarkPage is one page view: Build over an hour of CAN load and a
// DM1, then the HTML with its chart.
func BenchmarkPage(b *testing.B) {
	cs, js := truck(b)
	src := Sources{Board: "sim", CAN: cs, J1939: js, Ports: fakePorts{st: []ports.Status{{Name: "can0", Kind: "can"}}}}
	now := t0.Add(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if err := Render(io.Discard, Build(src, now)); err != nil {
			b.Fatal(err)
		}
	}
}
