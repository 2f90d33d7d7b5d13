package trunk

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
	"time"

	"fieldtap/services/netdecode"
)

// Default bounds.
const (
	// DefaultMaxFlows bounds the flows a Table holds: a site's trunks and
	// phones over TCP are tens to a few thousand connections.
	DefaultMaxFlows = 4096
	// SIPPort and SIPSPort are SIP's well-known ports (RFC 3261 §19.1.2).
	SIPPort  = 5060
	SIPSPort = 5061
)

// Options bound a Table; zero fields take the defaults.
type Options struct {
	MaxFlows int
	// SIPSPorts are the TCP ports whose flows are read as TLS; nil takes
	// SIPSPort alone. Their flows and SIPPort's are tracked.
	SIPSPorts []uint16
}

// Flow is one TCP connection on a SIP port as the Table saw it.
type Flow struct {
	ID             uint64 // in order of first segment, from 1
	Client, Server netip.AddrPort
	// ClientKnown says the client was told by its SYN; otherwise the
	// side on a SIP port is taken for the server.
	ClientKnown bool
	First, Last time.Time
	// Client and server sides' segment analysis (tcp.go).
	FromClient, FromServer TCPCounts
	// IRTT is the round trip of the three-way handshake; 0 when it was
	// not seen.
	IRTT time.Duration
	Fin  bool // a FIN was seen
	// Reset reports an RST, from either side; ResetBeforeHandshake one
	// before the TLS handshake completed.
	Reset, ResetBeforeHandshake bool
	// TLS is what the clear handshake showed; nil for a flow on no SIPS
	// port.
	TLS *TLSState
}

// Stats count the table as a whole.
type Stats struct {
	Flows   int    // held now
	Created uint64 // flows ever tracked
	// Evicted are flows dropped, least recently seen first, to keep
	// MaxFlows: their figures are gone.
	Evicted  uint64
	MaxFlows int
}

// Outcome is a TLS flow's handshake outcome: completed, alert (an alert
// before completion), reset (an RST before completion) or incomplete
// (none of those yet, or the flow was seen from the middle).
func (f *Flow) Outcome() string {
	switch t := f.TLS; {
	case t == nil:
		return ""
	case t.Completed():
		return "completed"
	case len(t.Alerts) > 0:
		return "alert"
	case f.ResetBeforeHandshake:
		return "reset"
	}
	return "incomplete"
}

type flowKey struct{ a, b netip.AddrPort } // a sorts before b

func keyOf(x, y netip.AddrPort) flowKey {
	if y.Compare(x) < 0 {
		x, y = y, x
	}
	return flowKey{x, y}
}

// flow is a Flow with its sequence state.
type flow struct {
	Flow
	dirs   [2]direction // client to server, server to client
	synAt  time.Time    // the client's SYN
	synAck bool
}

// Table holds the flows. Segment and TLS run on the decoder's goroutine;
// Flows and Stats may be called from any.
type Table struct {
	opt   Options
	ports map[uint16]bool // SIP and SIPS ports
	sips  map[uint16]bool

	mu      sync.Mutex
	flows   map[flowKey]*flow
	created uint64
	evicted uint64
}

// New returns an empty table.
func New(o Options) *Table {
	if o.MaxFlows <= 0 {
		o.MaxFlows = DefaultMaxFlows
	}
	if o.SIPSPorts == nil {
		o.SIPSPorts = []uint16{SIPSPort}
	}
	t := &Table{opt: o, ports: map[uint16]bool{SIPPort: true}, sips: map[uint16]bool{}, flows: map[flowKey]*flow{}}
	for _, p := range o.SIPSPorts {
		t.ports[p], t.sips[p] = true, true
	}
	return t
}

// Segment implements sip.TCPHook: it counts a segment of a flow on a SIP
// or SIPS port and ignores the rest.
func (t *Table) Segment(g netdecode.Segment) {
	if !t.ports[g.Src.Port()] && !t.ports[g.Dst.Port()] {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.flows[keyOf(g.Src, g.Dst)]
	if f == nil {
		f = t.open(g)
	}
	f.Last = g.Time
	fromClient := g.Src == f.Client
	fwd, rev := &f.dirs[0], &f.dirs[1]
	if !fromClient {
		fwd, rev = rev, fwd
	}
	syn, ack := g.Flags&netdecode.FlagSYN != 0, g.Flags&netdecode.FlagACK != 0
	switch {
	case syn && !ack && fromClient:
		f.synAt = g.Time
	case syn && ack && !fromClient:
		f.synAck = true
	case !syn && ack && fromClient && f.synAck && f.IRTT == 0 && !f.synAt.IsZero():
		f.IRTT = g.Time.Sub(f.synAt)
	}
	analyse(fwd, rev, g, f.IRTT)
	f.FromClient, f.FromServer = f.dirs[0].c, f.dirs[1].c
	if g.Flags&netdecode.FlagFIN != 0 {
		f.Fin = true
	}
	if g.Flags&netdecode.FlagRST != 0 {
		f.Reset = true
		if f.TLS != nil && !f.TLS.Completed() {
			f.ResetBeforeHandshake = true
		}
	}
}

// open starts tracking the flow of g, evicting the least recently seen
// flow when the table is full. t.mu is held.
func (t *Table) open(g netdecode.Segment) *flow {
	if len(t.flows) >= t.opt.MaxFlows {
		var oldK flowKey
		var old *flow
		for k, f := range t.flows {
			if old == nil || f.Last.Before(old.Last) {
				oldK, old = k, f
			}
		}
		delete(t.flows, oldK)
		t.evicted++
	}
	t.created++
	client, server, known := g.Src, g.Dst, false
	switch {
	case g.Flags&netdecode.FlagSYN != 0:
		known = true
		if g.Flags&netdecode.FlagACK != 0 { // the SYN was missed: this is the answer
			client, server = g.Dst, g.Src
		}
	case t.ports[g.Src.Port()] && !t.ports[g.Dst.Port()]:
		client, server = g.Dst, g.Src
	}
	f := &flow{Flow: Flow{ID: t.created, Client: client, Server: server, ClientKnown: known, First: g.Time}}
	if t.sips[server.Port()] {
		f.TLS = &TLSState{}
	}
	t.flows[keyOf(g.Src, g.Dst)] = f
	return f
}

// TLS implements sip.TCPHook: it parses the records of a TLS stream on a
// SIPS port and consumes everything else unread.
func (t *Table) TLS(s *netdecode.Stream, at time.Time, data []byte) int {
	if !t.sips[s.Src.Port()] && !t.sips[s.Dst.Port()] {
		return len(data)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.flows[keyOf(s.Src, s.Dst)]
	if f == nil || f.TLS == nil {
		return len(data) // evicted, or not a SIPS flow after all
	}
	return f.TLS.feed(s.Src == f.Server, s.Gaps, at, data)
}

// Flows returns a copy of every flow, oldest first, and the table's
// counts.
func (t *Table) Flows() ([]Flow, Stats) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Flow, 0, len(t.flows))
	for _, f := range t.flows {
		c := f.Flow
		if f.TLS != nil {
			ts := *f.TLS
			ts.Alerts = slices.Clone(ts.Alerts)
			if ts.Cert != nil {
				cert := *ts.Cert
				ts.Cert = &cert
			}
			c.TLS = &ts
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Flow) int { return cmp.Compare(a.ID, b.ID) })
	return out, Stats{Flows: len(t.flows), Created: t.created, Evicted: t.evicted, MaxFlows: t.opt.MaxFlows}
}
