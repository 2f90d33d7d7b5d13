package daemon

import (
	"testing"

	"fieldtap/drivers/capture"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
)

// BenchmarkCoverageOf is what every tool answer that reads captured data
// adds to its call: reading the ports' and the stores' counters (a box
// with a SPAN, a CAN and a J1708 port) and building the coverage block.
func BenchmarkCoverageOf(b *testing.B) {
	srcs := []capture.Source{testSource{name: "span0", kind: capture.KindEthernet}, testSource{name: "can0", kind: capture.KindCAN}, testSource{name: "j1708", kind: capture.KindJ1708}}
	an := testAnalysers(b, rtp.Options{}, srcs...)
	var reg ports.Registry
	reg.SetBudget(an.budgetStatus)
	for _, s := range srcs {
		p, err := newPort(s, an, portOptions{depth: 64})
		if err != nil {
			b.Fatal(err)
		}
		reg.Add(p.status)
	}
	b.ReportAllocs()
	for b.Loop() {
		an.coverageOf(&reg, coverage.Query{Families: coverage.SIP})
	}
}
