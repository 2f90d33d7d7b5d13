package mcp

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/sipcompare"
)

// minPopulationArg is compare_captures' population guard.
type minPopulationArg int

// maxMinPopulation bounds the guard: past a million nothing a store holds
// would be ranked.
const maxMinPopulation = 1_000_000

func (minPopulationArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("a row is ranked only when its population (dialogs, call attempts, PDD samples, answered calls or streams) reaches this on both sides; "+
		"below it the row is reported with note \"too few\", 1 to %d (default %d)", maxMinPopulation, sipcompare.DefaultMinPopulation), 1, maxMinPopulation), sipcompare.DefaultMinPopulation)
}

// topArg is how many endpoints and User-Agents each side contributes.
type topArg int

func (topArg) argSchema() *jsonschema.Schema {
	return sipCount("endpoints and User-Agents from the head of each side (the union of both heads is compared)", 1, sipcompare.MaxTop, sipcompare.DefaultTop)
}

type compareCapturesIn struct {
	PortSelector
	PortB         portArg           `json:"port_b,omitempty" jsonschema:"side B's SPAN port or opened capture (open_capture's file1 …); empty: every port's dialogs, as side A's empty port"`
	SinceA        timeArg           `json:"since_a,omitempty" jsonschema:"side A (before) from this RFC 3339 time, by a dialog's first message and a stream's first packet (default the oldest)"`
	UntilA        timeArg           `json:"until_a,omitempty" jsonschema:"side A before this RFC 3339 time"`
	SinceB        timeArg           `json:"since_b,omitempty" jsonschema:"side B (after) from this RFC 3339 time"`
	UntilB        timeArg           `json:"until_b,omitempty" jsonschema:"side B before this RFC 3339 time (default the newest)"`
	MinPopulation *minPopulationArg `json:"min_population,omitempty"`
	Top           topArg            `json:"top,omitempty"`
	Paging
	Projection
}

// sideSpan is one side's window, its errors naming the side's arguments.
func sideSpan(since, until timeArg, side string) (span, error) {
	s, err := since.parse("since_" + side)
	if err != nil {
		return span{}, err
	}
	u, err := until.parse("until_" + side)
	if err != nil {
		return span{}, err
	}
	if !s.IsZero() && !u.IsZero() && !u.After(s) {
		return span{}, argErr("until_"+side, "until_"+side+" must be after since_"+side, "%s is not after since_%s %s", until, side, since)
	}
	return span{s, u}, nil
}

// coverageScope is both sides: the ports named (every port when either
// side names none) over the hull of the two windows.
func (in compareCapturesIn) coverageScope() ([]string, span, error) {
	a, err := sideSpan(in.SinceA, in.UntilA, "a")
	if err != nil {
		return nil, span{}, err
	}
	b, err := sideSpan(in.SinceB, in.UntilB, "b")
	if err != nil {
		return nil, span{}, err
	}
	// An open bound on either side opens the hull.
	hull := span{since: a.since, until: a.until}
	if a.since.IsZero() || b.since.IsZero() {
		hull.since = time.Time{}
	} else if b.since.Before(a.since) {
		hull.since = b.since
	}
	if a.until.IsZero() || b.until.IsZero() {
		hull.until = time.Time{}
	} else if b.until.After(a.until) {
		hull.until = b.until
	}
	var ps []string
	if in.Port != "" && in.PortB != "" {
		ps = []string{string(in.Port)}
		if in.PortB != in.Port {
			ps = append(ps, string(in.PortB))
		}
	}
	return ps, hull, nil
}

// sideIn is one side as compare_captures resolved it.
type sideIn struct {
	name string // a or b
	port string // empty: every port
	sp   span
}

