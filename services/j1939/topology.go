package j1939

import (
	"cmp"
	"slices"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// MaxTopologyEdges bounds the edges listed: (from, to, kind, PGN) keys are
// chosen by senders, and an attack announces transfers from 250 sources.
const MaxTopologyEdges = 2048

// Edge kinds.
const (
	EdgeRequest = "request" // a Request (PGN 59904) for PGN
	EdgeBAM     = "tp_bam"  // a broadcast transfer of PGN (to 255)
	EdgeRTS     = "tp_rts"  // a connection-mode transfer of PGN
)

// Node is one source address on the bus.
type Node struct {
	SA int
	// Name is the NAME it claimed (in the window, or before it when the
	// caller supplies names); nil when none is known.
	Name        *Name
	NameInScope bool
	Frames      int
	PGNs        int
	First       time.Time
	Last        time.Time
	// Conflicts counts claims in the window for this address with a NAME
	// other than the one it held.
	Conflicts int
}

// Edge is who talks to whom about what.
type Edge struct {
	From    int
	To      int // 255: every node (a broadcast)
	Kind    string
	PGN     uint32
	PGNName string
	Count   int
	// For transfers: how they ended.
	Complete   int
	Incomplete int
	First      time.Time
	Last       time.Time
}

// Topology is the bus as a graph over a window.
type Topology struct {
	Span  Span
	Nodes []Node
	Edges []Edge
	// EdgeOverflow counts events whose new edge found MaxTopologyEdges
	// edges already kept: they are in no edge.
	EdgeOverflow int
}

type edgeKey struct {
	from, to uint8
	kind     string
	pgn      uint32
}

// TopologyOf scans a window of a port's frames: each source address with
// its NAME, frame and PGN counts; requests and transport transfers as
// edges. names, if set, fills the NAME of a node that did not claim in
// the window (Store.NameOf).
func TopologyOf(port string, snap ring.Snapshot[canbus.Record], w Window, names func(sa uint8) *Name) Topology {
	var nodes [256]*Node
	var pgns [256]map[uint32]bool
	edges := map[edgeKey]*Edge{}
	overflow := 0
	edge := func(k edgeKey, t time.Time) *Edge {
		e := edges[k]
		if e == nil {
			if len(edges) >= MaxTopologyEdges {
				overflow++
				return nil
			}
			e = &Edge{From: int(k.from), To: int(k.to), Kind: k.kind, PGN: k.pgn, PGNName: PGNName(k.pgn), First: t}
			edges[k] = e
		}
		e.Last = t
		return e
	}
	sc := scanner{
		onMessage: func(_ uint64, m *Message) {
			if m.Via != ViaDirect {
				return
			}
			sa := m.ID.SA
			n := nodes[sa]
			if n == nil {
				n = &Node{SA: int(sa), First: m.Time}
				nodes[sa], pgns[sa] = n, map[uint32]bool{}
			}
			n.Frames++
			n.Last = m.Time
			pgns[sa][m.ID.PGN] = true
			switch m.ID.PGN {
			case PGNRequest:
				if pgn, ok := ParseRequest(m.Data); ok {
					if e := edge(edgeKey{sa, m.ID.DA, EdgeRequest, pgn}, m.Time); e != nil {
						e.Count++
					}
				}
			case PGNAddressClaim:
				if nm, ok := ParseName(m.Data); ok {
					if n.Name != nil && n.Name.Raw != nm.Raw {
						n.Conflicts++
					}
					n.Name, n.NameInScope = &nm, true
				}
			}
		},
		onSession: func(_ uint64, s Session) {
			kind := EdgeRTS
			if s.Kind == ViaBAM {
				kind = EdgeBAM
			}
			e := edge(edgeKey{s.SA, s.DA, kind, s.PGN}, s.End)
			if e == nil {
				return
			}
			e.Count++
			if s.Status == TPComplete {
				e.Complete++
			} else {
				e.Incomplete++
			}
			if e.First.After(s.Start) {
				e.First = s.Start
			}
		},
	}
	out := Topology{Nodes: []Node{}, Edges: []Edge{}}
	out.Span = sc.run(port, snap, w)
	for sa, n := range nodes {
		if n == nil {
			continue
		}
		n.PGNs = len(pgns[sa])
		if n.Name == nil && names != nil {
			n.Name = names(uint8(sa))
		}
		out.Nodes = append(out.Nodes, *n)
	}
	for _, e := range edges {
		out.Edges = append(out.Edges, *e)
	}
	slices.SortFunc(out.Edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.PGN, b.PGN))
	})
	out.EdgeOverflow = overflow
	return out
}
