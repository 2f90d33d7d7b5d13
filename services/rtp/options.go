package rtp

import "time"

// Defaults for Options.
const (
	// DefaultMaxStreams bounds tracked streams: two per call, a few
	// thousand concurrent calls on the busiest SPAN port we target.
	DefaultMaxStreams = 8192
	// DefaultMaxEndpoints bounds signalled media addresses (RTP and
	// RTCP, a few per SDP body).
	DefaultMaxEndpoints = 4 * DefaultMaxStreams
	// DefaultMaxDialogs bounds dialogs whose SDP is remembered.
	DefaultMaxDialogs = 4096
	// DefaultInterval is the per-interval figure length (issue #4).
	DefaultInterval = 5 * time.Second
	// DefaultMaxIntervals keeps 10 minutes of 5 s intervals per stream.
	DefaultMaxIntervals = 120
	// DefaultMaxReports bounds RTCP reports kept (oldest overwritten).
	DefaultMaxReports = 4096
	// DefaultMaxEvents bounds DTMF events kept (oldest overwritten).
	DefaultMaxEvents = 4096
	// maxSDPPerDialog bounds offers/answers kept per dialog; re-INVITEs
	// past it are counted.
	maxSDPPerDialog = 32
	// maxEndpointsPerDialog bounds the signalled addresses one dialog
	// keeps for its own findings.
	maxEndpointsPerDialog = 16
)

// Options bound an Analyser; zero fields take the defaults.
type Options struct {
	// MaxBytes is the heap the analyser may hold (its share of the memory
	// budget); when set, the count bounds left at 0 are derived from it
	// (footprint.go) instead of taking the defaults.
	MaxBytes     int64
	MaxStreams   int
	MaxEndpoints int
	MaxDialogs   int
	Interval     time.Duration
	MaxIntervals int
	MaxReports   int
	MaxEvents    int
	// Heuristic also tracks RTP nobody signalled (version 2, two packets
	// in sequence). Off by default: on a busy port it also catches
	// anything whose first byte looks like RTP.
	Heuristic bool
	// VXLANPorts are the SPAN decoder's (netdecode.Options.VXLANPorts), so
	// HeadersOnly finds RTP that remote SPAN carried where the decoder
	// found it; nil is VXLAN's IANA port.
	VXLANPorts []uint16

	// streamShare, endpointShare and dialogShare are the streams',
	// endpoints' and dialogs' parts of MaxBytes, which bound what they
	// are charged (fromBytes); 0 without MaxBytes.
	streamShare, endpointShare, dialogShare int64
}

func (o *Options) fill() {
	o.fromBytes()
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxStreams, DefaultMaxStreams)
	def(&o.MaxEndpoints, DefaultMaxEndpoints)
	def(&o.MaxDialogs, DefaultMaxDialogs)
	def(&o.MaxIntervals, DefaultMaxIntervals)
	def(&o.MaxReports, DefaultMaxReports)
	def(&o.MaxEvents, DefaultMaxEvents)
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
}
