package metrics

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/rules"
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

// Rules is the rule engine (*rules.Engine).
type Rules interface {
	Verdicts() []rules.Verdict
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
	Rules     Rules
	Now       func() time.Time
}

// Handler serves s with the Go runtime and process series, in the text
// format, gzipped when the scraper accepts it (Prometheus does).
func Handler(s Sources) http.Handler {
	c := newCollector(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := newExposition()
		c.collect(e)
		goSeries(e)
		processSeries(e)
		w.Header().Set("Content-Type", contentType)
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		e.write(out) // an error here is the scraper gone; nothing to tell it
	})
}

// acceptsGzip reports whether an Accept-Encoding header lists gzip
// without refusing it (q=0).
func acceptsGzip(h string) bool {
	for part := range strings.SplitSeq(h, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) != "gzip" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		return !ok || strings.Trim(q, "0.") != ""
	}
	return false
}
