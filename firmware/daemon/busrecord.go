package daemon

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/transmit"
)

// busRecord answers a plan's bus check from the stores: the CAN frame
// ring, the J1939 address claims and latest messages, and the UDS
// transactions.
type busRecord struct {
	can   *canbus.Store
	j1939 *j1939.Store
	uds   *isotp.Store
}

var _ transmit.Recorded = busRecord{}

// Seen reads the port's frame ring from its newest frame back to since.
func (r busRecord) Seen(port string, since, until time.Time, match func(uint32) bool, skip func(time.Time) bool) (int, time.Time) {
	p := r.can.Lookup(port)
	if p == nil {
		return 0, time.Time{}
	}
	n, last := 0, time.Time{}
	snap := p.Frames()
	snap.RangeReverse(snap.EndSeq(), func(_ uint64, f canbus.Record) bool {
		if f.Time.Before(since) {
			return false
		}
		if f.Time.Before(until) && match(f.ID) && !skip(f.Time) {
			if n == 0 {
				last = f.Time
			}
			n++
		}
		return true
	})
	return n, last
}

func (r busRecord) Claimant(port string, sa uint8) string {
	if n := r.j1939.NameOf(port)(sa); n != nil {
		return fmt.Sprintf("%s (NAME %s)", j1939.ECUName(sa, n), n.Hex)
	}
	return ""
}

// LastAnswer is the latest message of the requested PGN from the asked
// address (J1939), or the latest answered transaction of the same service
// and identifier between the plan's ids (UDS).
func (r busRecord) LastAnswer(port string, e *transmit.Expect, until time.Time) (time.Time, string, bool) {
	switch e.Kind {
	case transmit.ExpectJ1939:
		var best *j1939.PGNValue
		for _, v := range r.j1939.LatestPGN(e.PGN) {
			if v.Port != port || (e.From != j1939.AddrGlobal && v.SA != int(e.From)) || !v.Time.Before(until) {
				continue
			}
			if best == nil || v.Time.After(best.Time) {
				best = &v
			}
		}
		if best == nil {
			return time.Time{}, "", false
		}
		return best.Time, fmt.Sprintf("PGN %d from SA 0x%02X (%s), %d bytes %s, seen %d times", e.PGN, best.SA, best.Via, len(best.Raw), best.Data, best.Count), true
	case transmit.ExpectUDS:
		if len(e.Request) == 0 {
			return time.Time{}, "", false
		}
		reqID, respID := wire.FormatCANID(e.RequestID), wire.FormatCANID(e.ResponseID)
		did := isotp.Identify(e.Request)
		var t time.Time
		var what string
		found := false
		snap := r.uds.Transactions()
		snap.RangeReverse(snap.EndSeq(), func(_ uint64, x isotp.Record) bool {
			if x.Port != port || x.Request == nil || x.Request.CANID != reqID || x.SID != e.Request[0] || len(x.Responses) == 0 {
				return true
			}
			if did.Kind != "" && len(did.Values) > 0 && x.DID != did.Hex(did.Values[0]) {
				return true
			}
			a := x.Responses[len(x.Responses)-1]
			if a.CANID != respID || !a.Time.Before(until) {
				return true
			}
			t, found = a.Time, true
			if a.Positive {
				what = fmt.Sprintf("positive answer on %s, %d bytes %s", respID, a.Length, a.Data)
			} else {
				what = fmt.Sprintf("negative answer on %s: NRC %s %s", respID, a.NRC, a.NRCName)
			}
			return false
		})
		return t, what, found
	}
	return time.Time{}, "", false
}
