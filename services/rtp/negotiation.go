package rtp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Verdicts of Negotiate.
const (
	VerdictOK            = "ok"
	VerdictNoSDP         = "no_sdp_in_capture"
	VerdictNoAnswer      = "no_answer"
	VerdictRejected      = "rejected"
	VerdictNoCommonCodec = "no_common_codec"
	VerdictUnnegotiated  = "unnegotiated_codec_flowed"
)

// SDPSide is one SDP body of a call's offer/answer exchange: its audio
// line only.
type SDPSide struct {
	Time    time.Time
	Message string // "INVITE" or "200 INVITE": method token and status code
	Role    string // offer or answer
	From    string // signalling sender, IP:port
	// Address is where the body asks for audio; nil when its audio line
	// has port 0 or no address (a rejected stream), or it has none.
	Address   *string
	Direction string  // sendrecv, sendonly, recvonly, inactive; "" without an audio line
	Codecs    []Codec // the audio line's formats in order
}

// Negotiation compares what a call's SDP offered and answered with what
// its media carried.
type Negotiation struct {
	CallID    string
	Verdict   string
	Reason    string
	Exchanges []SDPSide
	// Negotiated are the codecs the last offer and its answer share,
	// compared without case and written upper-cased; Flowed are the
	// codecs the call's RTP streams carried, likewise.
	Negotiated []Codec
	Flowed     []Codec
}

// Negotiate judges callID's codec negotiation from the snapshot.
func (sn *Snapshot) Negotiate(callID string) Negotiation {
	out := Negotiation{CallID: callID, Exchanges: []SDPSide{}, Negotiated: []Codec{}, Flowed: []Codec{}}
	flowed := map[string]bool{}
	for _, s := range sn.ForCall(callID) {
		for _, p := range s.PayloadTypes {
			flowed[strings.ToUpper(string(p.Codec))] = true
		}
	}
	out.Flowed = sortedCodecs(flowed)
	dv := sn.Dialogs[callID]
	if dv == nil || len(dv.SDP) == 0 {
		out.Verdict, out.Reason = VerdictNoSDP, "no SDP body for this Call-ID reached the capture point"
		return out
	}
	var offer, answer map[string]bool
	rejected := false
	for _, e := range dv.SDP {
		side := SDPSide{Time: e.Time.UTC(), Message: e.Message, Role: e.Role, From: e.From.String(), Codecs: []Codec{}}
		codecs := map[string]bool{}
		for _, m := range e.Session.Media {
			if m.Type != "audio" {
				continue
			}
			if a, ok := m.Addr(); ok {
				addr := a.String()
				side.Address = &addr
			} else if e.Role == RoleAnswer {
				rejected = true
			}
			side.Direction = m.Direction
			for _, fm := range m.Formats {
				name := fm.Encoding
				if name == "" {
					name = "PT" + strconv.Itoa(fm.PT)
				}
				side.Codecs = append(side.Codecs, Codec(name))
				codecs[strings.ToUpper(name)] = true
			}
		}
		if e.Role == RoleOffer {
			offer, answer = codecs, nil
		} else {
			answer = codecs
		}
		out.Exchanges = append(out.Exchanges, side)
	}
	shared := map[string]bool{}
	for c := range answer {
		if offer[c] {
			shared[c] = true
		}
	}
	out.Negotiated = sortedCodecs(shared)
	switch {
	case answer == nil && dv.FinalCode >= 300:
		out.Verdict, out.Reason = VerdictRejected, fmt.Sprintf("the offer was refused with %d", dv.FinalCode)
	case answer == nil:
		out.Verdict, out.Reason = VerdictNoAnswer, "an offer was seen but no answer to it"
	case rejected:
		out.Verdict, out.Reason = VerdictRejected, "the answer set the audio port to 0"
	case len(shared) == 0:
		out.Verdict, out.Reason = VerdictNoCommonCodec, "offer and answer share no codec"
	default:
		out.Verdict, out.Reason = VerdictOK, "offer and answer share a codec"
		for _, c := range out.Flowed {
			if k := string(c); !answer[k] && !offer[k] {
				out.Verdict, out.Reason = VerdictUnnegotiated, "media carried "+codecLabel(k)+", which no SDP of this call listed"
				break
			}
		}
	}
	return out
}

func sortedCodecs(set map[string]bool) []Codec {
	out := make([]Codec, 0, len(set))
	for c := range set {
		out = append(out, Codec(c))
	}
	slices.Sort(out)
	return out
}
