package j1939

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"fieldtap/services/canbus"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// The numbers in this file come from testdata/j1939_window.py (stdlib
// python3: its own log reader, id split and TP reassembly), run once per
// file as the comments say, e.g.
//
//	python3 services/j1939/testdata/j1939_window.py topology ../shared/testdata/can/j1939atk_normal.log

func loadPort(t *testing.T, file string) *canbus.Port {
	t.Helper()
	p, _ := canbustest.Load(t, refdata.File(t, "can", file), "can0")
	return p
}

func TestTopologyReference(t *testing.T) {
	tests := []struct {
		file                  string
		nodes, frames         int
		requestEdges, reqs    int
		transferEdges, annces int
		// requests lists every request edge as from, to, PGN, count.
		requests [][4]int
	}{
		// topology j1939atk_normal.log: nodes=6 frames=19957 request_edges=6 requests=13 transfer_edges=4 announcements=44
		{file: "j1939atk_normal.log", nodes: 6, frames: 19957, requestEdges: 6, reqs: 13, transferEdges: 4, annces: 44},
		// topology canarchy_j1939_map.candump: request 0->3 pgn 65024 x1, transfer_edges=1 announcements=1
		{file: "canarchy_j1939_map.candump", nodes: 2, frames: 9, requestEdges: 1, reqs: 1, transferEdges: 1, annces: 1,
			requests: [][4]int{{0, 3, 65024, 1}}},
		// topology cytr_candump-MaxxForceResourceExhaustion.log: nodes=253 request_edges=1 requests=43 transfer_edges=99 announcements=107
		{file: "cytr_candump-MaxxForceResourceExhaustion.log", nodes: 253, frames: 29636, requestEdges: 1, reqs: 43, transferEdges: 99, annces: 107},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := loadPort(t, tc.file)
			top := TopologyOf("can0", p.Frames(), Window{}, nil)
			frames := 0
			for _, n := range top.Nodes {
				frames += n.Frames
			}
			var reqE, reqs, tpE, annc int
			var got [][4]int
			for _, e := range top.Edges {
				switch e.Kind {
				case EdgeRequest:
					reqE++
					reqs += e.Count
					got = append(got, [4]int{e.From, e.To, int(e.PGN), e.Count})
				case EdgeBAM, EdgeRTS:
					tpE++
					annc += e.Count
					if e.Complete+e.Incomplete != e.Count {
						t.Errorf("edge %+v: outcomes do not add up", e)
					}
				}
			}
			if len(top.Nodes) != tc.nodes || frames != tc.frames || reqE != tc.requestEdges || reqs != tc.reqs || tpE != tc.transferEdges || annc != tc.annces || top.EdgeOverflow != 0 {
				t.Errorf("nodes %d frames %d, request edges %d (%d requests), transfer edges %d (%d announcements), overflow %d",
					len(top.Nodes), frames, reqE, reqs, tpE, annc, top.EdgeOverflow)
			}
			if tc.requests != nil && !slices.Equal(got, tc.requests) {
				t.Errorf("request edges %v, want %v", got, tc.requests)
			}
		})
	}
}

func TestTopologyNames(t *testing.T) {
	p := loadPort(t, "canarchy_j1939_map.candump")
	top := TopologyOf("can0", p.Frames(), Window{}, nil)
	// GROUND_TRUTH.json: SA 0 NAME 4523810C00820090, SA 3 CDAB001900030010.
	want := map[int]string{0: "4523810C00820090", 3: "CDAB001900030010"}
	for _, n := range top.Nodes {
		if n.Name == nil || n.Name.Hex != want[n.SA] || !n.NameInScope {
			t.Errorf("node %d name %+v, want %s", n.SA, n.Name, want[n.SA])
		}
	}
	fill := func(sa uint8) *Name { nm, _ := ParseName([]byte{1, 2, 3, 4, 5, 6, 7, 8}); return &nm }
	top = TopologyOf("can0", p.Frames(), Window{Until: top.Span.From}, fill)
	if len(top.Nodes) != 0 || top.Span.Frames != 0 {
		t.Errorf("an empty window has nodes %+v", top.Nodes)
	}
}

