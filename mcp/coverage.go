package mcp

import (
	"maps"
	"time"

	"fieldtap/services/coverage"
)

// Families of captured data a tool's answers read (services/coverage),
// for the tool values' reads field: the adapter builds every such
// answer's coverage block from them, so no tool reports coverage itself.
const (
	readsSIP      = coverage.SIP
	readsMedia    = coverage.Media
	readsFrames   = coverage.Frames
	readsCAN      = coverage.CAN
	readsJ1939    = coverage.J1939
	readsUDS      = coverage.UDS
	readsJ1708    = coverage.J1708
	readsRecorder = coverage.Recorder
	// readsNothing is a tool whose answers read no captured data (its
	// own vocabulary, a reference table, a DBC file, the box's state):
	// they carry no coverage block.
	readsNothing = coverage.Nothing
)

// coverageBlock is what an answer covers, as every answer of a tool that
// reads captured data carries it (docs/mcp-protocol.md, "Coverage"; the
// schema stays terse: it rides in every such tool's output schema).
type coverageBlock struct {
	Complete    bool            `json:"complete" jsonschema:"the window is whole (docs/mcp-protocol.md, Coverage); not that the source ended"`
	Window      coverageWindow  `json:"window"`
	Ports       []coveragePort  `json:"ports"`
	Stores      []coverageStore `json:"stores"`
	NotAnalysed []coverageCount `json:"not_analysed"`
	Suspensions []coverageCount `json:"suspensions"`
}

// coverageWindow is the times an answer covers whole; null before the
// ports read delivered a frame.
type coverageWindow struct {
	From *time.Time `json:"from"`
	To   *time.Time `json:"to"`
}

// coveragePort is one port an answer read: its state and since when,
// frames lost in the window by cause, restarts since the box started.
type coveragePort struct {
	Port         string            `json:"port"`
	Kind         string            `json:"kind"`
	State        string            `json:"state"`
	Since        *time.Time        `json:"since"`
	Lost         map[string]uint64 `json:"lost"`
	Restarts     uint64            `json:"restarts"`
	StoppedEarly string            `json:"stopped_early,omitempty"`
}

// coverageStore is one store an answer read: seen = held + evicted +
// refused, and the oldest time it still holds.
type coverageStore struct {
	Store   string     `json:"store"`
	Port    string     `json:"port,omitempty"`
	Seen    uint64     `json:"seen"`
	Held    uint64     `json:"held"`
	Evicted uint64     `json:"evicted"`
	Refused uint64     `json:"refused"`
	Oldest  *time.Time `json:"oldest"`
}

// coverageCount is traffic not analysed, or a suspension, by cause,
// counted since the port started.
type coverageCount struct {
	Cause string `json:"cause"`
	Port  string `json:"port,omitempty"`
	Count uint64 `json:"count"`
}

// portSelected is a tool's input that names one port (PortSelector).
type portSelected interface{ selectedPort() string }

func (p PortSelector) selectedPort() string { return string(p.Port) }

// windowed is a tool's input with a time window (window).
type windowed interface{ span() (span, error) }

// twoSided is a tool's input that reads more than one port or window (the
// two sides of a comparison): the ports it names (nil: every port) over
// the hull of its windows.
type twoSided interface {
	coverageScope() ([]string, span, error)
}

// coverageQuery is what a run over in read: the tool's families, the
// port it asked for, its window.
func coverageQuery[In any](reads coverage.Family, in In) coverage.Query {
	q := coverage.Query{Families: reads}
	if sc, ok := any(in).(twoSided); ok {
		if ps, s, err := sc.coverageScope(); err == nil {
			q.Ports, q.Since, q.Until = ps, s.since, s.until
		}
		return q
	}
	if p, ok := any(in).(portSelected); ok && p.selectedPort() != "" {
		q.Ports = []string{p.selectedPort()}
	}
	if w, ok := any(in).(windowed); ok {
		if s, err := w.span(); err == nil {
			q.Since, q.Until = s.since, s.until
		}
	}
	return q
}

// blockOf is the envelope's view of a report.
func blockOf(r coverage.Report) *coverageBlock {
	b := &coverageBlock{Complete: r.Complete, Window: coverageWindow{From: optTime(r.From), To: optTime(r.To)},
		Ports: make([]coveragePort, len(r.Ports)), Stores: make([]coverageStore, len(r.Stores)),
		NotAnalysed: counts(r.NotAnalysed), Suspensions: counts(r.Suspensions)}
	for i, p := range r.Ports {
		b.Ports[i] = coveragePort{Port: p.Name, Kind: p.Kind, State: p.State, Since: optTime(p.Since), Lost: maps.Clone(p.Lost),
			Restarts: p.Restarts, StoppedEarly: p.StoppedEarly}
		if b.Ports[i].Lost == nil {
			b.Ports[i].Lost = map[string]uint64{}
		}
	}
	for i, s := range r.Stores {
		b.Stores[i] = coverageStore{Store: s.Store, Port: s.Port, Seen: s.Seen, Held: s.Held, Evicted: s.Evicted, Refused: s.Refused, Oldest: optTime(s.Oldest)}
	}
	return b
}

func counts(cs []coverage.Cause) []coverageCount {
	out := make([]coverageCount, len(cs))
	for i, c := range cs {
		out[i] = coverageCount{Cause: c.Name, Port: c.Port, Count: c.Count}
	}
	return out
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
