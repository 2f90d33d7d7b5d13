package sip

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"time"

	"fieldtap/services/heapsize"
)

// Correlation keys a dialog keeps, bounded: they are sender-chosen.
const (
	maxSessionIDs = 4   // non-nil Session-ID UUIDs (RFC 7989: a local and a remote per leg, a few on a transfer)
	maxICIDs      = 2   // P-Charging-Vector icid-values (RFC 7315 §4.6)
	maxXHeaders   = 4   // X- headers whose value could name another leg
	maxXValue     = 128 // bytes of such a value kept: a Call-ID rarely exceeds it
	minXIDLen     = 8   // a shared X- value shorter than this is a flag, not an id
	// uuidLen is an RFC 7989 Session-ID UUID: 32 hex digits.
	uuidLen = 32
)

// Correlation bounds of one answer.
const (
	// MaxCorrelated bounds the dialogs find_correlated lists; more are
	// counted.
	MaxCorrelated = 50
	// MaxTreeDialogs bounds a call tree: a B2BUA chain of a few legs, a
	// conference of a few dozen.
	MaxTreeDialogs = 64
	// HeuristicWindow: two legs of one call through a B2BUA start within
	// this of each other (the B2BUA sends its INVITE on receiving one).
	HeuristicWindow = 2 * time.Second
)

// XHeader is an X- header a dialog carried: name as written, value (sender text).
type XHeader struct{ Name, Value string }

// Ways two dialogs are found to be legs of one call.
const (
	BySessionID      = "session_id"       // RFC 7989: the non-nil UUIDs of the two intersect
	ByChargingVector = "charging_vector"  // RFC 7315 P-Charging-Vector: the same icid-value
	ByXHeader        = "x_header"         // an X- header names the other's Call-ID, or both carry the same X- header value
	ByTiming         = "timing_heuristic" // a heuristic: INVITEs within HeuristicWindow sharing a From or To user
)

// Evidence is one reason two dialogs correlate.
type Evidence struct {
	By        string
	Header    string // the header it was read from ("Session-ID", "P-Charging-Vector", the X- header's name)
	Value     string // the shared value (sender text, except a Session-ID UUID, which is checked hex)
	Heuristic bool
}

// noteCorrelation folds a message's correlation headers into d.
func noteCorrelation(d *Dialog, m *Parsed) {
	for i := range m.Headers {
		h := &m.Headers[i]
		if h.ID != HOther {
			continue
		}
		switch {
		case bytes.EqualFold(h.Name, []byte("Session-ID")):
			noteSessionID(d, h.Value)
		case bytes.EqualFold(h.Name, []byte("P-Charging-Vector")):
			if v := Param(append([]byte(";"), h.Value...), "icid-value"); len(v) > 0 && len(d.ICIDs) < maxICIDs && !containsBytes(d.ICIDs, v) {
				id := string(v[:min(len(v), maxXValue)])
				d.ICIDs = append(d.ICIDs, id)
				d.listBytes += heapsize.String(id)
			}
		case len(h.Name) > 2 && (h.Name[0] == 'X' || h.Name[0] == 'x') && h.Name[1] == '-':
			v := bytes.TrimSpace(h.Value)
			if len(v) == 0 || len(v) > maxXValue || len(d.XHeaders) >= maxXHeaders {
				continue
			}
			x := XHeader{Name: string(h.Name), Value: string(v)}
			if !slices.Contains(d.XHeaders, x) {
				d.XHeaders = append(d.XHeaders, x)
				d.listBytes += heapsize.String(x.Name) + heapsize.String(x.Value)
			}
		}
	}
}

// noteSessionID keeps the header's UUIDs (RFC 7989 §4: local-uuid, then
// remote=remote-uuid), lowercased, leaving out the nil UUID a UA sends
// before it knows the other side's.
func noteSessionID(d *Dialog, v []byte) {
	local, rest, _ := bytes.Cut(v, []byte(";"))
	for _, u := range [][]byte{bytes.TrimSpace(local), Param(append([]byte(";"), rest...), "remote")} {
		if !isUUID(u) || bytes.Count(u, []byte("0")) == uuidLen {
			continue
		}
		s := strings.ToLower(string(u))
		if len(d.SessionIDs) < maxSessionIDs && !slices.Contains(d.SessionIDs, s) {
			d.SessionIDs = append(d.SessionIDs, s)
			d.listBytes += heapsize.String(s)
		}
	}
}

