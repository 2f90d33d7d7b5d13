package sip

import (
	"slices"
	"strconv"
	"time"

	"fieldtap/services/filter"
)

// Field indexes into Schema; Record answers by them.
const (
	fCallID = iota
	fMethod
	fFirstMethod
	fState
	fFinalCode
	fFromUser
	fToUser
	fSrcIP
	fDstIP
	fUserAgent
	fTransport
	fMessages
	fRetransmits
	fAuthChallenges
	fForks
	fPDD
	fSetup
	fDuration
	fHasAck
	fHasBye
	fCancelled
)

// Schema is the dialog filter schema shared by every SIP tool
// (docs/filter.md lists it).
var Schema = filter.Schema{
	fCallID:         {Name: "call_id", Kind: filter.String, Doc: "the Call-ID"},
	fMethod:         {Name: "method", Kind: filter.String, Multi: true, Doc: "any method seen in the dialog"},
	fFirstMethod:    {Name: "first_method", Kind: filter.String, Doc: "method of the first request (INVITE, REGISTER, OPTIONS, …)"},
	fState:          {Name: "state", Kind: filter.String, Doc: "calling, proceeding, early, answered, ended, failed, cancelled, open, completed, rejected"},
	fFinalCode:      {Name: "final_code", Kind: filter.Number, Doc: "final status of the first method's transaction; null while none"},
	fFromUser:       {Name: "from_user", Kind: filter.String, Doc: "user part of the From URI"},
	fToUser:         {Name: "to_user", Kind: filter.String, Doc: "user part of the To URI"},
	fSrcIP:          {Name: "src_ip", Kind: filter.String, Doc: "source address of the first request"},
	fDstIP:          {Name: "dst_ip", Kind: filter.String, Doc: "destination address of the first request"},
	fUserAgent:      {Name: "user_agent", Kind: filter.String, Multi: true, Doc: "any User-Agent or Server value"},
	fTransport:      {Name: "transport", Kind: filter.String, Doc: "udp, tcp or ws"},
	fMessages:       {Name: "messages", Kind: filter.Number, Doc: "messages seen, retransmissions included"},
	fRetransmits:    {Name: "retransmits", Kind: filter.Number, Doc: "messages that repeated an earlier one"},
	fAuthChallenges: {Name: "auth_challenges", Kind: filter.Number, Doc: "401 and 407 responses"},
	fForks:          {Name: "forks", Kind: filter.Number, Doc: "distinct To tags in responses"},
	fPDD:            {Name: "pdd_ms", Kind: filter.Number, Doc: "INVITE to first 180/183 in ms; null if either is missing"},
	fSetup:          {Name: "setup_ms", Kind: filter.Number, Doc: "INVITE to 2xx in ms; null if unanswered"},
	fDuration:       {Name: "duration_ms", Kind: filter.Number, Doc: "2xx to BYE in ms; null if either is missing"},
	fHasAck:         {Name: "has_ack", Kind: filter.Bool, Doc: "an ACK was seen"},
	fHasBye:         {Name: "has_bye", Kind: filter.Bool, Doc: "a BYE was seen"},
	fCancelled:      {Name: "cancelled", Kind: filter.Bool, Doc: "a CANCEL was seen"},
}

// Compile compiles a dialog filter.
func Compile(src string) (*filter.Expr, error) { return filter.Compile(src, Schema) }

