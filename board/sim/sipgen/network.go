package sipgen

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
)

// Addresses come from the documentation ranges (RFC 5737 for IPv4, RFC 7042
// for MAC-48), so a generated capture never names a real network.
var (
	localNet  = [3]byte{192, 0, 2}    // the captured segment
	remoteNet = [3]byte{198, 51, 100} // behind the router
	macPrefix = [5]byte{0x00, 0x00, 0x5e, 0x00, 0x53}
)

const (
	hostsPerSide   = 8  // phones on each side of the router
	routerOctet    = 1  // the router's address on the captured segment
	firstHostOctet = 10 // phones take .10 upwards
	localExtBase   = 1000
	remoteExtBase  = 2000

	localTTL  = 64           // Linux default
	remoteTTL = localTTL - 1 // one router hop to the SPAN port

	sipPort    = 5060
	rtpPortMin = 10000 // RTP ports are even and in [rtpPortMin, rtpPortMax)
	rtpPortMax = 20000
)

// host is a phone as seen on the captured segment.
type host struct {
	ip      net.IP
	mac     net.HardwareAddr // its own when local, the router's when remote
	ttl     uint8            // IPv4 TTL as it reaches the SPAN port
	user    string           // the phone's extension
	agent   string           // User-Agent / Server value
	ipID    uint16           // next IPv4 identification
	nextRTP uint16           // next RTP port to hand out
}

// endpoint is a host and a UDP port.
type endpoint struct {
	h    *host
	port uint16
}

// datagram is one UDP payload between two endpoints.
type datagram struct {
	src, dst endpoint
	payload  []byte
}

// network holds the phones on both sides of the router.
type network struct {
	local, remote []*host
}

func newNetwork(r *rand.Rand) *network {
	router := macAddr(routerOctet)
	n := &network{}
	for i := range hostsPerSide {
		octet := byte(firstHostOctet + i)
		n.local = append(n.local, newHost(r, localNet, octet, macAddr(octet), localTTL,
			localExtBase+int(octet), "fieldtap-sipgen desk/1.0"))
		n.remote = append(n.remote, newHost(r, remoteNet, octet, router, remoteTTL,
			remoteExtBase+int(octet), "fieldtap-sipgen soft/1.0"))
	}
	return n
}

func newHost(r *rand.Rand, subnet [3]byte, octet byte, mac net.HardwareAddr, ttl uint8, ext int, agent string) *host {
	const rtpPorts = (rtpPortMax - rtpPortMin) / 2
	return &host{
		ip:      net.IPv4(subnet[0], subnet[1], subnet[2], octet).To4(),
		mac:     mac,
		ttl:     ttl,
		user:    fmt.Sprint(ext),
		agent:   agent,
		ipID:    uint16(r.Uint32()),
		nextRTP: uint16(rtpPortMin + 2*r.IntN(rtpPorts)),
	}
}

func macAddr(last byte) net.HardwareAddr {
	return net.HardwareAddr{macPrefix[0], macPrefix[1], macPrefix[2], macPrefix[3], macPrefix[4], last}
}

// rtpPort hands out the host's next even RTP port, so concurrent calls on one
// phone never share one.
func (h *host) rtpPort() uint16 {
	p := h.nextRTP
	h.nextRTP += 2
	if h.nextRTP >= rtpPortMax {
		h.nextRTP = rtpPortMin
	}
	return p
}

// Header sizes of the frames sipgen writes: Ethernet II without a VLAN
// tag, IPv4 without options, UDP.
const (
	ethHeaderLen  = 14
	ipv4HeaderLen = 20
	udpHeaderLen  = 8
	ethMinLen     = 60
	// maxPayload is the most a UDP datagram in one IPv4 packet can carry.
	maxPayload = 0xffff - ipv4HeaderLen - udpHeaderLen
)

// frame returns a fresh Ethernet/IPv4/UDP frame carrying d, with the IPv4
// header and UDP checksums set. The headers are written here rather than
// by a packet library: these three are all sipgen needs, and a library's
// table of every protocol would be linked into the daemon with it.
func frame(d datagram) ([]byte, error) {
	src, dst := d.src.h, d.dst.h
	if len(d.payload) > maxPayload {
		return nil, fmt.Errorf("sipgen: %v -> %v: a %d-byte payload does not fit one IPv4 packet (at most %d)", src.ip, dst.ip, len(d.payload), maxPayload)
	}
	srcIP, dstIP := src.ip.To4(), dst.ip.To4()
	if srcIP == nil || dstIP == nil {
		return nil, fmt.Errorf("sipgen: %v -> %v: not IPv4 addresses", src.ip, dst.ip)
	}
	ipLen := ipv4HeaderLen + udpHeaderLen + len(d.payload)
	// Ethernet pads a frame to its 60-byte minimum (64 with the FCS a
	// capture does not see); the padding follows the IPv4 packet.
	b := make([]byte, max(ethHeaderLen+ipLen, ethMinLen))

	copy(b[0:6], dst.mac)
	copy(b[6:12], src.mac)
	binary.BigEndian.PutUint16(b[12:14], etherTypeIPv4)

	ip := b[ethHeaderLen : ethHeaderLen+ipv4HeaderLen]
	ip[0] = 4<<4 | ipv4HeaderLen/4 // version, header length in words
	binary.BigEndian.PutUint16(ip[2:4], uint16(ipLen))
	binary.BigEndian.PutUint16(ip[4:6], src.ipID)
	binary.BigEndian.PutUint16(ip[6:8], ipv4DontFragment)
	ip[8] = src.ttl
	ip[9] = ipProtoUDP
	copy(ip[12:16], srcIP)
	copy(ip[16:20], dstIP)
	binary.BigEndian.PutUint16(ip[10:12], ^fold(sum16(0, ip)))
	src.ipID++

	udp := b[ethHeaderLen+ipv4HeaderLen : ethHeaderLen+ipLen]
	binary.BigEndian.PutUint16(udp[0:2], d.src.port)
	binary.BigEndian.PutUint16(udp[2:4], d.dst.port)
	binary.BigEndian.PutUint16(udp[4:6], uint16(len(udp)))
	copy(udp[udpHeaderLen:], d.payload)
	// The UDP checksum covers a pseudo-header of addresses, protocol and
	// length (RFC 768); a computed zero is sent as all ones, since zero
	// means "no checksum".
	s := sum16(0, ip[12:20])
	s += ipProtoUDP + uint32(len(udp))
	c := ^fold(sum16(s, udp))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:8], c)
	return b, nil
}

const (
	etherTypeIPv4    = 0x0800
	ipProtoUDP       = 17
	ipv4DontFragment = 0x4000 // the DF bit of the flags and fragment offset
)

// sum16 adds b to s as big-endian 16-bit words, an odd last byte padded
// with zero: the one's-complement sum of RFC 1071 before folding.
func sum16(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// fold adds the carries of s back into its low 16 bits.
func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}
