package hepin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// Source is one hep port.
type Source struct {
	o        Options
	counters capture.Counters
	tcp      tcpSeqs
	// buffered is the bytes of frames handed off and not yet released.
	buffered atomic.Int64

	mu    sync.Mutex
	conns int // TCP connections being served
}

// New checks o and returns a port that listens once Run starts.
func New(o Options) (*Source, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Source{o: o, tcp: tcpSeqs{next: map[flowKey]uint32{}}}, nil
}

// Name implements capture.Source.
func (s *Source) Name() string { return s.o.Name }

// Kind implements capture.Source: its frames are IP packets for the SPAN
// analysers.
func (s *Source) Kind() capture.Kind { return capture.KindEthernet }

// Origin implements capture.Source; the auth key is never in it.
func (s *Source) Origin() string { return "hep:" + s.o.Listen }

// Live implements capture.Source.
func (s *Source) Live() bool { return true }

// Stats implements capture.Source.
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Causes implements capture.Causer.
func (s *Source) Causes() (dropCauses, errorNames []string) {
	return slices.Clone(drops), slices.Clone(errorReasons)
}

// Footprint implements capture.Sizer: a read buffer per TCP connection
// and one for UDP, and the frames waiting for the analysers, which never
// pass buffer_bytes.
func (s *Source) Footprint() capture.Footprint {
	return capture.Footprint{Heap: int64(s.o.MaxConnections+1)*int64(s.o.MaxFrame+1) + int64(s.o.BufferBytes)}
}

// Run implements capture.Source: one attempt binds both listeners and
// serves until ctx ends or a listener fails.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	var lc net.ListenConfig
	udp, err := lc.ListenPacket(ctx, "udp", s.o.Listen)
	if err != nil {
		return fmt.Errorf("hep port %s: listen udp %s: %w", s.o.Name, s.o.Listen, err)
	}
	tcp, err := lc.Listen(ctx, "tcp", s.o.Listen)
	if err != nil {
		udp.Close()
		return fmt.Errorf("hep port %s: listen tcp %s: %w", s.o.Name, s.o.Listen, err)
	}
	s.counters.Opened(time.Now())
	defer s.counters.Closed()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Go(func() { errs <- s.serveUDP(udp, out) })
	wg.Go(func() { errs <- s.serveTCP(actx, tcp, out, &wg) })
	wg.Go(func() {
		<-actx.Done()
		udp.Close()
		tcp.Close()
	})
	var first error
	select {
	case <-ctx.Done():
	case first = <-errs:
	}
	cancel()
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("hep port %s: %w", s.o.Name, first)
}

// serveUDP takes one packet per datagram until the socket is closed.
func (s *Source) serveUDP(c net.PacketConn, out *capture.Handoff) error {
	// One byte more than max_frame tells a datagram past it.
	buf := make([]byte, s.o.MaxFrame+1)
	var m wire.HEPMessage
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			return fmt.Errorf("udp: %w", err)
		}
		if n > s.o.MaxFrame {
			s.counters.Drop(DropTooLarge, 1)
			continue
		}
		s.take(buf[:n], &m, out)
	}
}

// serveTCP accepts connections up to max_connections until the listener
// is closed; each is served on its own goroutine in wg.
func (s *Source) serveTCP(ctx context.Context, l net.Listener, out *capture.Handoff, wg *sync.WaitGroup) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return fmt.Errorf("tcp: %w", err)
		}
		s.mu.Lock()
		full := s.conns >= s.o.MaxConnections
		if !full {
			s.conns++
		}
		s.mu.Unlock()
		if full {
			s.counters.Error(ErrConnectionCap)
			c.Close()
			continue
		}
		wg.Go(func() {
			defer func() {
				s.mu.Lock()
				s.conns--
				s.mu.Unlock()
			}()
			s.serveConn(ctx, c, out)
		})
	}
}

// serveConn reads packets framed by their length field until the peer
// closes, the port stops, or the framing is lost (a packet that is not
// HEP3 or is past max_frame: nothing after it can be found).
func (s *Source) serveConn(ctx context.Context, c net.Conn, out *capture.Handoff) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	buf := make([]byte, s.o.MaxFrame)
	var m wire.HEPMessage
	for {
		if _, err := io.ReadFull(c, buf[:wire.HEPHeaderLen]); err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				s.counters.Error(ErrRead)
			}
			return
		}
		n, err := wire.HEPLength(buf[:wire.HEPHeaderLen])
		if err != nil {
			s.counters.Drop(cause(err), 1)
			return
		}
		if n > s.o.MaxFrame {
			s.counters.Drop(DropTooLarge, 1)
			return
		}
		if _, err := io.ReadFull(c, buf[wire.HEPHeaderLen:n]); err != nil {
			if ctx.Err() == nil {
				s.counters.Drop(wire.HEPShort, 1)
			}
			return
		}
		s.take(buf[:n], &m, out)
	}
}

// cause is the drop cause of a decoding error.
func cause(err error) string {
	var he *wire.HEPError
	if errors.As(err, &he) {
		return he.Cause
	}
	return wire.HEPBadLength
}

// take decodes one packet, checks it against the port's key and
// allow-list, and offers its frame; whatever is refused is counted.
func (s *Source) take(b []byte, m *wire.HEPMessage, out *capture.Handoff) {
	if err := wire.DecodeHEP(b, m); err != nil {
		s.counters.Drop(cause(err), 1)
		return
	}
	if m.Unknown > 0 {
		s.counters.Error(ErrUnknownChunk)
	}
	if s.o.AuthKey != "" && (m.AuthKey == nil || subtle.ConstantTimeCompare(m.AuthKey, []byte(s.o.AuthKey)) != 1) {
		s.counters.Drop(DropAuthRefused, 1)
		return
	}
	if len(s.o.CaptureIDs) > 0 && (!m.HasCaptureID || !slices.Contains(s.o.CaptureIDs, m.CaptureID)) {
		s.counters.Drop(DropCaptureIDRefused, 1)
		return
	}
	if m.KeepAlive && m.Payload == nil {
		s.counters.Error(ErrKeepAlive)
		return
	}
	payload := m.Payload
	switch m.Type {
	case wire.HEPTypeSIP, wire.HEPTypeRTP:
	case wire.HEPTypeRTCP:
		if !isRawRTCP(payload) {
			raw, err := rtcpFromJSON(payload)
			if err != nil {
				s.counters.Drop(DropBadRTCP, 1)
				return
			}
			payload = raw
		}
	default:
		s.counters.Drop(DropUnsupportedType, 1)
		return
	}
	if m.Proto != wire.HEPProtoUDP && m.Proto != wire.HEPProtoTCP {
		s.counters.Drop(DropUnsupportedProto, 1)
		return
	}
	size := int64(frameLen(m, payload))
	if size > maxIPPayload+ipv6Header {
		s.counters.Drop(DropTooLarge, 1)
		return
	}
	if s.buffered.Add(size) > int64(s.o.BufferBytes) {
		s.buffered.Add(-size)
		s.counters.Drop(DropBufferFull, 1)
		return
	}
	f, ok := s.frame(m, payload)
	if !ok {
		s.buffered.Add(-size)
		s.counters.Drop(DropTooLarge, 1)
		return
	}
	// One frame a batch, so its bytes leave buffer_bytes when the
	// analysers release it (or the hand-off drops it).
	out.OfferBatch(capture.NewBatch([]capture.Frame{f}, func() { s.buffered.Add(-size) }))
}

var (
	_ capture.Source = (*Source)(nil)
	_ capture.Causer = (*Source)(nil)
	_ capture.Sizer  = (*Source)(nil)
)
