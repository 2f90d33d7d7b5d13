package transmit

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/j1939"
)

// BusLookback is how far back a plan's bus check reads the record: J1939
// broadcasts repeat within 5 s and a tester's requests within seconds, so
// a minute sees every node that sends now.
const BusLookback = time.Minute

// ownEcho is how long after its last frame the box's own send may still
// come back through the capture path (SocketCAN loops sent frames back to
// every socket of the host): frames in that span are the box's, not
// another node's.
const ownEcho = time.Second

// ownWindows bounds the sends a port remembers to tell its own frames
// from other nodes'.
const ownWindows = 32

// Recorded is the box's record of a port's bus, which a plan's bus check
// reads. The daemon answers from its stores.
type Recorded interface {
	// Seen counts the frames received on port in [since, until) whose id
	// (flag bits included) match accepts and whose time skip does not
	// reject, and the last one's time.
	Seen(port string, since, until time.Time, match func(id uint32) bool, skip func(time.Time) bool) (n int, last time.Time)
	// Claimant names the node whose J1939 address claim holds sa on port,
	// "" when none does.
	Claimant(port string, sa uint8) string
	// LastAnswer is the last recorded answer on port, before until, to
	// the request e describes: when, and what it said.
	LastAnswer(port string, e *Expect, until time.Time) (time.Time, string, bool)
}

// Conflict kinds: a conflict blocks execution unless the caller overrides
// it with a reason.
const (
	ConflictIDInUse       = "id_in_use"              // another node sends a frame id of the plan
	ConflictSourceInUse   = "source_address_in_use"  // another node sends from the plan's J1939 source address
	ConflictSourceClaimed = "source_address_claimed" // a node's address claim holds the plan's source address
)

// BusCheck is what a plan's frames would meet on its bus, from what the
// box recorded before the plan was made; Execute checks again.
type BusCheck struct {
	// Checked is false when the box has no record of the port's bus;
	// Reason says why.
	Checked bool      `json:"checked"`
	Reason  string    `json:"reason,omitempty"`
	Since   time.Time `json:"since"`
	// Conflicts lists what another node already does with the plan's
	// identifiers; empty when none.
	Conflicts []Conflict `json:"conflicts"`
	// LoadNow is the bus's measured load over the last second and
	// LoadWithPlan that plus the plan's estimated added load; nil when
	// the port does not measure it.
	LoadNow      *float64 `json:"bus_load_now"`
	LoadWithPlan *float64 `json:"bus_load_with_plan"`
	// LastAnswer is the target's last recorded answer to the same
	// request, nil when none was recorded or the plan expects none.
	LastAnswer *LastAnswer `json:"last_answer"`
}

// Conflict is one identifier of the plan another node already uses.
type Conflict struct {
	Kind     string    `json:"kind"`
	ID       string    `json:"id,omitempty"`
	SA       string    `json:"sa,omitempty"`
	Frames   int       `json:"frames,omitempty"`
	LastSeen time.Time `json:"last_seen,omitzero"`
	Claimant string    `json:"claimant,omitempty"`
	Message  string    `json:"message"`
}

// LastAnswer is the target's last recorded answer to the plan's request.
type LastAnswer struct {
	Time    time.Time `json:"time"`
	Summary string    `json:"summary"`
}

// sends remembers when the box itself sent on a port.
type sends struct {
	mu   sync.Mutex
	wins [][2]time.Time
}

func (o *sends) add(from, to time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.wins) == ownWindows {
		o.wins = slices.Delete(o.wins, 0, 1)
	}
	o.wins = append(o.wins, [2]time.Time{from, to.Add(ownEcho)})
}

// own reports whether t falls in one of the box's own sends.
func (o *sends) own() func(time.Time) bool {
	o.mu.Lock()
	wins := slices.Clone(o.wins)
	o.mu.Unlock()
	return func(t time.Time) bool {
		for _, w := range wins {
			if !t.Before(w[0]) && !t.After(w[1]) {
				return true
			}
		}
		return false
	}
}