func isUUID(b []byte) bool {
	if len(b) != uuidLen {
		return false
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Evidence returns why a and b are legs of one call, strong evidence
// first, the timing heuristic only when there is nothing else; nil when
// they are not correlated.
func CorrelationEvidence(a, b *Dialog) []Evidence {
	if a == b || a.CallID == b.CallID {
		return nil
	}
	var ev []Evidence
	for _, u := range a.SessionIDs {
		if slices.Contains(b.SessionIDs, u) {
			ev = append(ev, Evidence{By: BySessionID, Header: "Session-ID", Value: u})
			break
		}
	}
	for _, v := range a.ICIDs {
		if slices.Contains(b.ICIDs, v) {
			ev = append(ev, Evidence{By: ByChargingVector, Header: "P-Charging-Vector", Value: v})
			break
		}
	}
	ev = appendXEvidence(ev, a, b)
	ev = appendXEvidence(ev, b, a)
	for _, x := range a.XHeaders {
		if slices.Contains(b.XHeaders, x) && x.Value != a.CallID && x.Value != b.CallID && idLike(x.Value) {
			ev = append(ev, Evidence{By: ByXHeader, Header: x.Name, Value: x.Value})
		}
	}
	if len(ev) > 0 {
		return ev
	}
	if timingMatch(a, b) {
		return []Evidence{{By: ByTiming, Heuristic: true}}
	}
	return nil
}

// appendXEvidence: an X- header of a names b's Call-ID (a PBX copying the
// inbound leg's Call-ID into the outbound INVITE).
func appendXEvidence(ev []Evidence, a, b *Dialog) []Evidence {
	for _, x := range a.XHeaders {
		if x.Value == b.CallID {
			ev = append(ev, Evidence{By: ByXHeader, Header: x.Name, Value: x.Value})
		}
	}
	return ev
}

// idLike: a shared X- header value links two legs only when it looks
// like an identifier (at least 8 bytes, a digit among them), not a flag
// such as "true" that every dialog of a PBX carries.
func idLike(v string) bool {
	return len(v) >= minXIDLen && strings.ContainsAny(v, "0123456789")
}

func timingMatch(a, b *Dialog) bool {
	if !a.HasInvite || !b.HasInvite || a.InviteAt.IsZero() || b.InviteAt.IsZero() {
		return false
	}
	if d := a.InviteAt.Sub(b.InviteAt); d > HeuristicWindow || d < -HeuristicWindow {
		return false
	}
	return a.ToUser != "" && a.ToUser == b.ToUser || a.FromUser != "" && a.FromUser == b.FromUser
}

// Correlated is one dialog correlated with another, and why.
type Correlated struct {
	D        *Dialog
	Evidence []Evidence
}

// FindCorrelated lists the dialogs of ds correlated with d, oldest first,
// at most MaxCorrelated (the rest counted).
func FindCorrelated(ds []*Dialog, d *Dialog) (out []Correlated, more int) {
	for _, o := range ds {
		if ev := CorrelationEvidence(d, o); ev != nil {
			if len(out) == MaxCorrelated {
				more++
				continue
			}
			out = append(out, Correlated{D: o, Evidence: ev})
		}
	}
	return out, more
}

// corrIndex finds the dialogs that may carry strong evidence with one:
// those sharing a Session-ID UUID, an icid-value or an X- header value
// with it, those whose X- header names its Call-ID, and those its X-
// headers name. By their places in the dialogs it was built from.
type corrIndex struct {
	keys map[corrKey][]int32
}

// corrKey is one key a dialog carries: a Session-ID UUID, an icid-value,
// an X- header value, or (callID) a Call-ID some X- header names.
type corrKey struct {
	kind byte
	v    string
}

const (
	keySession byte = iota
	keyICID
	keyXValue
	keyCallID
)

func newCorrIndex(ds []*Dialog) corrIndex {
	idx := corrIndex{keys: map[corrKey][]int32{}}
	named := false
	for p, d := range ds {
		for _, u := range d.SessionIDs {
			idx.add(corrKey{keySession, u}, p)
		}
		for _, v := range d.ICIDs {
			idx.add(corrKey{keyICID, v}, p)
		}
		for _, x := range d.XHeaders {
			idx.add(corrKey{keyXValue, x.Value}, p)
			named = true
		}
	}
	if named { // the dialogs an X- header names, by Call-ID
		for p, d := range ds {
			if _, ok := idx.keys[corrKey{keyXValue, d.CallID}]; ok {
				idx.add(corrKey{keyCallID, d.CallID}, p)
			}
		}
	}
	return idx
}

func (idx corrIndex) add(k corrKey, p int) { idx.keys[k] = append(idx.keys[k], int32(p)) }

// candidates are the dialogs of ds that may carry strong evidence with
// d, in ds's order.
func (idx corrIndex) candidates(ds []*Dialog, d *Dialog) []*Dialog {
	var ps []int32
	for _, u := range d.SessionIDs {
		ps = append(ps, idx.keys[corrKey{keySession, u}]...)
	}
	for _, v := range d.ICIDs {
		ps = append(ps, idx.keys[corrKey{keyICID, v}]...)
	}
	for _, x := range d.XHeaders {
		ps = append(ps, idx.keys[corrKey{keyXValue, x.Value}]...)
		ps = append(ps, idx.keys[corrKey{keyCallID, x.Value}]...)
	}
	ps = append(ps, idx.keys[corrKey{keyXValue, d.CallID}]...)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	out := make([]*Dialog, len(ps))
	for i, p := range ps {
		out[i] = ds[p]
	}
	return out
}

// TreeNode is one leg of a call tree.
type TreeNode struct {
	D        *Dialog
	Parent   string // the Call-ID it was reached from; "" for the root
	Depth    int
	Evidence []Evidence // why it is linked to Parent
}

// CallTree walks from root over strong evidence (Session-ID, charging
// vector, X- headers) to every leg it reaches, breadth first, at most
// MaxTreeDialogs (truncated says so). Legs the timing heuristic links to
// the root are added at depth 1, labelled, and never expanded: a
// heuristic chained through heuristics would join unrelated calls.
//
// The root is compared with every dialog (the heuristic needs them all);
// each leg after it only with the dialogs that share a key with it
// (corrIndex): at 100,000 dialogs comparing every leg with every dialog
// was about 14 ms a leg, most of a second for a conference.
func CallTree(ds []*Dialog, root *Dialog) (nodes []TreeNode, truncated bool) {
	var idx corrIndex
	return callTree(ds, root, func(d *Dialog) []*Dialog {
		if idx.keys == nil {
			idx = newCorrIndex(ds)
		}
		return idx.candidates(ds, d)
	})
}

// callTree is CallTree comparing each leg past the root with the
// dialogs legs gives for it, in ds's order.
func callTree(ds []*Dialog, root *Dialog, legs func(*Dialog) []*Dialog) (nodes []TreeNode, truncated bool) {
	nodes = []TreeNode{{D: root}}
	seen := map[string]bool{root.CallID: true}
	var heur []TreeNode
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		cands := ds
		if i > 0 {
			cands = legs(n.D)
		}
		for _, o := range cands {
			// The evidence first: most dialogs have none, told from fields
			// without hashing their Call-ID for seen.
			ev := CorrelationEvidence(n.D, o)
			switch {
			case ev == nil || seen[o.CallID]:
				continue
			case ev[0].Heuristic:
				if i == 0 {
					heur = append(heur, TreeNode{D: o, Parent: root.CallID, Depth: 1, Evidence: ev})
				}
				continue
			}
			if len(nodes) == MaxTreeDialogs {
				truncated = true
				continue
			}
			seen[o.CallID] = true
			nodes = append(nodes, TreeNode{D: o, Parent: n.D.CallID, Depth: n.Depth + 1, Evidence: ev})
		}
	}
	for _, h := range heur {
		if seen[h.D.CallID] {
			continue // reached by strong evidence after all
		}
		if len(nodes) == MaxTreeDialogs {
			truncated = true
			break
		}
		nodes = append(nodes, h)
	}
	slices.SortStableFunc(nodes[1:], func(a, b TreeNode) int { return cmp.Compare(a.Depth, b.Depth) })
	return nodes, truncated
}