func TestSPNHistoryReference(t *testing.T) {
	// history j1939atk_normal.log:
	//   sa=0 valid=1499 invalid=0 min=1147.25 max=1786.125 last=1526.375 sum=2179116.5
	const valid, lo, hi, last, sum = 1499, 1147.25, 1786.125, 1526.375, 2179116.5
	p := loadPort(t, "j1939atk_normal.log")
	h, err := SPNHistory("can0", p.Frames(), HistoryQuery{SPN: 190, Buckets: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Sources) != 1 {
		t.Fatalf("sources %+v", h.Sources)
	}
	s := h.Sources[0]
	if s.SA != 0 || s.Valid != valid || s.Messages != valid || *s.Min != lo || *s.Max != hi || *s.Last != last ||
		math.Abs(*s.Mean-sum/valid) > 1e-6 {
		t.Errorf("SA 0 history %+v min %v max %v last %v mean %v", s, *s.Min, *s.Max, *s.Last, *s.Mean)
	}
	n := 0
	for _, b := range s.Series {
		n += b.Samples
		if b.Samples > 0 && (*b.Min < lo || *b.Max > hi) {
			t.Errorf("bucket %+v outside the whole range", b)
		}
	}
	if len(s.Series) != 30 || n != valid || h.BucketMethod != BucketMethod || h.BucketWidth == nil {
		t.Errorf("%d buckets hold %d samples, method %q", len(s.Series), n, h.BucketMethod)
	}
	if _, err := SPNHistory("can0", p.Frames(), HistoryQuery{SPN: 999999}, nil); err == nil {
		t.Error("an unknown SPN was accepted")
	}
	if _, err := SPNHistory("can0", p.Frames(), HistoryQuery{SPN: 190, Buckets: MaxHistoryBuckets + 1}, nil); err == nil {
		t.Error("too many buckets accepted")
	}
}

func TestDiagnosticsReference(t *testing.T) {
	tests := []struct {
		file string
		// dm1 FILE: appeared and gone DTCs per SA, in the DM1 list.
		appeared, gone map[int]int
	}{
		// dm1 j1939atk_normal.log: sa=0 appeared=3, sa=49 appeared=4 gone=4
		{file: "j1939atk_normal.log", appeared: map[int]int{0: 3, 49: 4}, gone: map[int]int{49: 4}},
		// dm1 j1939atk_address_claim_attack.log: sa=0 appeared=3, sa=3 appeared=2, sa=49 appeared=1
		{file: "j1939atk_address_claim_attack.log", appeared: map[int]int{0: 3, 3: 2, 49: 1}, gone: map[int]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := loadPort(t, tc.file)
			d := DiagnosticsOf("can0", p.Frames(), Window{}, nil)
			appeared, gone := map[int]int{}, map[int]int{}
			for _, c := range d.Changes {
				if c.List != "DM1" {
					t.Fatalf("change %+v: no DM2 in these logs", c)
				}
				if c.Change == "appeared" {
					appeared[c.SA]++
				} else {
					gone[c.SA]++
				}
			}
			if !mapsEqual(appeared, tc.appeared) || !mapsEqual(gone, tc.gone) || d.ChangesTotal != len(d.Changes) {
				t.Errorf("appeared %v gone %v, want %v %v", appeared, gone, tc.appeared, tc.gone)
			}
			if len(d.Clears) != 0 {
				t.Errorf("clears %+v in a log without DM3/DM11", d.Clears)
			}
		})
	}
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCompareReference(t *testing.T) {
	tests := []struct {
		a, b                         string
		new, vanished, changed, same int
		idsNew, idsVanished          int
		sourcesNew, sourcesVanished  []int
	}{
		// compare cytr_candump-2021-10-14_234124.log j1939atk_normal.log
		{a: "cytr_candump-2021-10-14_234124.log", b: "j1939atk_normal.log", new: 67, vanished: 12, changed: 5, same: 18,
			idsNew: 70, idsVanished: 15, sourcesNew: []int{3, 5, 11, 41, 49}, sourcesVanished: []int{15}},
		// compare j1939atk_normal.log j1939atk_address_claim_attack.log
		{a: "j1939atk_normal.log", b: "j1939atk_address_claim_attack.log", new: 5, vanished: 5, changed: 57, same: 28,
			idsNew: 5, idsVanished: 5, sourcesNew: []int{254}, sourcesVanished: []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			pa, pb := loadPort(t, tc.a), loadPort(t, tc.b)
			c := Compare(Side{Port: "a", Frames: pa.Frames()}, Side{Port: "b", Frames: pb.Frames()})
			if c.New != tc.new || c.Vanished != tc.vanished || c.Changed != tc.changed || c.Same != tc.same {
				t.Errorf("pairs new %d vanished %d changed %d same %d", c.New, c.Vanished, c.Changed, c.Same)
			}
			if c.IDsNewTotal != tc.idsNew || c.IDsVanishedTotal != tc.idsVanished || len(c.IDsNew) != tc.idsNew {
				t.Errorf("ids new %d vanished %d", c.IDsNewTotal, c.IDsVanishedTotal)
			}
			if !slices.Equal(c.SourcesNew, tc.sourcesNew) || !slices.Equal(c.SourcesVanished, tc.sourcesVanished) {
				t.Errorf("sources new %v vanished %v", c.SourcesNew, c.SourcesVanished)
			}
		})
	}
	// A capture against itself: nothing new, nothing gone, every rate the same.
	p := loadPort(t, "j1939atk_normal.log")
	c := Compare(Side{Port: "a", Frames: p.Frames()}, Side{Port: "a", Frames: p.Frames()})
	if c.New+c.Vanished+c.Changed != 0 || len(c.DTCs) != 0 || c.IDsNewTotal+c.IDsVanishedTotal != 0 {
		t.Errorf("self comparison %+v", c)
	}
	// The DM1 of SA 0 in the 2021 truck (20 DTCs) against the research
	// truck's (SPN 84, 191, 5357): GROUND_TRUTH.json's lists.
	pa := loadPort(t, "cytr_candump-2021-10-14_234124.log")
	c = Compare(Side{Port: "a", Frames: pa.Frames()}, Side{Port: "b", Frames: p.Frames()})
	by := map[string]int{}
	for _, d := range c.DTCs {
		if d.SA == 0 {
			by[d.Change]++
		}
	}
	if by["gone"] != 20 || by["new"] != 3 {
		t.Errorf("SA 0 DTC changes %v, want 20 gone and 3 new", by)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}
