package mcp

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/canbus"
	"fieldtap/services/coverage"
)

// Bus conditions await_bus can wait for.
const (
	condDM1Active     = "dm1_active"     // a source's DM1 lists an active DTC
	condDM1Clear      = "dm1_clear"      // a source's DM1 lists none (or it sends none)
	condPGNSeen       = "pgn_seen"       // a PGN arrives after the call starts
	condLoadAbove     = "bus_load_above" // the last whole second's load is at or above load_pct
	condLoadBelow     = "bus_load_below" // … at or below load_pct
	condClaimConflict = "claim_conflict" // a new address-claim conflict is counted
	condJ1587Fault    = "j1587_fault"    // a MID's latest PID 194 table lists an active code
)

var busConditions = []string{condDM1Active, condDM1Clear, condPGNSeen, condLoadAbove, condLoadBelow, condClaimConflict, condJ1587Fault}

type busConditionArg string

func (busConditionArg) argSchema() *jsonschema.Schema {
	return enumArg("condition", busConditions)
}

type loadPctArg int

func (loadPctArg) argSchema() *jsonschema.Schema {
	return intSchema("load in % (bus_load_*)", 0, 100)
}

type awaitBusIn struct {
	Condition      busConditionArg `json:"condition"`
	SA             *sourceAddress  `json:"sa,omitempty" jsonschema:"only this source (dm1_*, pgn_seen)"`
	PGN            *pgnArg         `json:"pgn,omitempty" jsonschema:"pgn_seen: required"`
	LoadPct        *loadPctArg     `json:"load_pct,omitempty"`
	MID            *midArg         `json:"mid,omitempty" jsonschema:"only this MID (j1587_fault)"`
	TimeoutSeconds timeoutArg      `json:"timeout_seconds,omitempty"`
	PortSelector
}

type awaitBusOut struct {
	Met            bool   `json:"met"`
	DeadlinePassed bool   `json:"deadline_passed"`
	CaptureEnded   bool   `json:"capture_ended" jsonschema:"unmet: every port read has ended"`
	WaitedMs       int64  `json:"waited_ms"`
	Condition      string `json:"condition"`
	// Evidence says what met the condition, or what was last seen.
	Evidence string `json:"evidence"`
}

// busCheck reads the stores once: whether the condition holds, and
// what was seen.
type busCheck func() (bool, string)

var awaitBus = tool[awaitBusIn, awaitBusOut]{
	name:  "await_bus",
	reads: readsCAN | readsJ1939 | readsJ1708,
	desc:  "Wait until a CAN/J1939/J1708 condition holds (at once if it does); a passed deadline or ended capture answers met false.",
	hints: readOnly(),
	run: func(c *call, in awaitBusIn) (awaitBusOut, error) {
		check, err := busCheckOf(c, in)
		if err != nil {
			return awaitBusOut{}, err
		}
		secs := count(int(in.TimeoutSeconds), awaitDefaultSeconds)
		out := awaitBusOut{Condition: string(in.Condition)}
		passed, ended, waited := c.pollUntil(secs, c.portsEnded(busWaitQuery(in)), func() (bool, string) {
			out.Met, out.Evidence = check()
			return out.Met, "waiting for " + string(in.Condition) + ": " + out.Evidence
		})
		out.WaitedMs, out.DeadlinePassed, out.CaptureEnded = waited.Milliseconds(), passed, ended
		if passed {
			c.warnf("deadline of %d s passed before %s", secs, in.Condition)
		}
		if ended {
			c.warnf("every port read has ended before %s: it cannot be met", in.Condition)
		}
		return out, nil
	},
}

// busWaitQuery is the ports a condition reads: J1708 ports for a J1587
// fault, CAN ports otherwise, narrowed to port when one is named.
func busWaitQuery(in awaitBusIn) coverage.Query {
	f := readsCAN | readsJ1939
	if in.Condition == condJ1587Fault {
		f = readsJ1708
	}
	return coverageQuery(f, in)
}

