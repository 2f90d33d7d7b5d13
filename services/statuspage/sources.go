package statuspage

import (
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/rtp"
	"fieldtap/services/rules"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// Ports lists the capture ports and the arm input (*ports.Registry).
type Ports interface {
	Snapshot() []ports.Status
	Arm() ports.Arm
}

// Transmit is what the page reads of the gatekeeper (*transmit.Service).
type Transmit interface {
	// Status as the box's own (tokenless) owner sees it: plans and
	// confirmations are counted box-wide, nobody's are listed.
	Status(transmit.Owner) transmit.Status
}

// CANLoad lists the CAN ports whose bus-load history is charted
// (*canbus.Store).
type CANLoad interface {
	Ports() []*canbus.Port
}

// J1939Faults lists the latest DM1/DM2 of every source (*j1939.Store).
type J1939Faults interface {
	Faults() []j1939.Fault
}

// J1587Faults lists the PID 194 entries (*j1587.Store).
type J1587Faults interface {
	Faults() []j1587.FaultEntry
}

// Calls is the SIP store (*sip.Store).
type Calls interface {
	Snapshot() *sip.Snapshot
}

// Media is the RTP analyser (*rtp.Analyser).
type Media interface {
	Snapshot(intervals bool) *rtp.Snapshot
}

// Recorder is the on-disk recorder (*recorder.Recorder).
type Recorder interface {
	Status() recorder.Status
}

// Rules is the rule engine (*rules.Engine).
type Rules interface {
	Verdicts() []rules.Verdict
}

// LED reports the armed LED as last driven: on, and whether anything
// drives it (false with the reason).
type LED func() (on, driven bool, why string)

// Sources are what Build reads. A nil field leaves its section empty
// with a reason.
type Sources struct {
	Version  string
	Board    string
	Started  time.Time
	Ports    Ports
	ArmedLED LED
	Transmit Transmit
	CAN      CANLoad
	J1939    J1939Faults
	J1587    J1587Faults
	Calls    Calls
	Media    Media
	Recorder Recorder
	Rules    Rules
	// Rates keeps the ports' frame counts for frames per second (fed by
	// RunRates; Build adds a sample too). Nil: no rate shown.
	Rates *Rates
	// NoRecorder says why Recorder is nil (the daemon's reason: off in
	// the configuration, or its directory could not be opened).
	NoRecorder string
}
