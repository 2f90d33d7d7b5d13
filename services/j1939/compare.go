package j1939

import (
	"cmp"
	"math"
	"slices"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// Comparison bounds: the totals beside each list are always whole.
const (
	// MaxCompareKeys bounds the (PGN, SA) pairs and the CAN ids tallied
	// per side: a real bus has under 200, the attack logs ~400.
	MaxCompareKeys = 4096
	// MaxCompareRows bounds the rows listed, changes first.
	MaxCompareRows = 500
	// MaxCompareIDs bounds each list of new and vanished CAN ids.
	MaxCompareIDs = 256
	// RateChangeThreshold is the ratio beyond which a pair present in both
	// windows counts as "changed": 25 % faster or slower. Periodic J1939
	// messages keep their rate to a few percent.
	RateChangeThreshold = 1.25
	rateDigits          = 1e4
)

// Side is one of the two things compared: a window of a port's frames.
// Two captures are two ports (say file1 and file2).
type Side struct {
	Port   string
	Frames ring.Snapshot[canbus.Record]
	Window Window
}

// Rate is a (PGN, SA) pair's traffic on one side.
type Rate struct {
	Frames int
	// PerSecond is Frames over the side's span; nil when the span is 0.
	PerSecond *float64
}

// PGNChange is one (PGN, SA) pair compared.
type PGNChange struct {
	PGN  uint32
	Name string
	SA   int
	A    *Rate // nil: absent in A
	B    *Rate
	// Status: new (only in B), vanished (only in A), changed (rate moved
	// past RateChangeThreshold), same.
	Status string
	// Ratio is B's rate over A's; nil unless both have a rate.
	Ratio *float64
}

// DTCDiff is one DTC whose presence differs between the sides' last DM1
// (or DM2) of a source.
type DTCDiff struct {
	SA     int
	List   string // DM1 or DM2
	Change string // new (only in B), gone (only in A), occurrence (both, count moved)
	DTC    DTC
	// OCA and OCB are the occurrence counts on each side (nil: absent).
	OCA *int
	OCB *int
}

// Comparison is what changed from side A to side B.
type Comparison struct {
	SpanA Span
	SpanB Span
	// Counts over every pair, whatever the list shows.
	New           int
	Vanished      int
	Changed       int
	Same          int
	Rows          []PGNChange
	RowsTruncated bool
	// IDsNew and IDsVanished are CAN ids (11- and 29-bit) seen on one
	// side only, in hex.
	IDsNew            []string
	IDsVanished       []string
	IDsNewTotal       int
	IDsVanishedTotal  int
	SourcesNew        []int
	SourcesVanished   []int
	DTCs              []DTCDiff
	KeyOverflowA      int // frames whose pair found the side's table full
	KeyOverflowB      int
	RateChangeTrigger float64
}

type pgnSA struct {
	pgn uint32
	sa  uint8
}

type sideStats struct {
	span     Span
	pairs    map[pgnSA]int
	ids      map[uint32]int
	overflow int
	lists    [2][256]*DTCList
}

func scanSide(s Side) *sideStats {
	st := &sideStats{pairs: map[pgnSA]int{}, ids: map[uint32]int{}}
	var dm DM
	sc := scanner{
		onFrame: func(_ uint64, r *canbus.Record) {
			if _, ok := st.ids[r.ID]; ok || len(st.ids) < MaxCompareKeys {
				st.ids[r.ID]++
			} else {
				st.overflow++
			}
		},
		onMessage: func(seq uint64, m *Message) {
			if m.Via == ViaDirect {
				k := pgnSA{m.ID.PGN, m.ID.SA}
				if _, ok := st.pairs[k]; ok || len(st.pairs) < MaxCompareKeys {
					st.pairs[k]++
				} else {
					st.overflow++
				}
			}
			if (m.ID.PGN == PGNDM1 || m.ID.PGN == PGNDM2) && ParseDM(m.Data, &dm) {
				st.lists[kindListPGN(m.ID.PGN)][m.ID.SA] = &DTCList{Seq: seq, Time: m.Time, Via: m.Via.String(), Lamps: dm.Lamps, NoActive: dm.NoActive, DTCs: realDTCs(dm)}
			}
		},
	}
	st.span = sc.run(s.Port, s.Frames, s.Window)
	return st
}

func kindListPGN(pgn uint32) int {
	if pgn == PGNDM2 {
		return 1
	}
	return 0
}

// Compare scans both sides and reports, per (PGN, SA), the rates and
// what is new, vanished or changed; the CAN ids and source addresses seen
// on one side only; and the DTCs that differ between the last DM1 (and
// DM2) of each source.
func Compare(a, b Side) Comparison {
	sa, sb := scanSide(a), scanSide(b)
	out := Comparison{SpanA: sa.span, SpanB: sb.span, Rows: []PGNChange{}, IDsNew: []string{}, IDsVanished: []string{},
		SourcesNew: []int{}, SourcesVanished: []int{}, DTCs: []DTCDiff{}, KeyOverflowA: sa.overflow, KeyOverflowB: sb.overflow,
		RateChangeTrigger: RateChangeThreshold}
	keys := map[pgnSA]bool{}
	for k := range sa.pairs {
		keys[k] = true
	}
	for k := range sb.pairs {
		keys[k] = true
	}
	var rows []PGNChange
	var srcA, srcB [256]bool
	for k := range keys {
		r := PGNChange{PGN: k.pgn, Name: PGNName(k.pgn), SA: int(k.sa)}
		na, inA := sa.pairs[k]
		nb, inB := sb.pairs[k]
		if inA {
			r.A = rate(na, sa.span)
			srcA[k.sa] = true
		}
		if inB {
			r.B = rate(nb, sb.span)
			srcB[k.sa] = true
		}
		switch {
		case !inA:
			r.Status = "new"
			out.New++
		case !inB:
			r.Status = "vanished"
			out.Vanished++
		default:
			r.Status = "same"
			if r.A.PerSecond != nil && r.B.PerSecond != nil && *r.A.PerSecond > 0 {
				ratio := math.Round(*r.B.PerSecond / *r.A.PerSecond * rateDigits) / rateDigits
				r.Ratio = &ratio
				if ratio >= RateChangeThreshold || ratio <= 1/RateChangeThreshold {
					r.Status = "changed"
				}
			}
			if r.Status == "changed" {
				out.Changed++
			} else {
				out.Same++
			}
		}
		rows = append(rows, r)
	}
	order := map[string]int{"new": 0, "vanished": 1, "changed": 2, "same": 3}
	slices.SortFunc(rows, func(x, y PGNChange) int {
		return cmp.Or(cmp.Compare(order[x.Status], order[y.Status]), cmp.Compare(x.PGN, y.PGN), cmp.Compare(x.SA, y.SA))
	})
	if len(rows) > MaxCompareRows {
		rows, out.RowsTruncated = rows[:MaxCompareRows], true
	}
	out.Rows = rows
	for sa := range 256 {
		switch {
		case srcB[sa] && !srcA[sa]:
			out.SourcesNew = append(out.SourcesNew, sa)
		case srcA[sa] && !srcB[sa]:
			out.SourcesVanished = append(out.SourcesVanished, sa)
		}
	}
	out.IDsNew, out.IDsNewTotal = onlyIn(sb.ids, sa.ids)
	out.IDsVanished, out.IDsVanishedTotal = onlyIn(sa.ids, sb.ids)
	for k, name := range [2]string{"DM1", "DM2"} {
		for src := range 256 {
			out.DTCs = append(out.DTCs, dtcDiff(src, name, sa.lists[k][src], sb.lists[k][src])...)
		}
	}
	return out
}

func rate(n int, sp Span) *Rate {
	r := &Rate{Frames: n}
	if sp.Seconds != nil {
		v := math.Round(float64(n) / *sp.Seconds * rateDigits) / rateDigits
		r.PerSecond = &v
	}
	return r
}

// onlyIn lists the ids of a missing from b, sorted, at most MaxCompareIDs.
func onlyIn(a, b map[uint32]int) ([]string, int) {
	var ids []uint32
	for id := range a {
		if _, ok := b[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(x, y uint32) int { return cmp.Compare(wire.CANID(x), wire.CANID(y)) })
	out := make([]string, 0, min(len(ids), MaxCompareIDs))
	for _, id := range ids[:min(len(ids), MaxCompareIDs)] {
		out = append(out, wire.FormatCANID(id))
	}
	return out, len(ids)
}

func dtcDiff(sa int, list string, a, b *DTCList) []DTCDiff {
	var da, db []DTC
	if a != nil {
		da = a.DTCs
	}
	if b != nil {
		db = b.DTCs
	}
	var out []DTCDiff
	oc := func(d DTC) *int { v := int(d.OC); return &v }
	for _, d := range da {
		i := slices.IndexFunc(db, func(e DTC) bool { return e.SPN == d.SPN && e.FMI == d.FMI })
		switch {
		case i < 0:
			out = append(out, DTCDiff{SA: sa, List: list, Change: "gone", DTC: d, OCA: oc(d)})
		case db[i].OC != d.OC:
			out = append(out, DTCDiff{SA: sa, List: list, Change: "occurrence", DTC: db[i], OCA: oc(d), OCB: oc(db[i])})
		}
	}
	for _, d := range db {
		if !slices.ContainsFunc(da, func(e DTC) bool { return e.SPN == d.SPN && e.FMI == d.FMI }) {
			out = append(out, DTCDiff{SA: sa, List: list, Change: "new", DTC: d, OCB: oc(d)})
		}
	}
	return out
}
