package hepin

import (
	"fmt"
	"net"

	"fieldtap/drivers/wire"
)

// Defaults and bounds.
const (
	// DefaultListen is loopback-bound like every listener of the box;
	// 9060 is HEP's usual port. An agent on another machine needs the
	// operator to bind an address it can reach.
	DefaultListen = "127.0.0.1:9060"
	// DefaultMaxFrame takes any HEP3 packet: the length field is 16 bits.
	DefaultMaxFrame = 65535
	// MinMaxFrame still takes a SIP message of a few hundred bytes with
	// its chunks.
	MinMaxFrame = 512
	// DefaultMaxConnections is more agents than one site has: a PBX, a
	// proxy, a media server or two, each with one connection.
	DefaultMaxConnections = 16
	// MaxMaxConnections bounds what a configuration may ask: each
	// connection holds a read buffer of max_frame bytes.
	MaxMaxConnections = 256
	// DefaultBufferBytes bounds the frames waiting for the analysers:
	// seconds of a busy PBX's signalling (≈1 KiB a message).
	DefaultBufferBytes = 4 << 20
	// MinBufferBytes holds one largest packet; MaxBufferBytes keeps a
	// configuration from spending the board's memory on one port.
	MinBufferBytes = 1 << 16
	MaxBufferBytes = 64 << 20
	// maxTCPFlows bounds the table of sequence numbers given to SIP over
	// TCP flows (tcp.go): a site's signalling connections, many times over.
	maxTCPFlows = 4096
)

// Options configure a Source.
type Options struct {
	Name string
	// Listen is the host:port both listeners bind, UDP and TCP.
	Listen string
	// AuthKey, when set, is the key every packet must carry (chunk
	// 0x000e); packets without it or with another are refused.
	AuthKey string
	// CaptureIDs, when not empty, are the agent ids taken (chunk 0x000c);
	// packets of another id, or of none, are refused.
	CaptureIDs []uint32
	// MaxFrame is the largest HEP packet taken, in bytes; larger ones are
	// refused (DropTooLarge) and end their TCP connection, whose framing
	// is then lost. It is also each connection's read buffer.
	MaxFrame int
	// MaxConnections is how many TCP connections are served at once;
	// one more is closed at once and counted (ErrConnectionCap).
	MaxConnections int
	// BufferBytes bounds the bytes of frames handed off and not yet
	// released by the analysers; a packet that would pass it is dropped
	// (DropBufferFull).
	BufferBytes int
}

func (o *Options) check() error {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.MaxFrame == 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.BufferBytes == 0 {
		o.BufferBytes = DefaultBufferBytes
	}
	if o.BufferBytes < MinBufferBytes || o.BufferBytes > MaxBufferBytes {
		return fmt.Errorf("hep port %s: buffer_bytes %d: want %d to %d", o.Name, o.BufferBytes, MinBufferBytes, MaxBufferBytes)
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return fmt.Errorf("hep port %s: listen %q: want host:port: %w", o.Name, o.Listen, err)
	}
	if o.MaxFrame < MinMaxFrame || o.MaxFrame > DefaultMaxFrame {
		return fmt.Errorf("hep port %s: max_frame %d: want %d to %d bytes", o.Name, o.MaxFrame, MinMaxFrame, DefaultMaxFrame)
	}
	if o.MaxConnections < 1 || o.MaxConnections > MaxMaxConnections {
		return fmt.Errorf("hep port %s: max_connections %d: want 1 to %d", o.Name, o.MaxConnections, MaxMaxConnections)
	}
	return nil
}

// Drop causes this driver counts besides wire.DecodeHEP's.
const (
	DropAuthRefused      = "hep_auth_refused"       // no auth key, or another than the port's
	DropCaptureIDRefused = "hep_capture_id_refused" // a capture id off the allow-list, or none
	DropUnsupportedType  = "hep_unsupported_type"   // a payload type other than SIP, RTP, RTCP
	DropUnsupportedProto = "hep_unsupported_proto"  // a transport other than UDP or TCP (SCTP)
	DropTooLarge         = "hep_too_large"          // past max_frame, or an IP packet past 65535 bytes
	DropBadRTCP          = "hep_bad_rtcp"           // RTCP JSON that is not a report
	DropBufferFull       = "hep_buffer_full"        // buffer_bytes of frames wait for the analysers
)

// Error reasons: counted, not frame losses.
const (
	// ErrConnectionCap is a TCP connection closed at once because
	// max_connections were open: what it would have sent is not known.
	ErrConnectionCap = "hep_connection_cap"
	// ErrUnknownChunk counts packets with chunks skipped (another
	// vendor's, or types not read); the packet itself is taken.
	ErrUnknownChunk = "hep_unknown_chunk"
	// ErrKeepAlive counts keep-alive packets: nothing to analyse.
	ErrKeepAlive = "hep_keepalive"
	// ErrTCPFlowsFull counts SIP over TCP flows forgotten to make room in
	// the sequence table: the analyser sees a gap in that flow.
	ErrTCPFlowsFull = "hep_tcp_flows_full"
	// ErrRead is a TCP connection that failed mid-packet.
	ErrRead = "hep_read"
)

// drops lists every drop cause, for Causes.
var drops = []string{wire.HEPBadMagic, wire.HEPShort, wire.HEPBadLength, wire.HEPBadChunk, wire.HEPIncomplete, wire.HEPCompressed,
	DropAuthRefused, DropCaptureIDRefused, DropUnsupportedType, DropUnsupportedProto, DropTooLarge, DropBadRTCP, DropBufferFull}

var errorReasons = []string{ErrConnectionCap, ErrUnknownChunk, ErrKeepAlive, ErrTCPFlowsFull, ErrRead}
