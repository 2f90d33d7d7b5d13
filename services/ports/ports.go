// Package ports keeps the list of capture ports and what each reports, for
// capture_status, with the board's bring-up outcomes and transmit-arm
// input. It knows nothing of drivers or board profiles: the daemon
// registers, for each port, a function that returns the port's current
// Status, adds each bring-up outcome, and sets the arm input's function.
package ports

import (
	"sync"
	"time"

	"fieldtap/services/budget"
	"fieldtap/services/recorder"
)

// Status is one port's state as capture_status reports it.
type Status struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"`   // ethernet, can, j1708, or unknown for a file that could not be opened
	Source string            `json:"source"` // where frames come from: file:PATH, sim:NAME, afpacket:IF …
	Live   bool              `json:"live"`
	Frames uint64            `json:"frames"`
	Bytes  uint64            `json:"bytes"`
	Drops  map[string]uint64 `json:"drops"`  // by cause; frames lost before any analyser saw them
	Errors map[string]uint64 `json:"errors"` // by reason

	FirstTime *time.Time `json:"first_time"` // null before the first frame
	LastTime  *time.Time `json:"last_time"`

	// SourceExhausted is true once a finite source has delivered all it
	// will and the analysers have consumed every frame it delivered (none
	// still waits in the hand-off). StoppedEarly says why it ended before
	// its natural end.
	SourceExhausted bool   `json:"source_exhausted"`
	StoppedEarly    string `json:"stopped_early,omitempty"`

	// Restarts counts how often a live port was started again after it
	// failed (an unplugged adapter, a read error); LastError is why it
	// last failed, at LastErrorTime. A port that never failed has 0 and
	// neither of the others.
	Restarts      uint64     `json:"restarts"`
	LastError     string     `json:"last_error,omitempty"`
	LastErrorTime *time.Time `json:"last_error_time,omitempty"`

	// State is what the port is doing now, one of the State… names, and
	// StateSince when it began (null when unknown). For StateSilent it
	// is when the last frame arrived, so "silent since" is the time from
	// which nothing came.
	State      string     `json:"state"`
	StateSince *time.Time `json:"state_since"`

	// Store is the port's own store (raw frames, CAN frames, J1708
	// messages): its share of the memory budget, what it holds, what it
	// evicted. Shared lists the stores the port feeds with the other ports
	// of its kind (SIP dialogs and messages, RTP; J1939 samples and
	// sessions), the same entries under each of those ports.
	Store  budget.Use   `json:"store"`
	Shared []budget.Use `json:"shared_stores"`

	// Tunnels are the tunnel headers (remote SPAN) this port's frames
	// opened, by kind (netdecode's TunnelKinds); absent when none.
	Tunnels map[string]uint64 `json:"tunnels,omitempty"`

	// Recorder is the port's recording on disk: state (recording or
	// ram_only), frames written and made durable, frames not recorded,
	// what the start-up refill gave back, the last gap. Null with
	// RecorderReason when the port is not recorded.
	Recorder       *recorder.PortStatus `json:"recorder"`
	RecorderReason string               `json:"recorder_reason,omitempty"`

	// Losses are Drops over time, oldest first, for answers that cover a
	// window (services/coverage); capture_status shows the totals.
	Losses []Loss `json:"-"`

	// DropCauses and ErrorReasons name every cause the port's driver and
	// hand-off can count, so /metrics exports each at 0 from start.
	DropCauses   []string `json:"-"`
	ErrorReasons []string `json:"-"`
}

// Loss is n frames lost for one cause in the second that starts At, by
// the port's capture clock.
type Loss struct {
	At    time.Time
	Cause string
	N     uint64
}

// Port states (Status.State). A live port is watched: its device is
// looked at every second and whenever the kernel announces a link
// change, and what it delivers is counted.
const (
	// StateCapturing: frames are arriving, or a live port is open with
	// its link up and has been quiet for less than its silent_after; a
	// finite source (a file, the sim board at max speed) is delivering.
	StateCapturing = "capturing"
	// StateSilent: a live port is open, its link up, and nothing arrived
	// for silent_after or longer. A quiet mirror port or a parked
	// truck's bus is silent, not broken: it is not restarted for that.
	StateSilent = "silent"
	// StateDown: the device is there but its link is down or has no
	// carrier (a SPAN cable pulled at the switch, a CAN controller
	// bus-off, an interface set down).
	StateDown = "down"
	// StateGone: the device disappeared (a USB adapter unplugged), or
	// came back as another one the open port never sees (a new interface
	// index); the port is restarted and opens it once it is there.
	StateGone = "gone"
	// StateRestarting: the port failed and its supervisor waits out the
	// backoff, or is opening it again.
	StateRestarting = "restarting"
	// StateEnded: a finite source delivered everything it will and the
	// analysers consumed it (see SourceExhausted), or a port that can
	// never run here (its driver not in this build, AF_PACKET off
	// Linux); StoppedEarly says why.
	StateEnded = "ended"
)

// Registry lists the ports in the order they were added, the board's
// bring-up outcomes and arm input (board.go), and the memory budget.
type Registry struct {
	mu     sync.RWMutex
	ports  []func() Status
	board  board
	budget func() budget.Status
}

// SetBudget registers the function that reports the memory budget.
func (r *Registry) SetBudget(fn func() budget.Status) {
	r.mu.Lock()
	r.budget = fn
	r.mu.Unlock()
}

// Budget reports the memory budget and every store's share and use; the
// zero Status when none was registered.
func (r *Registry) Budget() budget.Status {
	r.mu.RLock()
	fn := r.budget
	r.mu.RUnlock()
	if fn == nil {
		return budget.Status{Stores: []budget.Use{}}
	}
	return fn()
}

// Add registers a port's status function.
func (r *Registry) Add(status func() Status) {
	r.mu.Lock()
	r.ports = append(r.ports, status)
	r.mu.Unlock()
}

// Snapshot returns every port's status, in registration order.
func (r *Registry) Snapshot() []Status {
	r.mu.RLock()
	fns := r.ports
	r.mu.RUnlock()
	out := make([]Status, len(fns))
	for i, fn := range fns {
		out[i] = fn()
		if out[i].Drops == nil {
			out[i].Drops = map[string]uint64{}
		}
		if out[i].Errors == nil {
			out[i].Errors = map[string]uint64{}
		}
		if out[i].Shared == nil {
			out[i].Shared = []budget.Use{}
		}
	}
	return out
}
