package daemon

import (
	"fieldtap/drivers/capture"
	"fieldtap/services/budget"
	"fieldtap/services/ring"
)

// use is one ring-backed store's share and what it holds.
func (a *analysers) use(store, port string, st ring.Stats) budget.Use {
	share := shareOf(a.plan, store, port)
	if share == 0 && port != "" {
		share = shareOf(a.plan, store, "") // a store kept at the minimum
	}
	return budget.Use{
		Store: store, Port: port, Items: st.Items, MaxItems: st.Limits.Items,
		Bytes: st.Bytes, MaxBytes: share, ShareOfBudget: a.plan.Fraction(share),
		Evicted: st.Evicted, EvictedBytes: st.EvictedBytes, Oversize: st.Oversize, Revision: st.Revision,
		Oldest: timePtr(st.Oldest), Appended: st.Appended, EvictedTo: st.EvictedTo,
	}
}

// shared lists the stores every port of kind feeds, as each of those
// ports reports them.
func (a *analysers) shared(kind capture.Kind) []budget.Use {
	var out []budget.Use
	switch kind {
	case capture.KindEthernet:
		out = []budget.Use{
			a.use(budget.SIPDialogs, "", a.sip.DialogStats()),
			a.use(budget.SIPMessages, "", a.sip.MessageStats()),
			a.rtpUse(),
		}
	case capture.KindCAN:
		out = []budget.Use{
			a.use(budget.J1939Samples, "", a.j1939.SampleStats()),
			a.use(budget.J1939Sessions, "", a.j1939.SessionStats()),
		}
	}
	for i := range out {
		out[i].Shared = true
	}
	return out
}

// rtpUse is the media analyser's tables: streams are its items, every
// entry counted at its footprint (services/rtp).
func (a *analysers) rtpUse() budget.Use {
	u := a.media.Usage()
	share := shareOf(a.plan, budget.RTP, "")
	return budget.Use{
		Store: budget.RTP, Items: u.Streams, MaxItems: u.MaxStreams, Bytes: u.Bytes, MaxBytes: share,
		ShareOfBudget: a.plan.Fraction(share), Evicted: u.Evicted,
	}
}

// budgetStatus is the whole budget: every share with what it holds. A
// fixed cost (hand-off, kernel ring, protocol tables) is reported at its
// share, since it is a bound reserved rather than a store that fills; a
// hand-off's items are the frames in flight.
func (a *analysers) budgetStatus() budget.Status {
	st := budget.Status{BudgetBytes: a.plan.Budget, From: a.plan.From, PoolBytes: a.plan.Pool, Stores: []budget.Use{}}
	// The shared stores are read once, not once per share: every tool
	// answer's coverage reads this status.
	shared := append(a.shared(capture.KindEthernet), a.shared(capture.KindCAN)...)
	for _, s := range a.plan.Shares {
		u := a.shareUse(s, shared)
		st.SharesBytes += s.Bytes
		st.UsedBytes += u.Bytes
		st.Stores = append(st.Stores, u)
	}
	return st
}

func (a *analysers) shareUse(s budget.Share, shared []budget.Use) budget.Use {
	switch s.Store {
	case budget.Frames:
		a.framesMu.Lock()
		fs := a.frames[s.Port]
		a.framesMu.Unlock()
		if fs != nil {
			return a.use(s.Store, s.Port, fs.Stats())
		}
	case budget.CANFrames:
		if p := a.can.Lookup(s.Port); p != nil {
			return a.use(s.Store, s.Port, p.FrameStats())
		}
	case budget.J1708Messages:
		if p := a.j1587.Lookup(s.Port); p != nil {
			return a.use(s.Store, s.Port, p.MessageStats())
		}
	case budget.SIPDialogs, budget.SIPMessages, budget.RTP, budget.J1939Samples, budget.J1939Sessions:
		for _, u := range shared {
			if u.Store == s.Store {
				return u
			}
		}
	}
	u := budget.Use{Store: s.Store, Port: s.Port, Bytes: s.Bytes, MaxBytes: s.Bytes, ShareOfBudget: a.plan.Fraction(s.Bytes), Reserved: true}
	if s.Store == budget.Handoff {
		a.handoffsMu.Lock()
		if h := a.handoffs[s.Port]; h != nil {
			u.Items, u.MaxItems = h.InFlight(), h.Depth()
		}
		a.handoffsMu.Unlock()
	}
	return u
}