// spanPort resolves a port argument that names one SPAN port (a live one
// or an opened capture), refusing an unknown one with the list.
func spanPort(c *call, arg string, p portArg) (string, error) {
	if p == "" {
		return "", nil
	}
	var names []string
	for _, st := range c.d.Ports.Snapshot() {
		if st.Kind == portKindEthernet {
			names = append(names, st.Name)
		}
	}
	if slices.Contains(names, string(p)) {
		return string(p), nil
	}
	have := "this box has no " + portKindEthernet + " port"
	if len(names) > 0 {
		have = portKindEthernet + " ports are: " + strings.Join(names, ", ")
	}
	return "", argErr(arg, "capture_status lists every port; open_capture adds a capture file as one; omit "+arg+" for every port", "no %s port %q; %s", portKindEthernet, p, have)
}

// sideOf chooses one side's dialogs and streams from the snapshots: by
// window (a dialog's first message, a stream's first packet) and, for a
// named port, by the Call-IDs that port's frame ring carried in it.
func sideOf(c *call, s sideIn, sn *sip.Snapshot, streams []rtp.StreamView) (sipcompare.Side, error) {
	inWindow := func(d *sip.Dialog) bool { return s.sp.holds(d.Created) }
	keep := inWindow
	if s.port != "" {
		byID := map[string]bool{}
		for _, d := range sn.Dialogs {
			if inWindow(d) {
				byID[d.CallID] = true
			}
		}
		pc, err := c.d.SIPExport.PortCallIDs(c.ctx, s.port, s.sp.since, s.sp.until, func(id string) bool { return byID[id] })
		if err != nil {
			return sipcompare.Side{}, err
		}
		if pc.Cut {
			c.warnf("side %s: the scan of %s stopped after %d frames at %s: later dialogs of the window are not on this side; narrow since_%s/until_%s", s.name, s.port, pc.Frames, ts(pc.CutAt), s.name, s.name)
		}
		if !pc.RingFrom.IsZero() && anyDialogBefore(sn.Dialogs, inWindow, pc.RingFrom) {
			c.warnf("side %s: %s's frame ring holds frames from %s only: dialogs of the window before then are not on this side", s.name, s.port, ts(pc.RingFrom))
		}
		keep = func(d *sip.Dialog) bool { return pc.CallIDs[d.CallID] }
	}
	if s.port == "" && s.sp == (span{}) {
		keep = nil // every dialog
	}
	part, lo, together := dialogsIn(sn.Dialogs, keep)
	side := sipcompare.Side{Dialogs: part}
	if together {
		// A run of the snapshot's dialogs: counted and measured from its
		// columns.
		hi := lo + len(part)
		side.Count = func(dim string) []sip.Bucket { return sn.AggregateRows(lo, hi, dim, math.MaxInt).Buckets }
		side.Metrics = func() sip.CallMetrics { return sn.MetricsRows(lo, hi) }
	}
	unattributed := 0
	// A port's side takes the streams of its dialogs; a side of every
	// port, every stream of the window (no set of its Call-IDs to make:
	// at 100,000 dialogs a fifth of the call).
	var ids map[string]bool
	if s.port != "" {
		ids = make(map[string]bool, len(side.Dialogs))
		for _, d := range side.Dialogs {
			ids[d.CallID] = true
		}
	}
	for _, st := range streams {
		switch {
		case !s.sp.holds(st.First):
		case s.port == "" || ids[st.CallID]:
			side.Streams = append(side.Streams, st)
		default:
			unattributed++
		}
	}
	if unattributed > 0 {
		c.warnf("side %s: %d streams of the window are left out: they belong to no SIP dialog of port %s (heuristic streams, MGCP calls)", s.name, unattributed, s.port)
	}
	return side, nil
}

