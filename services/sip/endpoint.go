package sip

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// Endpoint view bounds: an answer about one address or user stays small
// whatever the store holds.
const (
	maxEndpointPeers = 10 // peers listed, largest first; the rest counted
	maxEndpointUAs   = 8  // distinct User-Agent/Server values listed
	maxEndpointCalls = 10 // example Call-IDs, oldest first
	// maxEndpointKeys bounds the methods and codes listed: methods are
	// sender tokens, so a hostile peer could otherwise make hundreds.
	maxEndpointKeys = 20
)

// EndpointQuery names one endpoint: an address (every message it sent or
// received) or a URI user (From or To), never both.
type EndpointQuery struct {
	IP   netip.Addr // valid when asking by address
	User string     // non-empty when asking by user
}

// Count is a value and how many times it was counted.
type Count struct {
	Value string
	N     int
}

// EndpointView is what the store knows of one endpoint.
type EndpointView struct {
	Dialogs         int // dialogs it took part in
	AsCaller        int // it sent the first request (by address) or was the From user
	AsCallee        int // it received the first request, or was the To user
	First, Last     time.Time
	Methods         []Count // dialogs per method seen, largest first, at most maxEndpointKeys
	MethodsOther    int     // distinct methods past that
	Outcomes        []Count // call attempts per outcome
	FinalCodes      []Count // call attempts per final code ((none) while none)
	Registrations   int     // REGISTER transactions it sent (by address) or for it (by user)
	RegisterResults []Count // those by final code ((none) while none)
	Peers           []Count // other participant addresses by dialogs shared, largest first
	PeersOther      int     // distinct peers past maxEndpointPeers
	UserAgents      []string
	CallIDs         []string // the oldest dialogs, up to maxEndpointCalls
}

// DescribeEndpoint summarises the dialogs of ds that match accepts and
// involve q. A dialog keeps at most maxParticipants addresses, so a
// dialog past that bound may be missed when asking by address.
func DescribeEndpoint(ds []*Dialog, match func(*Dialog) bool, q EndpointQuery) EndpointView {
	var v EndpointView
	// Keys made strings once, at the end, not once a dialog.
	methods, outcomes := map[string]int{}, map[string]int{}
	codes, regs, peers := map[int]int{}, map[int]int{}, map[netip.Addr]int{}
	var as []Attempt      // each dialog's attempts in turn, in one array
	var seen []netip.Addr // each dialog's peers in turn
	for _, d := range ds {
		caller, callee, in := q.role(d)
		if !in || !match(d) {
			continue
		}
		v.Dialogs++
		v.AsCaller += b2i(caller)
		v.AsCallee += b2i(callee)
		if v.First.IsZero() || d.Created.Before(v.First) {
			v.First = d.Created
		}
		if d.Updated.After(v.Last) {
			v.Last = d.Updated
		}
		for _, m := range d.Methods {
			methods[m]++
		}
		as = d.AppendAttempts(as[:0])
		for _, a := range as {
			outcomes[outcome(true, a.State)]++
			codes[a.FinalCode]++
		}
		for i := range d.Txns {
			tx := &d.Txns[i]
			if tx.Method != "REGISTER" || !q.sent(d, tx) {
				continue
			}
			v.Registrations++
			regs[tx.FinalCode]++
		}
		seen = seen[:0]
		for _, p := range d.Participants {
			a := p.Addr().Unmap()
			if a != q.IP && !slices.Contains(seen, a) {
				seen = append(seen, a)
				peers[a]++
			}
		}
		for _, ua := range d.UserAgents {
			if len(v.UserAgents) < maxEndpointUAs && !slices.Contains(v.UserAgents, ua) {
				v.UserAgents = append(v.UserAgents, ua)
			}
		}
		if len(v.CallIDs) < maxEndpointCalls {
			v.CallIDs = append(v.CallIDs, d.CallID)
		}
	}
	v.Methods, v.Outcomes, v.FinalCodes, v.RegisterResults = counts(methods), counts(outcomes), counts(keyed(codes, codeKey)), counts(keyed(regs, codeKey))
	if len(v.Methods) > maxEndpointKeys {
		v.MethodsOther = len(v.Methods) - maxEndpointKeys
		v.Methods = v.Methods[:maxEndpointKeys]
	}
	// Final codes are three digits: at most 600 distinct, a bounded list.
	v.Peers = counts(keyed(peers, netip.Addr.String))
	if len(v.Peers) > maxEndpointPeers {
		v.PeersOther = len(v.Peers) - maxEndpointPeers
		v.Peers = v.Peers[:maxEndpointPeers]
	}
	return v
}

// role says whether d involves q, and as which side of its first request.
func (q EndpointQuery) role(d *Dialog) (caller, callee, in bool) {
	if q.User != "" {
		caller, callee = d.FromUser == q.User, d.ToUser == q.User
		return caller, callee, caller || callee
	}
	caller, callee = d.Src.Addr().Unmap() == q.IP, d.Dst.Addr().Unmap() == q.IP
	in = caller || callee || slices.ContainsFunc(d.Participants, func(p netip.AddrPort) bool { return p.Addr().Unmap() == q.IP })
	return caller, callee, in
}

// sent: by address, the endpoint sent the transaction's request; by user,
// the dialog is the user's (a REGISTER's From and To are the user).
func (q EndpointQuery) sent(d *Dialog, tx *Transaction) bool {
	if q.User != "" {
		return true
	}
	return tx.Src.Addr().Unmap() == q.IP
}

func codeKey(code int) string {
	if code == 0 {
		return NoValue
	}
	return strconv.Itoa(code)
}

// keyed is m by the names of its keys (distinct keys, distinct names).
func keyed[K comparable](m map[K]int, name func(K) string) map[string]int {
	out := make(map[string]int, len(m))
	for k, n := range m {
		out[name(k)] += n
	}
	return out
}

// counts lists m largest first, ties by value.
func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{Value: k, N: n})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Value, b.Value)) })
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Talker is one participant and the dialogs it took part in.
type Talker struct {
	Value   string
	Dialogs int
	Share   float64 // Dialogs / the dialogs matched: a dialog has several participants, so shares add up to more than 1
}

// TopTalkers is an aggregation by a participant dimension
// (participant_ip or participant_user) as talkers, each with its share
// of the dialogs matched; the matched and the talkers past its buckets.
func TopTalkers(ag Aggregation) (top []Talker, matched, others int) {
	for _, b := range ag.Buckets {
		t := Talker{Value: b.Value, Dialogs: b.Count}
		if ag.TotalMatched > 0 {
			t.Share = float64(b.Count) / float64(ag.TotalMatched)
		}
		top = append(top, t)
	}
	return top, ag.TotalMatched, ag.OtherBuckets
}