// busCheckOf refuses an argument the condition needs and does not have,
// or a store the box lacks, before the wait starts.
func busCheckOf(c *call, in awaitBusIn) (busCheck, error) {
	switch string(in.Condition) {
	case condDM1Active, condDM1Clear:
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return nil, err
		}
		return dm1Check(c, chosen, in.SA, in.Condition == condDM1Active), nil
	case condPGNSeen:
		if in.PGN == nil {
			return nil, argErr("pgn", "name the PGN to wait for", "pgn_seen needs pgn")
		}
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return nil, err
		}
		return pgnCheck(c, chosen, uint32(*in.PGN), in.SA), nil
	case condLoadAbove, condLoadBelow:
		if in.LoadPct == nil {
			return nil, argErr("load_pct", "give the level in percent", "%s needs load_pct", in.Condition)
		}
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return nil, err
		}
		return loadCheck(ps, float64(*in.LoadPct)/100, in.Condition == condLoadAbove), nil
	case condClaimConflict:
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return nil, err
		}
		return claimCheck(c, chosen), nil
	case condJ1587Fault:
		srcs, err := j1708Sources(c, in.PortSelector)
		if err != nil {
			return nil, err
		}
		return func() (bool, string) {
			for _, s := range srcs {
				for _, f := range s.store.Faults() {
					if f.Active && (in.MID == nil || f.MID == int(*in.MID)) {
						return true, fmt.Sprintf("MID %d on %s lists code %d FMI %d as active", f.MID, s.port, f.Code, f.FMI)
					}
				}
			}
			return false, "no active J1587 code"
		}, nil
	}
	return nil, argErr("condition", "one of the listed conditions", "unknown condition %q: want one of %v", in.Condition, busConditions)
}

func dm1Check(c *call, ports []string, sa *sourceAddress, active bool) busCheck {
	return func() (bool, string) {
		activeDTCs := 0
		for _, f := range c.d.J1939.Faults() {
			if f.Kind != "DM1" || !slices.Contains(ports, f.Port) || sa != nil && f.SA != int(*sa) || f.NoActive {
				continue
			}
			if len(f.DTCs) > 0 {
				if active {
					return true, fmt.Sprintf("SA %d on %s reports SPN %d FMI %d active", f.SA, f.Port, f.DTCs[0].SPN, f.DTCs[0].FMI)
				}
				activeDTCs += len(f.DTCs)
			}
		}
		if active {
			return false, "no active DTC in any DM1"
		}
		if activeDTCs == 0 {
			return true, "no DM1 lists an active DTC"
		}
		return false, fmt.Sprintf("%d active DTCs still listed", activeDTCs)
	}
}

// pgnCheck is met by a message of the PGN that the store did not hold
// when the call started: a new source, or a higher count.
func pgnCheck(c *call, ports []string, pgn uint32, sa *sourceAddress) busCheck {
	key := func(port string, sa int) string { return fmt.Sprintf("%s/%d", port, sa) }
	before := map[string]uint64{}
	for _, v := range c.d.J1939.LatestPGN(pgn) {
		before[key(v.Port, v.SA)] = v.Count
	}
	return func() (bool, string) {
		for _, v := range c.d.J1939.LatestPGN(pgn) {
			if !slices.Contains(ports, v.Port) || sa != nil && v.SA != int(*sa) {
				continue
			}
			if v.Count > before[key(v.Port, v.SA)] {
				return true, fmt.Sprintf("PGN %d from SA %d on %s (%d seen)", pgn, v.SA, v.Port, v.Count)
			}
		}
		return false, fmt.Sprintf("PGN %d not seen since the call started", pgn)
	}
}

// loadCheck reads each port's last whole second (the newest is still
// being counted).
func loadCheck(ps []*canbus.Port, level float64, above bool) busCheck {
	return func() (bool, string) {
		seen := "no whole second counted yet"
		for _, p := range ps {
			secs := p.Seconds()
			if len(secs) < 2 {
				continue
			}
			s := secs[len(secs)-2]
			seen = fmt.Sprintf("%s at %.1f %% in the second from %s", p.Name(), s.Load*100, s.Start.Format(time.RFC3339))
			if above && s.Load >= level || !above && s.Load <= level {
				return true, seen
			}
		}
		return false, seen
	}
}

// claimCheck is met by a conflict counted after the call started.
func claimCheck(c *call, ports []string) busCheck {
	conflicts := func() (n uint64) {
		for _, ps := range c.d.J1939.Summary() {
			if slices.Contains(ports, ps.Port) {
				n += ps.ClaimConflicts
			}
		}
		return n
	}
	before := conflicts()
	return func() (bool, string) {
		if n := conflicts(); n > before {
			return true, fmt.Sprintf("%d address-claim conflicts since the call started", n-before)
		}
		return false, "no new address-claim conflict"
	}
}

// busAwaitTools is the bundle of waits on the vehicle buses.
var busAwaitTools = []toolDef{awaitBus}
