package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"fieldtap/services/canbus"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// Ports lists the capture ports and the arm input (*ports.Registry).
type Ports interface {
	Snapshot() []ports.Status
	Arm() ports.Arm
}

// CANPorts lists the CAN ports (*canbus.Store).
type CANPorts interface {
	Ports() []*canbus.Port
}

// SIPStore is the SIP store (*sip.Store).
type SIPStore interface {
	Snapshot() *sip.Snapshot
}

// TransmitStatus is the gatekeeper (*transmit.Service).
type TransmitStatus interface {
	// Status as the box's own (tokenless) owner sees it: counts are
	// box-wide.
	Status(transmit.Owner) transmit.Status
}

// MCPCounters is what the MCP layer counts: records of its audit file,
// and tools/call by tool and outcome (refusals included).
type MCPCounters interface {
	AuditRecords() uint64
	ToolCalls() []ToolCalls
}

// ToolCalls is one tool's calls that ended one way: ok, tool_error,
// refused (scope, caps, an unknown tool) or cancelled.
type ToolCalls struct {
	Tool, Outcome string
	Calls         uint64
}

// Recorder is the on-disk recorder (*recorder.Recorder).
type Recorder interface {
	Status() recorder.Status
}

// Exporter is one fleet exporter (HEP, MQTT) as the endpoint reports it.
type Exporter interface {
	ExporterStats() ExporterStats
}

// ExporterStats are an exporter's counters.
type ExporterStats struct {
	Name        string            // hep, mqtt
	Sent        uint64            // messages delivered to the socket or broker
	SentBytes   uint64            // their bytes on the wire
	Dropped     map[string]uint64 // by cause
	Queued      int               // waiting now
	QueuedBytes int64
	Connected   bool
}

// Conns is the pool of the box's HTTP connections (mcp/front's
// ConnPool, through the daemon).
type Conns interface {
	ConnStats() ConnStats
}

// ConnStats are the connection pool's gauges and counters.
type ConnStats struct {
	Open, Max         int
	RefusedPerAddress uint64 // the peer address held its cap
	RefusedGlobal     uint64 // every connection of the pool was serving a request
	ClosedIdle        uint64 // the longest-idle connection closed to make room at the global cap
}

// Sources are what the collector reads; nil fields are left out.
type Sources struct {
	Ports     Ports
	CAN       CANPorts
	SIP       SIPStore
	Transmit  TransmitStatus
	Outcomes  *TransmitCounter
	MCP       MCPCounters
	Recorder  Recorder
	Exporters []Exporter
	Conns     Conns
	Now       func() time.Time
}

// Handler serves s on its own registry with the Go runtime and process
// collectors.
func Handler(s Sources) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		newCollector(s),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), nil
}
