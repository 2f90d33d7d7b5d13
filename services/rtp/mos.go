package rtp

import (
	"math"
	"strings"
)

// Simplified ITU-T G.107 E-model (docs/media.md cites every value).
const (
	// r0MinusIs is R0 − Is with every G.107 §7.7 default: 93.2.
	r0MinusIs = 93.2
	// burstR 1 assumes random loss: a SPAN port cannot see the loss
	// process of the network segment before it.
	burstR = 1.0
	// idKnee and the two slopes are G.107's simplified Id for a delay
	// below the echo-free knee (Cole and Rosenbluth's fit, widely used).
	idKnee       = 177.3 // ms
	idSlope      = 0.024
	idSlopeAbove = 0.11
	// jitterBufferFactor: a jitter buffer sized at twice the measured
	// jitter is the usual adaptive target.
	jitterBufferFactor = 2
)

// Impairment values for the codecs with a published basis.
type impairment struct {
	name      string
	ie        float64 // equipment impairment (G.113 Appendix I, Table I.1)
	bpl       float64 // packet-loss robustness (G.113 Appendix I, Table I.3)
	lookahead float64 // ms, codec algorithmic delay beyond one frame
	basis     string
}

var impairments = map[string]impairment{
	"pcmu": {name: "G.711", ie: 0, bpl: 25.1, basis: "ITU-T G.113 App. I: G.711 Ie 0, Bpl 25.1 (with PLC)"},
	"pcma": {name: "G.711", ie: 0, bpl: 25.1, basis: "ITU-T G.113 App. I: G.711 Ie 0, Bpl 25.1 (with PLC)"},
	"g729": {name: "G.729A", ie: 11, bpl: 19.0, lookahead: 5, basis: "ITU-T G.113 App. I: G.729A+VAD Ie 11, Bpl 19.0"},
	// Opus has no narrowband Ie in G.113; it is scored as G.711-equivalent
	// (its narrowband quality is at least G.711's), and the basis says so.
	"opus": {name: "Opus", ie: 0, bpl: 25.1, lookahead: 6.5, basis: "no ITU-T narrowband Ie for Opus: scored as G.711-equivalent (Ie 0, Bpl 25.1)"},
}

// MOS is an E-model estimate, or the reason there is none.
type MOS struct {
	Value *float64
	R     *float64
	// Grounded is false when the codec has no published impairment
	// values; Value is then nil and Reason is "not_grounded".
	Grounded bool
	Reason   string
	Basis    string
}

// EstimateMOS scores a codec (an SDP encoding name) at a loss percentage,
// a mean jitter and a packetisation time in ms.
func EstimateMOS(codec string, lossPct, jitterMs, ptimeMs float64) MOS {
	imp, ok := impairments[strings.ToLower(codec)]
	if !ok {
		return MOS{Reason: "not_grounded", Basis: "no published E-model impairment values for " + codecLabel(codec)}
	}
	if ptimeMs <= 0 {
		ptimeMs = 20
	}
	ppl := math.Min(math.Max(lossPct, 0), 100)
	ieEff := imp.ie + (95-imp.ie)*ppl/(ppl/burstR+imp.bpl) // G.107 eq. (7-29)
	ta := ptimeMs + imp.lookahead + jitterBufferFactor*jitterMs
	id := idSlope * ta
	if ta > idKnee {
		id += idSlopeAbove * (ta - idKnee)
	}
	r := r0MinusIs - id - ieEff
	m := rToMOS(r)
	return MOS{Value: &m, R: &r, Grounded: true, Basis: imp.basis}
}

// codecLabel names a codec in the box's own words: its own name for one
// its tables know, else a description, so a basis never quotes sender text.
func codecLabel(c string) string {
	if own, ok := Codec(c).Own(); ok {
		return "codec " + own
	}
	if c == "" {
		return "an unnamed codec"
	}
	return "a codec only the SDP names (see codec)"
}

// rToMOS is G.107 Annex B (B-4).
func rToMOS(r float64) float64 {
	switch {
	case r <= 0:
		return 1
	case r >= 100:
		return 4.5
	}
	m := 1 + 0.035*r + r*(r-60)*(100-r)*7e-6
	return math.Round(math.Max(m, 1)*100) / 100
}

// SatisfactionBand is one of ITU-T G.107's user satisfaction categories
// as a MOS range: Min <= MOS < Max.
type SatisfactionBand struct {
	Label    string
	Min, Max float64
}

// SatisfactionBands are G.107's categories (R 90/80/70/60/50) as MOS,
// through G.107 Annex B's R-to-MOS mapping, best first; the last takes
// every score below its Max.
var SatisfactionBands = []SatisfactionBand{
	{Label: "very satisfied", Min: 4.34, Max: 5},
	{Label: "satisfied", Min: 4.03, Max: 4.34},
	{Label: "some dissatisfied", Min: 3.60, Max: 4.03},
	{Label: "many dissatisfied", Min: 3.10, Max: 3.60},
	{Label: "nearly all dissatisfied", Min: 2.58, Max: 3.10},
	{Label: "not recommended", Min: 1, Max: 2.58},
}

// BandOf is the index in SatisfactionBands of the band mos falls in.
func BandOf(mos float64) int {
	for i, b := range SatisfactionBands {
		if mos >= b.Min {
			return i
		}
	}
	return len(SatisfactionBands) - 1
}