// checkBus reads the record for what the plan would meet on its bus.
func (s *Service) checkBus(ps *portState, medium Medium, frames []Frame, e *Expect, added *float64, now time.Time) BusCheck {
	bc := BusCheck{Since: now.Add(-BusLookback), Conflicts: []Conflict{}}
	if load, ok := s.busLoad(ps.Name); ok {
		l := round4(load)
		bc.LoadNow = &l
		if added != nil {
			w := round4(load + *added)
			bc.LoadWithPlan = &w
		}
	}
	switch {
	case medium != MediumCAN:
		bc.Reason = "the box keeps no per-identifier record of a " + string(medium) + " bus"
		return bc
	case s.o.Bus == nil:
		bc.Reason = "this box keeps no record of the bus"
		return bc
	}
	bc.Checked = true
	rec, own := s.o.Bus, ps.sent.own()
	var sas []uint8
	var ids []uint32
	for _, f := range frames {
		if f.ID&wire.CANEFF != 0 {
			if sa := uint8(f.ID); sa != j1939.AddrNull && sa != j1939.AddrGlobal && !slices.Contains(sas, sa) {
				sas = append(sas, sa)
			}
		} else if !slices.Contains(ids, f.ID) {
			ids = append(ids, f.ID)
		}
	}
	for _, sa := range sas {
		if who := rec.Claimant(ps.Name, sa); who != "" {
			bc.Conflicts = append(bc.Conflicts, Conflict{Kind: ConflictSourceClaimed, SA: fmt.Sprintf("0x%02X", sa), Claimant: who,
				Message: fmt.Sprintf("source address 0x%02X is claimed by %s: sending from it disturbs that node (choose another sa)", sa, who)})
		}
		n, last := rec.Seen(ps.Name, bc.Since, now, func(id uint32) bool { return id&wire.CANEFF != 0 && uint8(id) == sa }, own)
		if n > 0 {
			bc.Conflicts = append(bc.Conflicts, Conflict{Kind: ConflictSourceInUse, SA: fmt.Sprintf("0x%02X", sa), Frames: n, LastSeen: last,
				Message: fmt.Sprintf("another node sent %d frames from source address 0x%02X in the last %v, the last at %s: two nodes on one address corrupt each other's messages",
					n, sa, BusLookback, last.UTC().Format(time.RFC3339Nano))})
		}
	}
	for _, id := range ids {
		n, last := rec.Seen(ps.Name, bc.Since, now, func(got uint32) bool { return got&^(wire.CANRTR|wire.CANERR) == id }, own)
		if n > 0 {
			bc.Conflicts = append(bc.Conflicts, Conflict{Kind: ConflictIDInUse, ID: Frame{ID: id}.IDHex(), Frames: n, LastSeen: last,
				Message: fmt.Sprintf("another node sent %d frames with id %s in the last %v, the last at %s: two senders of one id corrupt each other's frames",
					n, Frame{ID: id}.IDHex(), BusLookback, last.UTC().Format(time.RFC3339Nano))})
		}
	}
	if e != nil {
		if t, what, ok := rec.LastAnswer(ps.Name, e, now); ok {
			bc.LastAnswer = &LastAnswer{Time: t, Summary: what}
		}
	}
	return bc
}

// conflictGate refuses a plan whose bus check, made again now, finds
// another node using its identifiers, unless the caller gave a reason.
func (s *Service) conflictGate(p *Plan, override string, now time.Time) (*Refusal, []Conflict) {
	ps := s.ports[p.Port]
	if ps == nil {
		return nil, nil
	}
	bc := s.checkBus(ps, p.Medium, p.Frames, p.expect, nil, now)
	if len(bc.Conflicts) == 0 {
		return nil, nil
	}
	if strings.TrimSpace(override) != "" {
		return nil, bc.Conflicts
	}
	msgs := make([]string, 0, len(bc.Conflicts))
	for _, c := range bc.Conflicts {
		msgs = append(msgs, c.Message)
	}
	return refuse(GateBusConflict, "change the plan (another id or source address), or send anyway with override_conflict naming why; the reason is audited",
		"%s", strings.Join(msgs, "; ")), bc.Conflicts
}

func round4(v float64) float64 { return float64(int64(v*1e4+0.5)) / 1e4 }

// text writes the check for a person, under the plan's frames.
func (bc BusCheck) text(b *strings.Builder) {
	if !bc.Checked {
		fmt.Fprintf(b, "  bus: not checked: %s\n", bc.Reason)
	} else if len(bc.Conflicts) == 0 {
		fmt.Fprintf(b, "  bus: no other node used these ids or source addresses since %s\n", bc.Since.UTC().Format(time.RFC3339))
	}
	for _, c := range bc.Conflicts {
		fmt.Fprintf(b, "  CONFLICT: %s\n", c.Message)
	}
	if bc.LoadNow != nil {
		fmt.Fprintf(b, "  bus load: %.1f %% now", 100**bc.LoadNow)
		if bc.LoadWithPlan != nil {
			fmt.Fprintf(b, ", %.1f %% with this plan", 100**bc.LoadWithPlan)
		}
		b.WriteString("\n")
	}
	if a := bc.LastAnswer; a != nil {
		fmt.Fprintf(b, "  last answer to this request: %s at %s\n", a.Summary, a.Time.UTC().Format(time.RFC3339Nano))
	}
}
