package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"fieldtap/services/filter"
	"fieldtap/services/j1939"
	"fieldtap/services/sip"
)

// Trigger kinds.
const (
	KindSIPFilter  = "sip_filter"  // a dialog matching a filter expression
	KindCallFailed = "call_failed" // a call ending in a final 3xx–6xx
	KindDM1        = "dm1"         // a J1939 DM1 fault appearing
)

// maxSeen bounds what one spec remembers having fired for (dialog ids,
// fault keys); the oldest are forgotten first.
const maxSeen = 4096

// Spec is one configured trigger.
type Spec struct {
	Kind   string
	Filter *filter.Expr // KindSIPFilter: compiled with sip.Compile
	Before time.Duration
	After  time.Duration
}

// DialogSource is the SIP store as triggers read it.
type DialogSource interface{ Snapshot() *sip.Snapshot }

// FaultSource is the J1939 store as triggers read it.
type FaultSource interface{ Faults() []j1939.Fault }

// WatchStats count what the triggers did.
type WatchStats struct {
	Fired      map[string]uint64 // by kind
	Suppressed map[string]uint64 // within an earlier bundle's window of the same trigger
	Refused    map[string]uint64 // the builder or the recorder said no (full, pinned, busy)
	LastError  string
}

// Watcher fires Specs on new dialogs and faults, polling the stores.
type Watcher struct {
	b       *Builder
	specs   []Spec
	dialogs DialogSource // nil: no SIP triggers fire
	faults  FaultSource  // nil: no DM1 triggers fire

	mu      sync.Mutex
	started bool
	rev     uint64 // SIP store revision already looked at
	seen    []seenSet
	last    []time.Time // each spec's last fired moment
	st      WatchStats
}

// seenSet is a bounded set with first-in, first-out forgetting.
type seenSet struct {
	m     map[string]bool
	order []string
}

func (s *seenSet) add(k string) bool {
	if s.m[k] {
		return false
	}
	if s.m == nil {
		s.m = map[string]bool{}
	}
	if len(s.order) >= maxSeen {
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
	s.m[k] = true
	s.order = append(s.order, k)
	return true
}

// NewWatcher returns a watcher firing specs into b.
func NewWatcher(b *Builder, specs []Spec, dialogs DialogSource, faults FaultSource) *Watcher {
	return &Watcher{b: b, specs: specs, dialogs: dialogs, faults: faults, seen: make([]seenSet, len(specs)), last: make([]time.Time, len(specs)),
		st: WatchStats{Fired: map[string]uint64{}, Suppressed: map[string]uint64{}, Refused: map[string]uint64{}}}
}

// Run polls every second until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		w.Check()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stats returns the watcher's counters.
func (w *Watcher) Stats() WatchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := func(m map[string]uint64) map[string]uint64 {
		out := make(map[string]uint64, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return WatchStats{Fired: c(w.st.Fired), Suppressed: c(w.st.Suppressed), Refused: c(w.st.Refused), LastError: w.st.LastError}
}

// dialogTrigger is trigger.json for a SIP trigger. The user parts are
// the sender's, fenced (Options.Fence).
type dialogTrigger struct {
	Trigger   string    `json:"trigger"`
	CallID    string    `json:"call_id"`
	State     string    `json:"state"`
	FinalCode int       `json:"final_code"`
	FromUser  string    `json:"from_user"`
	ToUser    string    `json:"to_user"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// faultTrigger is trigger.json for a DM1 trigger. Its DTC and lamps are
// this file's own types, so the document keeps its keys whatever
// services/j1939 does with its values.
type faultTrigger struct {
	Trigger string    `json:"trigger"`
	Port    string    `json:"port"`
	SA      int       `json:"sa"`
	DTC     dtcDoc    `json:"dtc"`
	Lamps   lampsDoc  `json:"lamps"`
	Time    time.Time `json:"time"`
}

// dtcDoc is a j1939.DTC in trigger.json.
type dtcDoc struct {
	SPN uint32 `json:"spn"`
	FMI uint8  `json:"fmi"`
	OC  uint8  `json:"oc"`
	CM  uint8  `json:"cm"`
}

// lampsDoc is a DM1's j1939.Lamps in trigger.json.
type lampsDoc struct {
	MIL         uint8 `json:"mil"`
	RedStop     uint8 `json:"red_stop"`
	AmberWarn   uint8 `json:"amber_warning"`
	Protect     uint8 `json:"protect"`
	FlashMIL    uint8 `json:"flash_mil"`
	FlashRed    uint8 `json:"flash_red_stop"`
	FlashAmber  uint8 `json:"flash_amber_warning"`
	FlashProtec uint8 `json:"flash_protect"`
}

// Check looks at what changed since the last check and fires. The first
// check only takes stock: what the stores held at start (refilled from
// the recorder) does not fire again.
func (w *Watcher) Check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sn *sip.Snapshot
	if w.dialogs != nil {
		sn = w.dialogs.Snapshot()
	}
	var faults []j1939.Fault
	if w.faults != nil {
		faults = w.faults.Faults()
	}
	first := !w.started
	w.started = true
	for i, s := range w.specs {
		switch s.Kind {
		case KindSIPFilter, KindCallFailed:
			if sn == nil {
				continue
			}
			for _, d := range sn.Dialogs {
				if d.Rev <= w.rev {
					continue
				}
				if s.Kind == KindCallFailed && d.State != sip.StateFailed || s.Kind == KindSIPFilter && !s.Filter.Match(d) {
					continue
				}
				if !w.seen[i].add(fmt.Sprint(d.ID)) || first {
					continue
				}
				at := d.Updated
				if !d.FinalAt.IsZero() {
					at = d.FinalAt
				}
				w.fire(i, at, dialogTrigger{Trigger: s.Kind, CallID: d.CallID, State: d.State, FinalCode: d.FinalCode,
					FromUser: w.fence(d.FromUser), ToUser: w.fence(d.ToUser), Created: d.Created, Updated: d.Updated})
			}
		case KindDM1:
			for _, f := range faults {
				if f.Kind != "DM1" || f.NoActive {
					continue
				}
				for _, dtc := range f.DTCs {
					if !w.seen[i].add(fmt.Sprintf("%s/%d/%d/%d", f.Port, f.SA, dtc.SPN, dtc.FMI)) || first {
						continue
					}
					w.fire(i, f.Time, faultTrigger{Trigger: s.Kind, Port: f.Port, SA: f.SA, DTC: dtcDoc(dtc), Lamps: lampsDoc(f.Lamps), Time: f.Time})
				}
			}
		}
	}
	if sn != nil {
		w.rev = sn.Revision
	}
}

// fence is the builder's Options.Fence, or a fence that leaves the text
// out.
func (w *Watcher) fence(s string) string {
	if w.b.opt.Fence == nil {
		return ""
	}
	return w.b.opt.Fence(s)
}

// fire asks for spec i's bundle around at, unless an earlier one of the
// same spec already covers at; the caller holds mu.
func (w *Watcher) fire(i int, at time.Time, trigger any) {
	s := w.specs[i]
	if !w.last[i].IsZero() && at.Before(w.last[i].Add(s.After)) {
		w.st.Suppressed[s.Kind]++
		return
	}
	raw, err := json.Marshal(trigger)
	if err == nil {
		_, err = w.b.Trigger(Request{Reason: s.Kind, At: at, Before: s.Before, After: s.After, Trigger: raw})
	}
	if err != nil {
		w.st.Refused[s.Kind]++
		w.st.LastError = err.Error()
		return
	}
	w.last[i] = at
	w.st.Fired[s.Kind]++
}
