package hep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// Exporter bounds and timings.
const (
	// DefaultQueuePackets holds about two seconds of a busy SPAN port's
	// signalling (≈500 messages/s) while the socket is slow.
	DefaultQueuePackets = 1024
	// DefaultQueueBytes bounds the same queue in memory: 1 MiB.
	DefaultQueueBytes = 1 << 20
	// MaxQueuePackets and MaxQueueBytes keep a configuration from
	// spending the board's memory on a collector that is away.
	MaxQueuePackets = 1 << 16
	MaxQueueBytes   = 64 << 20
	// redial is the wait between attempts to resolve and open the
	// collector's socket.
	redial = 5 * time.Second
)

// Drop causes, as the exporter counts them.
const (
	DropQueueFull   = "queue_full"   // the queue was at its bound
	DropTooLarge    = "too_large"    // past wire.HEPMaxPacket
	DropSendError   = "send_error"   // the socket refused the datagram
	DropNoCall      = "rtcp_no_call" // RTCP whose addresses no SDP announced
	DropUnencodable = "unencodable"  // mixed address families, bad RTCP
)

// Options configure an Exporter.
type Options struct {
	// Collector is the HEP collector's UDP host:port.
	Collector string
	CaptureID uint32
	AuthKey   string
	Node      string
	// RTCP also exports RTCP reports with their Call-ID.
	RTCP         bool
	QueuePackets int // 0: DefaultQueuePackets
	QueueBytes   int // 0: DefaultQueueBytes
	Log          *slog.Logger
}

func (o *Options) check() error {
	if o.QueuePackets == 0 {
		o.QueuePackets = DefaultQueuePackets
	}
	if o.QueueBytes == 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.QueuePackets < 1 || o.QueuePackets > MaxQueuePackets {
		return fmt.Errorf("hep: queue_packets %d: want 1 to %d", o.QueuePackets, MaxQueuePackets)
	}
	if o.QueueBytes < wire.HEPMaxPacket || o.QueueBytes > MaxQueueBytes {
		return fmt.Errorf("hep: queue_bytes %d: want %d (one packet) to %d", o.QueueBytes, wire.HEPMaxPacket, MaxQueueBytes)
	}
	if _, _, err := net.SplitHostPort(o.Collector); err != nil {
		return fmt.Errorf("hep: collector %q: %w", o.Collector, err)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Stats are the exporter's counters.
type Stats struct {
	Sent        uint64            `json:"sent"`
	SentBytes   uint64            `json:"sent_bytes"`
	SIP         uint64            `json:"sip"`
	RTCP        uint64            `json:"rtcp"`
	Dropped     map[string]uint64 `json:"dropped"`
	Queued      int               `json:"queued"`
	QueuedBytes int64             `json:"queued_bytes"`
	Connected   bool              `json:"connected"`
}

// Exporter queues HEP packets from the analyser's goroutine and sends
// them from Run's.
type Exporter struct {
	o      Options
	q      chan []byte
	qBytes atomic.Int64

	sent, sentBytes, sip, rtcp atomic.Uint64
	connected                  atomic.Bool
	mu                         sync.Mutex
	dropped                    map[string]uint64
}

// New checks o and returns an idle exporter; Run sends.
func New(o Options) (*Exporter, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Exporter{o: o, q: make(chan []byte, o.QueuePackets), dropped: map[string]uint64{}}, nil
}

func (e *Exporter) drop(cause string) {
	e.mu.Lock()
	e.dropped[cause]++
	e.mu.Unlock()
}

// Stats returns the counters.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	d := maps.Clone(e.dropped)
	e.mu.Unlock()
	return Stats{Sent: e.sent.Load(), SentBytes: e.sentBytes.Load(), SIP: e.sip.Load(), RTCP: e.rtcp.Load(), Dropped: d,
		Queued: len(e.q), QueuedBytes: e.qBytes.Load(), Connected: e.connected.Load()}
}

// Message implements sip.Tap: one stored SIP message.
func (e *Exporter) Message(meta sip.Meta, raw []byte) {
	proto := uint8(wire.HEPProtoTCP)
	if meta.Transport == sip.TransportUDP {
		proto = wire.HEPProtoUDP
	}
	if e.enqueue(&wire.HEPPacket{Src: meta.Src, Dst: meta.Dst, Proto: proto, Time: meta.Time, Type: wire.HEPTypeSIP, Payload: raw}) {
		e.sip.Add(1)
	}
}

// report queues the SR and RR reports of one RTCP datagram of callID.
func (e *Exporter) report(d *netdecode.Datagram, callID string) {
	rs, err := rtp.ParseRTCP(d.Payload)
	if err != nil && len(rs) == 0 {
		e.drop(DropUnencodable)
		return
	}
	for _, r := range rs {
		j, err := RTCPJSON(r)
		if err != nil {
			e.drop(DropUnencodable)
			continue
		}
		if e.enqueue(&wire.HEPPacket{Src: d.Src, Dst: d.Dst, Proto: wire.HEPProtoUDP, Time: d.Time, Type: wire.HEPTypeRTCP, Correlation: callID, Payload: j}) {
			e.rtcp.Add(1)
		}
	}
}

// enqueue encodes p and queues it, or counts why not. It never blocks.
func (e *Exporter) enqueue(p *wire.HEPPacket) bool {
	p.CaptureID, p.AuthKey, p.Node = e.o.CaptureID, e.o.AuthKey, e.o.Node
	size := p.Size()
	if size > wire.HEPMaxPacket {
		e.drop(DropTooLarge)
		return false
	}
	if e.qBytes.Add(int64(size)) > int64(e.o.QueueBytes) {
		e.qBytes.Add(-int64(size))
		e.drop(DropQueueFull)
		return false
	}
	b, err := wire.AppendHEP(make([]byte, 0, size), p)
	if err != nil {
		e.qBytes.Add(-int64(size))
		e.drop(DropUnencodable)
		return false
	}
	select {
	case e.q <- b:
		return true
	default:
		e.qBytes.Add(-int64(size))
		e.drop(DropQueueFull)
		return false
	}
}

// Run sends queued packets until ctx ends, reopening the socket while
// the collector's name does not resolve.
func (e *Exporter) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		err := e.run1(ctx)
		e.connected.Store(false)
		if ctx.Err() != nil {
			break
		}
		e.o.Log.Warn("hep collector unreachable; retrying", "collector", e.o.Collector, "err", err, "in", redial)
		select {
		case <-ctx.Done():
		case <-time.After(redial):
		}
	}
	return nil
}

// run1 opens one socket and sends until ctx ends or the socket fails.
func (e *Exporter) run1(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", e.o.Collector)
	if err != nil {
		return fmt.Errorf("dial %s: %w", e.o.Collector, err)
	}
	defer conn.Close()
	e.connected.Store(true)
	e.o.Log.Info("exporting HEP", "collector", conn.RemoteAddr().String(), "capture_id", e.o.CaptureID, "rtcp", e.o.RTCP)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case b := <-e.q:
			e.qBytes.Add(-int64(len(b)))
			n, err := conn.Write(b)
			var ne net.Error
			switch {
			case err == nil:
				e.sent.Add(1)
				e.sentBytes.Add(uint64(n))
				e.connected.Store(true)
			case errors.As(err, &ne) && ne.Timeout():
				e.drop(DropSendError)
			default:
				// ECONNREFUSED after an ICMP port unreachable: the
				// collector is down; keep the socket, count the loss.
				e.drop(DropSendError)
				e.connected.Store(false)
			}
		}
	}
}
