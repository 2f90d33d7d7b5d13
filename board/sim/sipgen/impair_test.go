package sipgen

import (
	"math"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// analyse runs a generated capture through the SPAN analysers.
func analyse(t *testing.T, o Options) *rtp.Snapshot {
	t.Helper()
	media := rtp.NewAnalyser(rtp.Options{})
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sa := sip.NewAnalyser(st, netdecode.Options{})
	sa.SetMediaHook(media)
	if err := Generate(o, func(p Packet) error {
		sa.Feed(p.Time, wire.LinkEthernet, p.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return media.Snapshot(false)
}

// TestImpairedCalls: a generated call with known loss gives that loss
// (within sampling error) and a MOS that falls as loss rises.
func TestImpairedCalls(t *testing.T) {
	base := Options{Seed: 7, Start: time.Unix(1_700_000_000, 0), Duration: 2 * time.Minute, Calls: 4}
	tests := []struct {
		name   string
		impair Impairment
	}{
		{name: "clean"},
		{name: "1% loss", impair: Impairment{LossPct: 1, JitterMs: 5}},
		{name: "5% loss", impair: Impairment{LossPct: 5, JitterMs: 5}},
		{name: "15% loss", impair: Impairment{LossPct: 15, JitterMs: 5}},
	}
	prevMOS := 5.0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Impair = tc.impair
			sn := analyse(t, o)
			var lost, expected int64
			var mosSum float64
			var n int
			for _, s := range sn.Streams {
				lost += s.Lost
				expected += s.Expected
				if s.Value != nil {
					mosSum += *s.Value
					n++
				}
			}
			if expected == 0 || n == 0 {
				t.Fatalf("no media analysed: %+v", sn.Stats)
			}
			got := 100 * float64(lost) / float64(expected)
			// Binomial sampling error: 4 standard deviations, at least 0.5 points.
			tol := math.Max(4*100*math.Sqrt(tc.impair.LossPct/100*(1-tc.impair.LossPct/100)/float64(expected)), 0.5)
			if math.Abs(got-tc.impair.LossPct) > tol {
				t.Errorf("loss %.2f%%, want %.2f%% ± %.2f (%d of %d)", got, tc.impair.LossPct, tol, lost, expected)
			}
			mos := mosSum / float64(n)
			t.Logf("loss %.2f%% over %d packets, mean MOS %.2f", got, expected, mos)
			if mos >= prevMOS {
				t.Errorf("MOS %.2f does not fall below %.2f as loss rises", mos, prevMOS)
			}
			prevMOS = mos
		})
	}
}
