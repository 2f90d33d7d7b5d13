package rtp

import (
	"fmt"
	"math"
	"net/netip"

	"fieldtap/services/sdp"
)

// Finding thresholds.
const (
	// asymmetricLossPoints: directions whose loss differs by this many
	// percentage points (with one at least lossWarnPct) are asymmetric.
	asymmetricLossPoints = 3.0
	lossWarnPct          = 1.0
	// poorMOS is G.107 Annex B's "many users dissatisfied" boundary (R 60 ≈ 3.1)
	// raised to the common planning threshold of 3.6 (R 70).
	poorMOS = 3.6
)

// Finding codes.
const (
	FindingNoMedia      = "no_media"
	FindingOneWay       = "one_way_media"
	FindingAsymmetric   = "asymmetric_loss"
	FindingUnsignalled  = "unsignalled_address"
	FindingLoss         = "packet_loss"
	FindingPoorMOS      = "poor_mos"
	FindingNoneDetected = "no_problem_found"
	FindingOrphans      = "orphan_streams"
)

// Finding is one diagnosis, with the streams it rests on.
type Finding struct {
	Code     string
	Severity string // info, warning, error
	Message  string
	Streams  []string
}

// Diagnosis answers media_diagnostics for one Call-ID.
type Diagnosis struct {
	CallID     string
	Applicable bool
	Reason     string
	Findings   []Finding
	Streams    []StreamView
}

// Diagnose compares what callID signalled with what flowed. An empty
// finding list never stands for "fine": a clean call says so.
func (sn *Snapshot) Diagnose(callID string) Diagnosis {
	dg := Diagnosis{CallID: callID, Findings: []Finding{}, Streams: nonNil(sn.ForCall(callID))}
	d := sn.Dialogs[callID]
	switch {
	case d == nil || len(d.SDP) == 0:
		dg.Reason = "no SDP seen for this Call-ID: nothing was negotiated here, so there is no media to judge"
		return dg
	case d.FinalCode >= 300 && len(dg.Streams) == 0:
		dg.Reason = fmt.Sprintf("the call failed (%d) before media", d.FinalCode)
		return dg
	}
	offerSide, answerSide, answered := sides(d)
	if !answered && len(dg.Streams) == 0 {
		dg.Reason = "an offer without an answer in the capture, and no media flowed"
		return dg
	}
	dg.Applicable = true
	if len(dg.Streams) == 0 {
		dg.Findings = append(dg.Findings, Finding{Code: FindingNoMedia, Severity: "error", Streams: []string{},
			Message: "offer and answer were exchanged but no RTP reached the capture point in either direction"})
		return dg
	}
	toOfferer, toAnswerer := []StreamView{}, []StreamView{}
	signalled := map[string]bool{}
	for _, e := range d.Endpoints {
		signalled[e] = true
	}
	for _, s := range dg.Streams {
		dst := netip.MustParseAddrPort(s.Dst)
		switch {
		case offerSide[dst]:
			toOfferer = append(toOfferer, s)
		case answerSide[dst]:
			toAnswerer = append(toAnswerer, s)
		case offerSide[netip.MustParseAddrPort(s.Src)]:
			toAnswerer = append(toAnswerer, s)
		default:
			toOfferer = append(toOfferer, s)
		}
		if !signalled[s.Src] || !signalled[s.Dst] {
			other := s.Src
			if signalled[s.Src] {
				other = s.Dst
			}
			dg.Findings = append(dg.Findings, Finding{Code: FindingUnsignalled, Severity: "warning", Streams: []string{s.ID},
				Message: fmt.Sprintf("media uses %s, an address no SDP of this call announced (NAT or a relay?)", other)})
		}
		if s.LostPct >= lossWarnPct {
			dg.Findings = append(dg.Findings, Finding{Code: FindingLoss, Severity: "warning", Streams: []string{s.ID},
				Message: fmt.Sprintf("%.1f%% loss (%d of %d) from %s to %s", s.LostPct, s.Lost, s.Expected, s.Src, s.Dst)})
		}
		if s.Value != nil && *s.Value < poorMOS {
			dg.Findings = append(dg.Findings, Finding{Code: FindingPoorMOS, Severity: "warning", Streams: []string{s.ID},
				Message: fmt.Sprintf("MOS %.2f from %s to %s", *s.Value, s.Src, s.Dst)})
		}
	}
	if len(toOfferer) == 0 || len(toAnswerer) == 0 {
		flowing := toOfferer
		dir := "answerer → offerer"
		if len(toOfferer) == 0 {
			flowing, dir = toAnswerer, "offerer → answerer"
		}
		sev, why := "error", "nothing flowed the other way"
		if dirs := negotiated(d); dirs != "" {
			sev, why = "info", "expected: the SDP negotiated "+dirs
		}
		dg.Findings = append(dg.Findings, Finding{Code: FindingOneWay, Severity: sev, Streams: ids(flowing),
			Message: fmt.Sprintf("media flowed only %s; %s", dir, why)})
	} else {
		lo, hi := lossOf(toOfferer), lossOf(toAnswerer)
		if math.Abs(lo-hi) >= asymmetricLossPoints && math.Max(lo, hi) >= lossWarnPct {
			dg.Findings = append(dg.Findings, Finding{Code: FindingAsymmetric, Severity: "warning", Streams: append(ids(toOfferer), ids(toAnswerer)...),
				Message: fmt.Sprintf("loss toward the offerer %.1f%%, toward the answerer %.1f%%", lo, hi)})
		}
	}
	if len(dg.Findings) == 0 {
		dg.Findings = append(dg.Findings, Finding{Code: FindingNoneDetected, Severity: "info", Streams: ids(dg.Streams),
			Message: "media flowed both ways with no loss, one-way or address problem detected"})
	}
	return dg
}