// Field implements filter.Record.
func (d *Dialog) Field(i int) filter.Value {
	switch i {
	case fCallID:
		return filter.Value{Str: d.CallID}
	case fMethod:
		return filter.Value{Strs: d.Methods}
	case fFirstMethod:
		return filter.Value{Str: d.FirstMethod}
	case fState:
		return filter.Value{Str: d.State}
	case fFinalCode:
		v, null := finalCode(d.FinalCode)
		return filter.Value{Num: v, Null: null}
	case fFromUser:
		return filter.Value{Str: d.FromUser}
	case fToUser:
		return filter.Value{Str: d.ToUser}
	case fSrcIP:
		return filter.Value{Str: d.Src.Addr().String()}
	case fDstIP:
		return filter.Value{Str: d.Dst.Addr().String()}
	case fUserAgent:
		return filter.Value{Strs: d.UserAgents}
	case fTransport:
		return filter.Value{Str: d.Transport}
	case fMessages:
		return filter.Value{Num: float64(d.Requests + d.Responses)}
	case fRetransmits:
		return filter.Value{Num: float64(d.Retransmits)}
	case fAuthChallenges:
		return filter.Value{Num: float64(d.AuthChallenge)}
	case fForks:
		return filter.Value{Num: float64(len(d.ToTags))}
	case fPDD:
		return msValue(d.PDD())
	case fSetup:
		return msValue(d.Setup())
	case fDuration:
		return msValue(d.Duration())
	case fHasAck:
		return filter.Value{Bool: d.AckSeen}
	case fHasBye:
		return filter.Value{Bool: d.ByeSeen}
	case fCancelled:
		return filter.Value{Bool: d.CancelSeen}
	}
	return filter.Value{Null: true}
}

// finalCode is final_code's value, null while no final response came.
func finalCode(code int) (float64, bool) { return float64(code), code == 0 }

func msValue(d time.Duration, ok bool) filter.Value {
	return filter.Value{Num: float64(d) / float64(time.Millisecond), Null: !ok}
}

// Dimensions are the columns aggregate tools group by. In a single-valued
// one each dialog falls in exactly one bucket, so buckets plus other add
// up to the population; in a participant dimension (MultiDimension) a
// dialog counts once in the bucket of each of its participants.
var Dimensions = []string{"method", "state", "final_code", "from_user", "to_user", "src_ip", "dst_ip", "user_agent", "transport",
	"participant_ip", "participant_user"}

// MultiDimension reports whether dim counts a dialog once per participant:
// participant_ip is every address it saw (either side of any message),
// participant_user its From and To users.
func MultiDimension(dim string) bool { return dim == "participant_ip" || dim == "participant_user" }

// DimensionValues returns d's bucket keys in dim: one for a single-valued
// dimension, one per distinct participant for a MultiDimension (NoValue
// when it has none); false when dim is unknown.
func (d *Dialog) DimensionValues(dim string) ([]string, bool) {
	var vs []string
	switch dim {
	case "participant_ip":
		for _, p := range d.Participants {
			if a := p.Addr().Unmap().String(); !slices.Contains(vs, a) {
				vs = append(vs, a)
			}
		}
	case "participant_user":
		for _, u := range [...]string{d.FromUser, d.ToUser} {
			if u != "" && !slices.Contains(vs, u) {
				vs = append(vs, u)
			}
		}
	default:
		v, ok := d.Dimension(dim)
		return []string{v}, ok
	}
	if len(vs) == 0 {
		vs = []string{NoValue}
	}
	return vs, true
}

// NoValue is the bucket of dialogs without a value in a dimension.
const NoValue = "(none)"

// Dimension returns d's bucket key in dim ("method" is the first method,
// "user_agent" the first one seen) and whether dim is known.
func (d *Dialog) Dimension(dim string) (string, bool) {
	var v string
	switch dim {
	case "method":
		v = d.FirstMethod
	case "state":
		v = d.State
	case "final_code":
		if d.FinalCode != 0 {
			v = strconv.Itoa(d.FinalCode)
		}
	case "from_user":
		v = d.FromUser
	case "to_user":
		v = d.ToUser
	case "src_ip":
		v = d.Src.Addr().String()
	case "dst_ip":
		v = d.Dst.Addr().String()
	case "user_agent":
		if len(d.UserAgents) > 0 {
			v = d.UserAgents[0]
		}
	case "transport":
		v = d.Transport
	default:
		return "", false
	}
	if v == "" {
		v = NoValue
	}
	return v, true
}