// dialogsIn is the dialogs of ds that in keeps (every one when in is
// nil): a part of ds itself when they lie together (dialogs come in the
// order they began, so a window of time usually does), from lo, with
// together true; else a copy sized to them. Compare only reads a side's
// dialogs; a part of ds has no room to append into it (a copy of every
// dialog was 4 MB a side at 100,000).
func dialogsIn(ds []*sip.Dialog, in func(*sip.Dialog) bool) (part []*sip.Dialog, lo int, together bool) {
	if in == nil {
		return slices.Clip(ds), 0, true
	}
	first, last, n := 0, -1, 0
	for i, d := range ds {
		if i%tailWarmBlock == 0 {
			warmCreated(ds[i:min(i+tailWarmBlock, len(ds))])
		}
		if in(d) {
			if n == 0 {
				first = i
			}
			last, n = i, n+1
		}
	}
	if n == last-first+1 {
		return ds[first : last+1 : last+1], first, true
	}
	out := make([]*sip.Dialog, 0, n)
	for _, d := range ds[first : last+1] {
		if in(d) {
			out = append(out, d)
		}
	}
	return out, 0, false
}

// anyDialogBefore reports whether some dialog keep chooses began
// before t.
func anyDialogBefore(ds []*sip.Dialog, keep func(*sip.Dialog) bool, t time.Time) bool {
	return slices.ContainsFunc(ds, func(d *sip.Dialog) bool { return keep(d) && d.Created.Before(t) })
}

var compareCaptures = tool[compareCapturesIn, page[compareRow]]{
	name:  "compare_captures",
	reads: readsSIP | readsMedia | readsFrames,
	desc: "Before/after of two sides (each a time window, a SPAN port, or an opened capture): dialogs by method, final codes, ASR, NER, PDD, ACD, RTP streams by MOS band, " +
		"top endpoints and User-Agents, each with before, after, change and relative change, ranked by movement; a figure whose population is under min_population on either side is listed, unranked, as too few. Paged.",
	hints: readOnly(),
	ids:   []string{"metric", "key", "text"},
	text:  []textSource{textSIP},
	run: func(c *call, in compareCapturesIn) (page[compareRow], error) {
		var sides [2]sideIn
		for i, s := range []struct {
			name, arg    string
			port         portArg
			since, until timeArg
		}{{"a", "port", in.Port, in.SinceA, in.UntilA}, {"b", "port_b", in.PortB, in.SinceB, in.UntilB}} {
			p, err := spanPort(c, s.arg, s.port)
			if err != nil {
				return page[compareRow]{}, err
			}
			sp, err := sideSpan(s.since, s.until, s.name)
			if err != nil {
				return page[compareRow]{}, err
			}
			sides[i] = sideIn{name: s.name, port: p, sp: sp}
		}
		if sides[0].port == sides[1].port && sides[0].sp == sides[1].sp {
			c.warnf("both sides are the same dialogs: give since_a/until_a and since_b/until_b, or port and port_b")
		}
		sn, streams := c.d.SIP.Snapshot(), c.d.Media.Streams(false)
		var got [2]sipcompare.Side
		for i, s := range sides {
			c.progress(float64(i), 2, "choosing side "+s.name)
			side, err := sideOf(c, s, sn, streams)
			if err != nil {
				return page[compareRow]{}, err
			}
			got[i] = side
		}
		o := sipcompare.Options{Top: int(in.Top)}
		if in.MinPopulation != nil {
			o.MinPopulation = int(*in.MinPopulation)
		}
		cmp := sipcompare.Compare(got[0], got[1], o)
		for _, cut := range cmp.Cut {
			bound := "top"
			if cut.Family == sipcompare.FamilyMethod || cut.Family == sipcompare.FamilyFinalCode {
				bound = fmt.Sprint(sipcompare.MaxCategories)
			}
			c.warnf("%s: %d more values %s are past the bound (%s a side) and not compared", cut.Family, cut.Values, cut.Side, bound)
		}
		rows := make([]compareRow, len(cmp.Rows))
		for i, r := range cmp.Rows {
			rows[i] = compareRowOf(i, r)
		}
		return pageSlice(c, in.Paging, rows, func(r compareRow) rowKey { return key1(uint64(r.order)) })
	},
}