// DiagnoseOrphans is the capture-wide diagnosis: streams no SIP dialog
// signalled, which only heuristic detection finds. With it off there is
// nothing to judge, and the diagnosis says so.
func (sn *Snapshot) DiagnoseOrphans() Diagnosis {
	orph := sn.Orphans()
	dg := Diagnosis{Applicable: sn.Stats.Heuristic, Findings: []Finding{}, Streams: orph}
	switch {
	case !sn.Stats.Heuristic:
		dg.Reason = "orphan streams are only found with heuristic RTP detection, which is off"
	case len(orph) > 0:
		dg.Findings = append(dg.Findings, Finding{Code: FindingOrphans, Severity: "warning", Streams: ids(orph),
			Message: fmt.Sprintf("%d RTP streams no SIP dialog signalled", len(orph))})
	default:
		dg.Findings = append(dg.Findings, Finding{Code: FindingNoneDetected, Severity: "info", Streams: []string{},
			Message: "every RTP stream found belongs to a signalled call"})
	}
	return dg
}

// Orphans lists streams with no dialog (only found by heuristic).
func (sn *Snapshot) Orphans() []StreamView {
	var out []StreamView
	for _, s := range sn.Streams {
		if s.Orphaned {
			out = append(out, s)
		}
	}
	return nonNil(out)
}

// sides splits a dialog's media addresses into offerer's and answerer's.
func sides(d *DialogView) (offer, answer map[netip.AddrPort]bool, answered bool) {
	offer, answer = map[netip.AddrPort]bool{}, map[netip.AddrPort]bool{}
	for _, e := range d.SDP {
		side := offer
		if e.Role == RoleAnswer {
			side, answered = answer, true
		}
		for _, m := range e.Session.Media {
			if a, ok := m.Addr(); ok {
				side[a] = true
			}
		}
	}
	return offer, answer, answered
}

// negotiated describes a one-way direction in the last offer/answer
// (e.g. "recvonly/sendonly"), or "" when both sides asked for sendrecv.
func negotiated(d *DialogView) string {
	var offer, answer string
	for _, e := range d.SDP {
		for _, m := range e.Session.Media {
			if m.Type != "audio" {
				continue
			}
			if e.Role == RoleOffer {
				offer = m.Direction
			} else {
				answer = m.Direction
			}
		}
	}
	if (offer == "" || offer == sdp.SendRecv) && (answer == "" || answer == sdp.SendRecv) {
		return ""
	}
	return "offer " + offer + ", answer " + answer
}

func lossOf(ss []StreamView) float64 {
	var lost, exp int64
	for _, s := range ss {
		lost += s.Lost
		exp += s.Expected
	}
	if exp == 0 {
		return 0
	}
	return 100 * float64(lost) / float64(exp)
}

func ids(ss []StreamView) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
