package hepin

import (
	"encoding/binary"
	"net/netip"
	"sync"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// Header sizes put around a payload.
const (
	ipv4Header = 20
	ipv6Header = 40
	udpHeader  = 8
	tcpHeader  = 20
	// maxIPPayload is what an IP length field can say: 65535 bytes for
	// IPv4's total length, for IPv6's payload length.
	maxIPPayload = 65535
)

// frameLen is the length of the frame built around payload.
func frameLen(m *wire.HEPMessage, payload []byte) int {
	n := udpHeader + len(payload)
	if m.Proto == wire.HEPProtoTCP {
		n = tcpHeader + len(payload)
	}
	if m.Src.Addr().Is4() {
		return ipv4Header + n
	}
	return ipv6Header + n
}

// frame builds the raw IP packet the agent saw: its addresses, ports and
// transport around the payload, stamped with the agent's capture time.
// It reports false when the packet would not fit an IP length field.
func (s *Source) frame(m *wire.HEPMessage, payload []byte) (capture.Frame, bool) {
	l4 := udpHeader
	if m.Proto == wire.HEPProtoTCP {
		l4 = tcpHeader
	}
	v4 := m.Src.Addr().Is4()
	ipLen := ipv6Header
	if v4 {
		ipLen = ipv4Header
	}
	if (v4 && ipLen+l4+len(payload) > maxIPPayload) || (!v4 && l4+len(payload) > maxIPPayload) {
		return capture.Frame{}, false
	}
	b := make([]byte, ipLen+l4+len(payload))
	if v4 {
		putIPv4(b, m, l4+len(payload))
	} else {
		putIPv6(b, m, l4+len(payload))
	}
	seg := b[ipLen:]
	binary.BigEndian.PutUint16(seg[0:], m.Src.Port())
	binary.BigEndian.PutUint16(seg[2:], m.Dst.Port())
	if m.Proto == wire.HEPProtoTCP {
		seq, evicted := s.tcp.take(m.Src, m.Dst, len(payload))
		if evicted {
			s.counters.Error(ErrTCPFlowsFull)
		}
		binary.BigEndian.PutUint32(seg[4:], seq)
		seg[12] = tcpHeader / 4 << 4
		seg[13] = 0x18 // PSH, ACK
		binary.BigEndian.PutUint16(seg[14:], 0xffff)
	} else {
		binary.BigEndian.PutUint16(seg[4:], uint16(udpHeader+len(payload)))
	}
	copy(seg[l4:], payload)
	return capture.Frame{Time: m.Time, Link: wire.LinkRaw, Data: b, OrigLen: len(b)}, true
}

func putIPv4(b []byte, m *wire.HEPMessage, rest int) {
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(ipv4Header+rest))
	b[8] = 64
	b[9] = m.Proto
	s, d := m.Src.Addr().As4(), m.Dst.Addr().As4()
	copy(b[12:], s[:])
	copy(b[16:], d[:])
	var sum uint32
	for i := 0; i < ipv4Header; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(b[10:], ^uint16(sum))
}

func putIPv6(b []byte, m *wire.HEPMessage, rest int) {
	b[0] = 0x60
	binary.BigEndian.PutUint16(b[4:], uint16(rest))
	b[6] = m.Proto
	b[7] = 64
	s, d := m.Src.Addr().As16(), m.Dst.Addr().As16()
	copy(b[8:], s[:])
	copy(b[24:], d[:])
}

// flowKey is one direction of a TCP connection the agent saw.
type flowKey struct{ src, dst netip.AddrPort }

// tcpSeqs numbers the bytes of each SIP over TCP direction, so the
// analyser's reassembly reads consecutive messages as one stream, as it
// would on the wire. HEP carries no sequence numbers of its own.
type tcpSeqs struct {
	mu   sync.Mutex
	next map[flowKey]uint32
}

// take returns the sequence number of n bytes of src→dst and advances
// it. A new flow past maxTCPFlows empties the table first (evicted):
// the flows forgotten start again where the analyser sees a gap.
func (t *tcpSeqs) take(src, dst netip.AddrPort, n int) (seq uint32, evicted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := flowKey{src, dst}
	seq, ok := t.next[k]
	if !ok && len(t.next) >= maxTCPFlows {
		clear(t.next)
		evicted = true
	}
	t.next[k] = seq + uint32(n)
	return seq, evicted
}
