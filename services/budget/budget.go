package budget

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Store names, as capture_status shows them.
const (
	Frames        = "frames"         // per Ethernet port: raw frames for export (services/framestore)
	SIPDialogs    = "sip_dialogs"    // shared by Ethernet ports: dialog summaries
	SIPMessages   = "sip_messages"   // shared by Ethernet ports: raw SIP messages
	RTP           = "rtp"            // shared by Ethernet ports: media streams and their intervals
	CANFrames     = "can_frames"     // per CAN port: the frame ring
	CANTables     = "can_tables"     // per CAN port: id table and load history (fixed bounds)
	J1939Samples  = "j1939_samples"  // shared by CAN ports: SPN time series
	J1939Sessions = "j1939_sessions" // shared by CAN ports: ended TP sessions
	J1939Tables   = "j1939_tables"   // per CAN port: ECU, PGN and latest tables (fixed bounds)
	J1708Messages = "j1708_messages" // per J1708 port: the message ring
	J1708Tables   = "j1708_tables"   // per J1708 port: latest, fault and reassembly tables (fixed bounds)
	UDS           = "uds"            // shared by CAN ports: UDS transactions and incomplete transfers (bounded by count)
	UDSChannels   = "uds_channels"   // per CAN port: ISO-TP reassembly of every tracked channel (fixed bounds)
	Recorder      = "recorder"       // the recorder's pending and write buffers (recorder.pending_bytes, two)
	KernelRing    = "kernel_ring"    // per AF_PACKET port: the TPACKET_V3 ring, outside the Go heap
	Handoff       = "handoff"        // per port: frames queued between a driver and its analysers
	Connections   = "connections"    // the HTTP listeners' open connections together (mcp/front's pool)
)

// Budget bounds.
const (
	// StoreFraction of the budget goes to stores; the rest is the
	// runtime's (~10 MiB idle), the MCP answers' and the collector's. The
	// collector runs about once per (budget − live heap) of allocation,
	// each time marking the live heap: on the 800 000-message capture of
	// docs/benchmarks.md, a half made it run back to back (63 cycles, a
	// quarter of the CPU), 0.4 halves the cycles at a fifth less store.
	StoreFraction = 0.4
	// MinShare is the least a weighted store may get: below it a store
	// keeps too little to answer anything useful (64 KiB is ~1 300 CAN
	// frames or ~60 SIP messages).
	MinShare = 64 << 10
	// MinBudget refuses budgets the runtime alone would fill (an idle
	// fieldtapd holds about 15 MiB).
	MinBudget = 32 << 20
)

// Request is one store instance asking for memory.
type Request struct {
	Store string // one of the names above
	Port  string // the port it belongs to; "" for a store several ports feed
	// Weight is the store's relative share of what the pool has left once
	// fixed costs are taken; 0 with Fixed set.
	Weight int
	// Fixed is a bound that is not derived: an operator's explicit
	// setting or a cost the store cannot shrink (a kernel ring, a table
	// bounded by the protocol). Why says where it comes from.
	Fixed int64
	Why   string
}

// Share is one store instance's bound.
type Share struct {
	Store string
	Port  string
	Bytes int64
	Fixed bool
	Why   string // for a fixed share, where it comes from
}

// Plan is the budget divided.
type Plan struct {
	Budget int64
	From   string // where the budget came from ("board profile sim", "memory_limit_mib")
	Pool   int64  // StoreFraction of Budget
	Shares []Share
}

// Divide shares budget among reqs: fixed requests take what they ask,
// weighted ones split the rest of the pool by weight. It refuses, naming
// every figure, when the fixed requests alone do not leave each weighted
// store MinShare.
func Divide(budget int64, from string, reqs []Request) (Plan, error) {
	if budget < MinBudget {
		return Plan{}, fmt.Errorf("memory budget %s (%s) is below the %s fieldtapd needs to run at all", MiB(budget), from, MiB(MinBudget))
	}
	p := Plan{Budget: budget, From: from, Pool: int64(float64(budget) * StoreFraction)}
	var fixed int64
	weights := 0
	for _, r := range reqs {
		switch {
		case r.Fixed < 0 || r.Weight < 0 || (r.Fixed > 0) == (r.Weight > 0):
			return Plan{}, fmt.Errorf("budget: store %s %s: want a fixed size or a weight", r.Store, r.Port)
		case r.Fixed > 0:
			fixed += r.Fixed
		default:
			weights += r.Weight
		}
	}
	left := p.Pool - fixed
	weighted := len(reqs) - countFixed(reqs)
	if left < int64(weighted)*MinShare || left < 0 {
		return Plan{}, overBudget(p, reqs, fixed, weighted)
	}
	for _, r := range reqs {
		s := Share{Store: r.Store, Port: r.Port, Bytes: r.Fixed, Fixed: r.Fixed > 0, Why: r.Why}
		if !s.Fixed {
			s.Bytes = left * int64(r.Weight) / int64(weights)
		}
		p.Shares = append(p.Shares, s)
	}
	return p, nil
}

func countFixed(reqs []Request) int {
	n := 0
	for _, r := range reqs {
		if r.Fixed > 0 {
			n++
		}
	}
	return n
}

// ErrOverBudget is wrapped by Divide's refusal.
var ErrOverBudget = errors.New("the configured bounds do not fit the memory budget")

func overBudget(p Plan, reqs []Request, fixed int64, weighted int) error {
	var parts []string
	for _, r := range reqs {
		if r.Fixed > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", name(r.Store, r.Port), MiB(r.Fixed), r.Why))
		}
	}
	slices.Sort(parts)
	need := fixed + int64(weighted)*MinShare
	return fmt.Errorf("%w: fixed bounds %s sum to %s, and %d derived stores need at least %s each, %s in all, "+
		"but the stores' part of the %s budget (%s) is %s: lower those bounds or raise memory_limit_mib",
		ErrOverBudget, strings.Join(parts, " + "), MiB(fixed), weighted, MiB(MinShare), MiB(need),
		MiB(p.Budget), p.From, MiB(p.Pool))
}

func name(store, port string) string {
	if port == "" {
		return store
	}
	return store + "[" + port + "]"
}

// Share returns the bound of store for port ("" for a shared store), and
// whether the plan has one.
func (p Plan) Share(store, port string) (int64, bool) {
	for _, s := range p.Shares {
		if s.Store == store && s.Port == port {
			return s.Bytes, true
		}
	}
	return 0, false
}

// Sum is what every share adds up to.
func (p Plan) Sum() int64 {
	var n int64
	for _, s := range p.Shares {
		n += s.Bytes
	}
	return n
}

// Fraction is bytes as a share of the budget, rounded to three decimals.
func (p Plan) Fraction(bytes int64) float64 {
	if p.Budget <= 0 {
		return 0
	}
	return math.Round(float64(bytes)/float64(p.Budget)*1000) / 1000
}

// MiB formats a byte count in MiB with one decimal.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
